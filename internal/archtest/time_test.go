package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// parsed parses every non-test file of the patterns; the key is the path
// relative to the module root.
func parsed(t *testing.T, patterns ...string) map[string]*ast.File {
	t.Helper()
	fset := token.NewFileSet()
	out := map[string]*ast.File{}
	for _, p := range patterns {
		dirs := listDirs(t, p)
		for pkg, files := range list(t, p, "GoFiles") {
			for _, name := range files {
				path := filepath.Join(dirs[pkg], name)
				f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
				if err != nil {
					t.Fatalf("parse %s: %v", path, err)
				}
				out[strings.TrimPrefix(pkg, mod)+"/"+name] = f
			}
		}
	}
	return out
}

// listDirs maps each package of a pattern to its directory.
func listDirs(t *testing.T, pattern string) map[string]string {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}\t{{.Dir}}", mod+pattern).Output()
	if err != nil {
		t.Fatalf("go list %s: %v", pattern, err)
	}
	res := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if pkg, dir, ok := strings.Cut(line, "\t"); ok {
			res[pkg] = dir
		}
	}
	return res
}

// timeDriven are the functions of package time that wait or read the
// clock: server code asks its clock.Clock instead, so tests and the
// simulator can run it on a fake clock.
var timeDriven = map[string]bool{"Now": true, "Since": true, "Until": true, "Sleep": true, "After": true,
	"AfterFunc": true, "NewTimer": true, "NewTicker": true, "Tick": true}

// timeAllowed lists the calls that stay on package time, as
// "file.go:time.Func", each with its reason.
var timeAllowed = map[string]string{
	// (none today; a network deadline belongs here, with its reason)
}

func TestTimeThroughTheClock(t *testing.T) {
	for path, f := range parsed(t, "internal/controller", "internal/service", "internal/sched/...") {
		name := timeImportName(f)
		if name == "" {
			continue
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if id, ok := sel.X.(*ast.Ident); ok && id.Name == name && timeDriven[sel.Sel.Name] {
				if _, ok := timeAllowed[filepath.Base(path)+":time."+sel.Sel.Name]; !ok {
					t.Errorf("%s calls time.%s; use the injected clock.Clock (internal/clock)", path, sel.Sel.Name)
				}
			}
			return true
		})
	}
}

// timeImportName is the name package time has in f ("" if not imported).
func timeImportName(f *ast.File) string {
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == "time" {
			if imp.Name != nil {
				return imp.Name.Name
			}
			return "time"
		}
	}
	return ""
}
