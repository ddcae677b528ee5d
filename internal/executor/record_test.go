//go:build unix

package executor

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestWriteRecord(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "pgid")
	if err := WriteRecord(p, []byte("1234"), 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(p)
	if err != nil || st.Mode().Perm()&^0o600 != 0 {
		t.Fatalf("created: %v %v", st, err)
	}
	// Longer content left in place (not emptied first) must not survive
	// behind shorter new content.
	if err := os.WriteFile(p, []byte("9876543210"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteRecord(p, []byte("42"), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "42" {
		t.Fatalf("content %q, want 42", b)
	}
	if err := EmptyRecord(p); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(p); err != nil || len(b) != 0 {
		t.Fatalf("emptied: %q %v", b, err)
	}
	if err := WriteRecord(p, []byte("77"), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "77" {
		t.Fatalf("content %q, want 77", b)
	}
	// Missing: nothing to empty, nothing created.
	if err := EmptyRecord(filepath.Join(dir, "none")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "none")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("EmptyRecord created a file: %v", err)
	}
	// Never through a link: the target stays as it was.
	target := filepath.Join(dir, "target")
	if err := os.WriteFile(target, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if err := WriteRecord(link, []byte("x"), 0o600); !errors.Is(err, syscall.ELOOP) {
		t.Fatalf("WriteRecord through a link: %v, want ELOOP", err)
	}
	if err := EmptyRecord(link); !errors.Is(err, syscall.ELOOP) {
		t.Fatalf("EmptyRecord through a link: %v, want ELOOP", err)
	}
	if b, _ := os.ReadFile(target); string(b) != "keep" {
		t.Fatalf("target changed: %q", b)
	}
}
