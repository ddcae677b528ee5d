package agent

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// userSpool is a spool as on a node: root's, the user may pass through.
func userSpool(t *testing.T) string {
	t.Helper()
	spool := t.TempDir()
	for _, d := range []string{spool, filepath.Dir(spool)} {
		if err := os.Chmod(d, 0o711); err != nil {
			t.Fatal(err)
		}
	}
	return spool
}

// kept waits (bounded) until the trash workers kept n directories.
func (a *Agent) waitKept(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		a.jobDirs.mu.Lock()
		got := a.jobDirs.n
		a.jobDirs.mu.Unlock()
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 10 s: %d directories kept, want %d", got, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitGone waits (bounded) until nothing discarded is left in spool.
func waitGone(t *testing.T, spool string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for countGone(t, spool) != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("after 10 s: %d discarded directories left", countGone(t, spool))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func inode(t *testing.T, p string) uint64 {
	t.Helper()
	st, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	return st.Sys().(*syscall.Stat_t).Ino
}

// TestJobDirReuse: a finished job's spool directory, once its processes
// are gone, is kept with an emptied script for the same user's next job,
// which rewrites that script in place; another user, a job whose
// processes may remain, or a directory the job left something in gets a
// new one.
func TestJobDirReuse(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the agent's identity switch")
	}
	const uid, gid = 65534, 65534
	a := &Agent{spool: userSpool(t)}
	a.startTrash()
	dir, reused, err := a.jobDir(1, uid, gid)
	if err != nil || reused {
		t.Fatalf("first job: %v reused=%v", err, reused)
	}
	script, err := writeScript(dir, "#!/bin/sh\necho first job, a longer script\n", uid, gid, nil)
	if err != nil {
		t.Fatal(err)
	}
	dirIno, scriptIno := inode(t, dir), inode(t, script)
	a.discardJobDir(dir, uid, gid, true)
	if _, err := os.Lstat(dir); !os.IsNotExist(err) {
		t.Fatalf("job 1's directory still at its path: %v", err)
	}
	a.waitKept(t, 1)
	for _, ds := range a.jobDirs.dirs {
		if st, err := os.Stat(filepath.Join(ds[0], scriptName)); err != nil || st.Size() != 0 {
			t.Fatalf("kept script not emptied: %v %v", st, err)
		}
	}

	// Another user's job does not get it.
	other, reused, err := a.jobDir(2, 1, 1)
	if err != nil || reused || inode(t, other) == dirIno {
		t.Fatalf("another user's job: %v reused=%v", err, reused)
	}
	a.discardJobDir(other, 1, 1, false)

	dir3, reused, err := a.jobDir(3, uid, gid)
	if err != nil || !reused || inode(t, dir3) != dirIno || dir3 != jobDirPath(a.spool, 3) {
		t.Fatalf("same user's next job: %s %v reused=%v", dir3, err, reused)
	}
	script3, err := rewriteScript(dir3, "#!/bin/sh\necho 3\n", uid, gid, nil)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(script3); string(b) != "#!/bin/sh\necho 3\n" || inode(t, script3) != scriptIno {
		t.Fatalf("rewritten script: %q (same file: %v)", b, inode(t, script3) == scriptIno)
	}
	st, _ := os.Lstat(script3)
	if st.Sys().(*syscall.Stat_t).Uid != uid || st.Mode().Perm() != 0o700 {
		t.Fatalf("rewritten script: %v owner %d", st.Mode(), st.Sys().(*syscall.Stat_t).Uid)
	}

	// Something left by the job: removed, not kept.
	if err := os.WriteFile(filepath.Join(dir3, "left"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	a.discardJobDir(dir3, uid, gid, true)
	// Processes possibly left (its cgroup could not be removed): removed.
	dir4, _, _ := a.jobDir(4, uid, gid)
	a.discardJobDir(dir4, uid, gid, false)
	waitGone(t, a.spool)
	a.waitKept(t, 0)
	if ents, _ := os.ReadDir(a.spool); len(ents) != 0 {
		t.Fatalf("left in the spool: %v", ents)
	}
}

// TestJobDirReuseHostile: what a user may do to a kept directory (it is
// theirs, and its .gone- path reachable) never gets root to write through
// it, and never blocks the agent: a symlink, a hard link to another file
// of theirs, a FIFO or a changed mode in place of the script makes the
// next job's directory afresh.
func TestJobDirReuseHostile(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the agent's identity switch")
	}
	const uid, gid = 65534, 65534
	secret := filepath.Join(t.TempDir(), "root-only")
	if err := os.WriteFile(secret, []byte("root's\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	theirs := filepath.Join(userSpool(t), "theirs")
	if err := os.WriteFile(theirs, []byte("theirs\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(theirs, uid, gid); err != nil {
		t.Fatal(err)
	}
	plant := map[string]func(p string) error{
		"symlink":   func(p string) error { return os.Symlink(secret, p) },
		"hard link": func(p string) error { return os.Link(theirs, p) },
		"fifo":      func(p string) error { return syscall.Mkfifo(p, 0o700) },
		"mode": func(p string) error {
			if err := os.WriteFile(p, nil, 0o700); err != nil {
				return err
			}
			if err := os.Chown(p, uid, gid); err != nil {
				return err
			}
			return os.Chmod(p, 0o755)
		},
	}
	for name, fn := range plant {
		t.Run(name, func(t *testing.T) {
			a := &Agent{spool: userSpool(t)}
			a.startTrash()
			dir, _, err := a.jobDir(1, uid, gid)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := writeScript(dir, "#!/bin/sh\n", uid, gid, nil); err != nil {
				t.Fatal(err)
			}
			a.discardJobDir(dir, uid, gid, true)
			a.waitKept(t, 1)
			var kept string
			for _, ds := range a.jobDirs.dirs {
				kept = ds[0]
			}
			if kept == "" {
				t.Fatal("nothing kept")
			}
			p := filepath.Join(kept, scriptName)
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
			if err := fn(p); err != nil {
				t.Fatal(err)
			}
			dir2, reused, err := a.jobDir(2, uid, gid)
			if err != nil || !reused {
				t.Fatalf("kept directory not taken: %v reused=%v", err, reused)
			}
			done := make(chan error, 1)
			go func() { _, err := rewriteScript(dir2, "#!/bin/sh\necho owned\n", uid, gid, nil); done <- err }()
			select {
			case err := <-done:
				if err == nil {
					t.Fatal("the script was rewritten over a planted " + name)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("rewriting the script blocked for 10 s")
			}
			if b, _ := os.ReadFile(secret); string(b) != "root's\n" {
				t.Fatalf("root's file written: %q", b)
			}
			if b, _ := os.ReadFile(theirs); string(b) != "theirs\n" {
				t.Fatalf("the user's other file written: %q", b)
			}
			// The hook's fallback: a new directory, a new script.
			dir2, err = newJobDir(a.spool, 2, uid, gid)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := writeScript(dir2, "#!/bin/sh\n", uid, gid, nil); err != nil {
				t.Fatal(err)
			}
		})
	}
	// A kept directory whose mode the user changed is not taken.
	a := &Agent{spool: userSpool(t)}
	a.startTrash()
	dir, _, _ := a.jobDir(1, uid, gid)
	a.discardJobDir(dir, uid, gid, true)
	a.waitKept(t, 1)
	for _, ds := range a.jobDirs.dirs {
		if err := os.Chmod(ds[0], 0o755); err != nil {
			t.Fatal(err)
		}
	}
	dir2, reused, err := a.jobDir(2, uid, gid)
	if err != nil || reused {
		t.Fatalf("a kept directory with mode 0755 was taken: %v reused=%v", err, reused)
	}
	if st, _ := os.Lstat(dir2); st.Mode().Perm() != 0o700 {
		t.Fatalf("new directory mode %v", st.Mode())
	}
}
