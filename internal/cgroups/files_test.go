package cgroups

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestAtSameAsPaths: files read, written and stat'ed through an at (each
// opened relative to its directory's descriptor) are the ones the whole
// path names, errors included; a missing directory fails as its path does.
func TestAtSameAsPaths(t *testing.T) {
	root := t.TempDir()
	sub := filepath.Join(root, "job_1", "step_batch")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct{ dir, name, val string }{
		{root, "memory.usage_in_bytes", "4096\n"}, {sub, "memory.oom_control", "oom_kill_disable 0\noom_kill 2\n"},
	} {
		if err := os.WriteFile(filepath.Join(f.dir, f.name), []byte(f.val), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var a at
	defer a.close()
	if n, err := a.readInt(root, "memory.usage_in_bytes"); err != nil || n != 4096 {
		t.Errorf("readInt: %d %v", n, err)
	}
	if oc, err := a.readKeyed(sub, "memory.oom_control"); err != nil || oc["oom_kill"] != 2 {
		t.Errorf("readKeyed: %v %v", oc, err)
	}
	if err := a.writeFile(sub, "memory.oom_control", "x"); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(sub, "memory.oom_control")); string(b) != "x" {
		t.Errorf("written through the at: %q", b)
	}
	var st1, st2 syscall.Stat_t
	if err := a.stat(filepath.Join(root, "job_1"), &st1); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Stat(filepath.Join(root, "job_1"), &st2); err != nil {
		t.Fatal(err)
	}
	if st1.Ino != st2.Ino || st1.Nlink != 3 {
		t.Errorf("stat through the at: ino %d nlink %d, by path ino %d", st1.Ino, st1.Nlink, st2.Ino)
	}
	missing := filepath.Join(root, "job_2")
	_, errAt := a.readFile(missing, "tasks")
	_, errPath := readFile(missing, "tasks")
	var pe *os.PathError
	if !errors.Is(errAt, os.ErrNotExist) || !errors.As(errAt, &pe) || pe.Path != filepath.Join(missing, "tasks") ||
		errAt.Error() != errPath.Error() {
		t.Errorf("missing directory: %v, by path %v", errAt, errPath)
	}
	if a.exists(missing) || !a.exists(sub) {
		t.Error("exists")
	}
	if _, err := a.readFile(root, "nope"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}
