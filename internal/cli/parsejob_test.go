package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestProcessUmaskReadsTheProcesssUmask(t *testing.T) {
	old := syscall.Umask(0o027)
	defer syscall.Umask(old)
	if m, ok := processUmask(); !ok || m != 0o027 {
		t.Fatalf("processUmask = %04o, %v; want 0027", m, ok)
	}
}

func TestReadProcFileReadsPastItsFirstBuffer(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big")
	want := bytes.Repeat([]byte("0123456789abcdef"), 1000) // 16,000 bytes: four buffers
	if err := os.WriteFile(path, want, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := readProcFile(path)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("readProcFile: %d bytes, %v; want %d bytes", len(got), err, len(want))
	}
	if _, err := readProcFile(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Fatal("readProcFile of a missing file: no error")
	}
}
