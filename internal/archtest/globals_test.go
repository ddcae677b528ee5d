package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"testing"
)

// TestCommandTestsInjectNotSwap: tests of the commands (internal/cli/...)
// never assign a package-level variable of the code under test. What a
// command asks the operating system (uid, user and group names, the launch
// address) comes through cli.Env's Host, which a test fakes on the Env it
// builds; a swapped global leaks between tests and forbids t.Parallel.
func TestCommandTestsInjectNotSwap(t *testing.T) {
	fset := token.NewFileSet()
	dirs := listDirs(t, "internal/cli/...")
	code := list(t, "internal/cli/...", "GoFiles")
	tests := list(t, "internal/cli/...", "TestGoFiles")
	for pkg, files := range code {
		vars := map[string]bool{}
		for _, name := range files {
			f, err := parser.ParseFile(fset, filepath.Join(dirs[pkg], name), nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range f.Decls {
				if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.VAR {
					for _, s := range g.Specs {
						for _, id := range s.(*ast.ValueSpec).Names {
							vars[id.Name] = true
						}
					}
				}
			}
		}
		for _, name := range tests[pkg] {
			path := filepath.Join(dirs[pkg], name)
			// With object resolution, a name declared in the test file
			// (locally or at its top level) resolves; one of the package's
			// other files stays unresolved.
			f, err := parser.ParseFile(fset, path, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(f, func(n ast.Node) bool {
				as, ok := n.(*ast.AssignStmt)
				if !ok || as.Tok != token.ASSIGN {
					return true
				}
				for _, lhs := range as.Lhs {
					if id, ok := lhs.(*ast.Ident); ok && id.Obj == nil && vars[id.Name] {
						t.Errorf("%s: assigns package variable %s; inject it through cli.Env (Host) instead",
							fset.Position(id.Pos()), id.Name)
					}
				}
				return true
			})
		}
	}
}
