package auth

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A CA certificate without its key must not turn into a new CA: every
// node that joined under the old one would be locked out.
func TestCAMissingKeyRefused(t *testing.T) {
	dir := t.TempDir()
	ca, err := LoadOrCreateCA(dir, "c")
	if err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(filepath.Join(dir, "ca.crt"))
	if err := os.Remove(filepath.Join(dir, "ca.key")); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadOrCreateCA(dir, "c"); err == nil || !strings.Contains(err.Error(), "restore ca.key") {
		t.Fatalf("missing key: %v", err)
	}
	after, _ := os.ReadFile(filepath.Join(dir, "ca.crt"))
	if string(before) != string(after) || ca == nil {
		t.Error("the CA certificate was replaced")
	}
}
