package sched

import (
	"errors"
	"go/build"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/drover-hpc/drover"

// impure are standard packages the scheduler must not use: it is a pure
// function of its input and a clock value (see doc.go). No clock, no
// randomness, no files, processes, network or databases.
var impure = []string{
	"crypto/rand", "database/sql", "math/rand", "math/rand/v2", "net",
	"os", "os/exec", "os/signal", "syscall", "time", "unsafe",
}

// testSupport packages are helpers for tests and the simulator, not the
// scheduler: they may take a caller's *rand.Rand.
var testSupport = map[string][]string{"schedtest": {"math/rand"}}

// TestImportRules fails if any package under internal/sched imports
// something other than the standard library, internal/model and
// internal/sched itself, or (outside tests) an impure standard package.
func TestImportRules(t *testing.T) {
	err := filepath.WalkDir(".", func(dir string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if base := d.Name(); dir != "." && (base == "testdata" || strings.HasPrefix(base, ".") || strings.HasPrefix(base, "_")) {
			return filepath.SkipDir
		}
		pkg, err := build.Default.ImportDir(dir, 0)
		if _, none := errors.AsType[*build.NoGoError](err); none {
			return nil
		}
		if err != nil {
			return err
		}
		name := filepath.ToSlash(filepath.Join("internal/sched", dir))
		allowed := testSupport[filepath.Base(dir)]
		for _, imp := range pkg.Imports {
			checkImport(t, name, imp)
			if isImpure(imp) && !slices.Contains(allowed, imp) {
				t.Errorf("%s imports %q: the scheduler must stay pure (no clock, randomness or I/O)", name, imp)
			}
		}
		for _, imp := range append(pkg.TestImports, pkg.XTestImports...) {
			checkImport(t, name+" (tests)", imp)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func checkImport(t *testing.T, from, imp string) {
	t.Helper()
	first, _, _ := strings.Cut(imp, "/")
	stdlib := !strings.Contains(first, ".")
	own := func(p string) bool { return imp == module+p || strings.HasPrefix(imp, module+p+"/") }
	if !stdlib && !own("/internal/model") && !own("/internal/sched") {
		t.Errorf("%s imports %q: only the standard library, internal/model and internal/sched/... are allowed", from, imp)
	}
}

func isImpure(imp string) bool {
	for _, p := range impure {
		if imp == p || strings.HasPrefix(imp, p+"/") {
			return true
		}
	}
	return false
}
