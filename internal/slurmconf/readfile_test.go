package slurmconf

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Load's plain read says what os.Open and os.File would (the commands
// print these words), and reads whole files, sized or not.
func TestReadFileAsOS(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "none.conf")
	_, want := os.Open(missing)
	if _, err := readFile(missing); err == nil || err.Error() != want.Error() || !os.IsNotExist(err) {
		t.Fatalf("missing file: %v, want %v", err, want)
	}
	f, _ := os.Open(dir)
	_, want = f.Read(make([]byte, 10))
	f.Close()
	if _, err := readFile(dir); err == nil || err.Error() != want.Error() {
		t.Fatalf("a directory: %v, want %v", err, want)
	}
	text := strings.Repeat("ClusterName=c # a comment\n", 2000)
	p := filepath.Join(dir, "slurm.conf")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := readFile(p); err != nil || string(b) != text {
		t.Fatalf("a %d-byte file: %d bytes, %v", len(text), len(b), err)
	}
	// /proc files report no size: the buffer grows as they are read.
	if b, err := readFile("/proc/self/status"); err != nil || !strings.Contains(string(b), "\nUmask:") {
		t.Fatalf("/proc/self/status: %q, %v", b, err)
	}
}
