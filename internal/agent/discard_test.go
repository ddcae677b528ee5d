package agent

import (
	"os"
	"path/filepath"
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
