package ctld

import (
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"
)

// The state directory holds every user's scripts, environments and submit
// lines (the Raft log, accounting.db) and the cluster's keys. The
// controller creates what it writes there for itself alone (umask 077);
// the directory itself stays searchable (0711) because the local socket
// lives in it, and the CA certificate stays readable (it is public).
// Group bits are left alone: a site may give an operator group read
// access (docs/security.md); other users' bits are removed at start-up,
// with a warning naming the path.
const (
	stateDirMode = 0o711
	// maxPermWarnings bounds the log lines of one start-up; the count of
	// the rest is logged.
	maxPermWarnings = 20
)

// secureStateDir creates dir if needed and takes away what other users
// could read or change in it.
func secureStateDir(dir string, log *slog.Logger) error {
	syscall.Umask(0o077)
	if err := os.MkdirAll(dir, stateDirMode); err != nil {
		return err
	}
	// Others must reach the socket: searchable whatever else was set.
	if st, err := os.Stat(dir); err == nil && st.Mode().Perm()&0o011 != 0o011 {
		_ = os.Chmod(dir, st.Mode().Perm()|0o011)
	}
	warned, fixed := 0, 0
	fix := func(path string, mode fs.FileMode, want fs.FileMode) {
		if err := os.Chmod(path, want); err != nil {
			log.Warn("state file readable by other users and cannot be fixed", "path", path, "mode", mode.Perm().String(), "err", err)
			return
		}
		fixed++
		if warned < maxPermWarnings {
			warned++
			log.Warn("state file was open to other users; fixed", "path", path, "was", mode.Perm().String(), "now", want.Perm().String())
		}
	}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // a file going away under us is not our concern
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		mode := info.Mode()
		switch {
		case mode&fs.ModeSocket != 0, mode&fs.ModeSymlink != 0:
			return nil
		case path == dir, path == filepath.Join(dir, "ca"):
			// Searchable, never listable or writable by others.
			if mode.Perm()&0o006 != 0 {
				fix(path, mode, mode.Perm()&^0o006)
			}
		case path == filepath.Join(dir, "ca", "ca.crt"):
			if mode.Perm()&0o002 != 0 {
				fix(path, mode, mode.Perm()&^0o002)
			}
		default:
			if mode.Perm()&0o007 != 0 {
				fix(path, mode, mode.Perm()&^0o007)
			}
		}
		return nil
	})
	if fixed > warned {
		log.Warn("more state files were open to other users; fixed", "count", fixed-warned)
	}
	return err
}

// publishCA keeps the CA certificate readable by local clients (the umask
// made it the controller's alone); the key stays 0600.
func publishCA(dir string) {
	_ = os.Chmod(dir, stateDirMode)
	_ = os.Chmod(filepath.Join(dir, "ca.crt"), 0o644)
}
