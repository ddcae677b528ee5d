package agent

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/drover-hpc/drover/internal/model"
)

// A user who plants a symlink where the batch script goes (in a spool
// directory left by an earlier run, or by racing the agent) gets nothing
// written through it: the directory is made afresh, and the script is
// created by the user's own rights, exclusively, without following links.
func TestBatchScriptSymlinkAttack(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the agent's identity switch")
	}
	const uid, gid = 65534, 65534
	spool := t.TempDir()
	// The user must reach the spool, as on a node (the script runs there).
	for _, d := range []string{spool, filepath.Dir(spool)} {
		if err := os.Chmod(d, 0o711); err != nil {
			t.Fatal(err)
		}
	}
	secret := filepath.Join(t.TempDir(), "root-only")
	if err := os.WriteFile(secret, []byte("root's\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A leftover job directory of the user, with the script's name
	// pointing at a file of root's.
	left := filepath.Join(spool, "job7")
	if err := os.Mkdir(left, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(left, scriptName)); err != nil {
		t.Fatal(err)
	}
	if err := os.Lchown(left, uid, gid); err != nil {
		t.Fatal(err)
	}
	dir, err := newJobDir(spool, 7, uid, gid)
	if err != nil {
		t.Fatal(err)
	}
	path, err := writeScript(dir, "#!/bin/sh\necho owned\n", uid, gid, nil)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(secret); string(b) != "root's\n" {
		t.Fatalf("root's file was written through the symlink: %q", b)
	}
	st, err := os.Lstat(path)
	if err != nil || !st.Mode().IsRegular() || st.Sys().(*syscall.Stat_t).Uid != uid || st.Mode().Perm() != 0o700 {
		t.Fatalf("script %s: %v %v", path, st.Mode(), err)
	}
	if d, _ := os.Lstat(dir); d.Sys().(*syscall.Stat_t).Uid != uid || d.Mode().Perm() != 0o700 {
		t.Errorf("job directory: %v owner %d", d.Mode(), d.Sys().(*syscall.Stat_t).Uid)
	}

	// A link planted after the directory was made: the write refuses it.
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, path); err != nil {
		t.Fatal(err)
	}
	if _, err := writeScript(dir, "#!/bin/sh\n", uid, gid, nil); err == nil {
		t.Error("the script was written where a symlink stood")
	}
	if b, _ := os.ReadFile(secret); string(b) != "root's\n" {
		t.Fatalf("root's file was written through the symlink: %q", b)
	}
	// As the user, the write has only the user's rights: a directory the
	// user cannot write refuses it even without a link.
	rootDir := t.TempDir()
	if _, err := writeScript(rootDir, "#!/bin/sh\n", uid, gid, nil); err == nil {
		t.Error("the script was written with root's rights into root's directory")
	}
}

// Lines the agent adds to a job's output file (errors, the OOM notice) go
// there with the user's rights: never through a link, never into a file
// the user cannot write, never creating one.
func TestAppendFileAsUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the agent's identity switch")
	}
	const uid = 65534
	dir := t.TempDir()
	for _, d := range []string{dir, filepath.Dir(dir)} {
		if err := os.Chmod(d, 0o711); err != nil {
			t.Fatal(err)
		}
	}
	j := newJob(1, &model.Job{UserID: uid, GroupID: uid}, true)
	rootFile := filepath.Join(dir, "root-file")
	if err := os.WriteFile(rootFile, []byte("root's\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(rootFile, link); err != nil {
		t.Fatal(err)
	}
	users := filepath.Join(dir, "users.out")
	if err := os.WriteFile(users, []byte("out\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(users, uid, uid); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing")
	for _, p := range []string{rootFile, link, users, missing} {
		appendFile(j, p, "slurmstepd: error: note\nsecond line")
	}
	if b, _ := os.ReadFile(rootFile); string(b) != "root's\n" {
		t.Errorf("root's file was appended to: %q", b)
	}
	if b, _ := os.ReadFile(users); string(b) != "out\nslurmstepd: error: note second line\n" {
		t.Errorf("the user's file: %q", b)
	}
	if _, err := os.Lstat(missing); !os.IsNotExist(err) {
		t.Errorf("a missing file was created: %v", err)
	}
}
