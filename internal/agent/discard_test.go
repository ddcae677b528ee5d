package agent

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestDiscard: a finished job's directory leaves its path at once (a new
// run may make it again) and is removed in the background; what an agent
// left behind is swept at the next start.
func TestDiscard(t *testing.T) {
	spool := t.TempDir()
	a := &Agent{}
	a.startTrash()
	dir := jobDirPath(spool, 7)
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{scriptName, "left-by-the-job"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	a.discard(dir, removeJobDir)
	if _, err := os.Lstat(dir); !os.IsNotExist(err) {
		t.Fatalf("%s still there after discard: %v", dir, err)
	}
	if _, err := newJobDir(spool, 7, uint32(os.Getuid()), uint32(os.Getgid())); err != nil {
		t.Fatalf("the next run's directory: %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		ents, _ := os.ReadDir(spool)
		if len(ents) == 1 && ents[0].Name() == "job7" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("discarded directory not removed within 10 s: %v", ents)
		}
		time.Sleep(10 * time.Millisecond)
	}

	left := filepath.Join(spool, gonePrefix+"3-job9")
	if err := os.MkdirAll(filepath.Join(left, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	sweepTrash(spool)
	if _, err := os.Lstat(left); !os.IsNotExist(err) {
		t.Errorf("leftover %s not swept: %v", left, err)
	}
	if _, err := os.Lstat(jobDirPath(spool, 7)); err != nil {
		t.Errorf("the sweep took a job's directory: %v", err)
	}
}

// TestSuperDirReuse: a discarded supervisor directory is emptied (its
// record and pgid truncated, the rest removed) and becomes the next
// record's directory; one holding anything unknown is removed instead,
// and a reused directory never brings old contents along.
func TestSuperDirReuse(t *testing.T) {
	spool := t.TempDir()
	a := &Agent{spool: spool}
	a.startTrash()
	super := filepath.Join(spool, "super")
	old, odd := a.superDir(1), a.superDir(2)
	for _, d := range []string{old, odd} {
		if err := a.newSuperDir(d); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"job.pb", "pgid", "result.json"} {
			if err := os.WriteFile(filepath.Join(d, f), []byte("x"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := os.WriteFile(filepath.Join(odd, "unknown"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	var oldIno, recordIno uint64
	if fi, err := os.Stat(old); err == nil {
		oldIno = fi.Sys().(*syscall.Stat_t).Ino
	}
	if fi, err := os.Stat(filepath.Join(old, "job.pb")); err == nil {
		recordIno = fi.Sys().(*syscall.Stat_t).Ino
	}
	a.discard(old, a.recycleSuperDir)
	a.discard(odd, a.recycleSuperDir)
	deadline := time.Now().Add(10 * time.Second)
	for len(a.superPool) != 1 || countGone(t, super) != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("after 10 s: %d kept, %d discarded directories left (want 1 and 1)", len(a.superPool), countGone(t, super))
		}
		time.Sleep(10 * time.Millisecond)
	}
	next := a.superDir(3)
	if err := a.newSuperDir(next); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(next)
	if err != nil {
		t.Fatal(err)
	}
	if ino := fi.Sys().(*syscall.Stat_t).Ino; ino != oldIno {
		t.Errorf("job 3's directory is inode %d, not the kept one (%d)", ino, oldIno)
	}
	if fi.Mode().Perm() != 0o700 {
		t.Errorf("reused directory mode %v", fi.Mode())
	}
	// Only the files every record rewrites stay, emptied, on their inodes.
	ents, _ := os.ReadDir(next)
	for _, e := range ents {
		fi, err := e.Info()
		if err != nil || !keptSuperFiles[e.Name()] || fi.Size() != 0 {
			t.Errorf("reused directory holds %s (%v, %v)", e.Name(), fi, err)
		}
	}
	if fi, err := os.Stat(filepath.Join(next, "job.pb")); err != nil || fi.Sys().(*syscall.Stat_t).Ino != recordIno {
		t.Errorf("job.pb not kept on its inode: %v", err)
	}
	if countGone(t, super) != 0 {
		t.Errorf("discarded directories left after the reuse")
	}
}

func countGone(t *testing.T, dir string) int {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), gonePrefix) {
			n++
		}
	}
	return n
}

// TestReusedDirWithoutRecord: an agent that stopped between taking a kept
// directory and writing the new record leaves an empty job.pb, which the
// next agent takes for no job (not for an empty one).
func TestReusedDirWithoutRecord(t *testing.T) {
	a := &Agent{spool: t.TempDir()}
	dir := a.superDir(5)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for f := range keptSuperFiles {
		if err := os.WriteFile(filepath.Join(dir, f), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if j, err := a.reattach(5, dir); err == nil {
		t.Fatalf("took back job %d from an empty record", j.id)
	}
	if orphanOf(dir) != nil {
		t.Error("an empty pgid file named a process group")
	}
}

// TestKeptSuperDirOverLeftover: a kept supervisor directory goes into
// place over an empty directory an earlier run left at the path (rename(2)
// replaces it); over one that holds something the directory is made afresh
// and the leftover's contents are gone. (A kept directory is told from a
// fresh one by its emptied job.pb: inode numbers are reused.)
func TestKeptSuperDirOverLeftover(t *testing.T) {
	spool := t.TempDir()
	a := &Agent{spool: spool}
	a.startTrash()
	keep := func(id uint32) {
		t.Helper()
		d := a.superDir(id)
		if err := a.newSuperDir(d); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "job.pb"), []byte("record"), 0o600); err != nil {
			t.Fatal(err)
		}
		a.discard(d, a.recycleSuperDir)
		deadline := time.Now().Add(10 * time.Second)
		for len(a.superPool) != 1 {
			if time.Now().After(deadline) {
				t.Fatalf("job %d's directory not kept within 10 s", id)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	names := func(dir string) []string {
		t.Helper()
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var n []string
		for _, e := range ents {
			n = append(n, e.Name())
		}
		return n
	}

	keep(1)
	empty := a.superDir(2)
	if err := os.Mkdir(empty, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := a.newSuperDir(empty); err != nil {
		t.Fatal(err)
	}
	if n := names(empty); len(n) != 1 || n[0] != "job.pb" {
		t.Errorf("over an empty leftover: holds %v, not the kept directory's emptied job.pb", n)
	}

	keep(3)
	full := a.superDir(4)
	if err := os.Mkdir(full, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(full, "result.json"), []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := a.newSuperDir(full); err != nil {
		t.Fatal(err)
	}
	if n := names(full); len(n) != 0 {
		t.Errorf("made over a leftover that held a file: holds %v", n)
	}
	if countGone(t, filepath.Join(spool, "super")) != 0 || len(a.superPool) != 0 {
		t.Errorf("the kept directory that could not go into place is still there")
	}
}
