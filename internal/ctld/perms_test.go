package ctld

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestSecureStateDir(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	dir := filepath.Join(t.TempDir(), "state")
	for _, d := range []string{dir, filepath.Join(dir, "ca"), filepath.Join(dir, "raft")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]os.FileMode{"accounting.db": 0o644, "ca/ca.crt": 0o666, "ca/ca.key": 0o640, "raft/log": 0o604}
	for name, mode := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("x"), mode); err != nil {
			t.Fatal(err)
		}
		os.Chmod(p, mode)
	}
	var logs bytes.Buffer
	if err := secureStateDir(dir, slog.New(slog.NewTextHandler(&logs, nil))); err != nil {
		t.Fatal(err)
	}
	want := map[string]os.FileMode{".": 0o751, "ca": 0o751, "raft": 0o750, "accounting.db": 0o640, "ca/ca.crt": 0o664, "ca/ca.key": 0o640, "raft/log": 0o600}
	for name, mode := range want {
		st, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != mode {
			t.Errorf("%s: %v, want %v", name, st.Mode().Perm(), mode)
		}
	}
	if !strings.Contains(logs.String(), "accounting.db") || !strings.Contains(logs.String(), "fixed") {
		t.Errorf("no warning naming the file: %s", logs.String())
	}
	// What the controller creates from now on is its own.
	f := filepath.Join(dir, "new.db")
	if err := os.WriteFile(f, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(f); st.Mode().Perm() != 0o600 {
		t.Errorf("new state file %v, want 0600", st.Mode().Perm())
	}
}
