package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestFullSpoolRequeuesAndDrains: a batch job placed on a node whose spool
// disk is full goes back to the queue and the node drains ("disk full")
// at once; once space is back the health check lifts the drain and the
// job runs. Before, the job ended FAILED (JobLaunchFailure: the script
// could not be written), and so did every job placed there until the
// health check's next round, up to 15 s later.
func TestFullSpoolRequeuesAndDrains(t *testing.T) {
	t.Parallel()
	if os.Getuid() != 0 {
		t.Skip("needs root")
	}
	dir := worldDir(t)
	small := filepath.Join(dir, "small")
	if err := os.MkdirAll(small, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", small, "tmpfs", 0, "size=4m"); err != nil {
		t.Skipf("cannot mount a small tmpfs here: %v", err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(small, syscall.MNT_DETACH) })
	_ = os.Chmod(small, 0o755)
	c := startUp(t, 1, "--conf", "SlurmdSpoolDir="+filepath.Join(small, "spool"))
	// Fill it.
	fill := filepath.Join(small, "fill")
	f, err := os.Create(fill)
	if err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 64<<10)
	for {
		if _, err := f.Write(chunk); err != nil {
			break
		}
	}
	f.Close()
	out := filepath.Join(c.dir, "ran.out")
	id := c.sbatch("-o", out, "--wrap", "echo ran")
	c.waitFor("the node to drain for its full disk", 30*time.Second, func() bool {
		o, _, _ := c.run("sinfo", "-h", "-R", "-o", "%E")
		return strings.Contains(o, "disk full")
	})
	if s := c.jobField(id, "JobState"); s != "PENDING" {
		t.Fatalf("job placed on a node with a full spool: %s (%s), want PENDING", s, c.jobField(id, "Reason"))
	}
	_ = os.Remove(fill)
	c.waitState(id, "COMPLETED", 60*time.Second)
	if got := strings.TrimSpace(readFile(t, out)); got != "ran" {
		t.Errorf("output after space came back: %q", got)
	}
}

// TestInodeFullSpoolRequeuesAndDrains: the same when the spool's
// filesystem runs out of inodes with blocks to spare. Before, the health
// check measured blocks only: the node stayed up and every batch job
// placed there failed (JobLaunchFailure, "no space left on device").
func TestInodeFullSpoolRequeuesAndDrains(t *testing.T) {
	t.Parallel()
	if os.Getuid() != 0 {
		t.Skip("needs root")
	}
	dir := worldDir(t)
	small := filepath.Join(dir, "small")
	if err := os.MkdirAll(small, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", small, "tmpfs", 0, "size=64m,nr_inodes=256"); err != nil {
		t.Skipf("cannot mount a small tmpfs here: %v", err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(small, syscall.MNT_DETACH) })
	_ = os.Chmod(small, 0o755)
	c := startUp(t, 1, "--conf", "SlurmdSpoolDir="+filepath.Join(small, "spool"))
	// Take every inode left, with empty files.
	fill := filepath.Join(small, "fill")
	if err := os.Mkdir(fill, 0o700); err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		f, err := os.Create(filepath.Join(fill, strconv.Itoa(i)))
		if err != nil {
			break
		}
		f.Close()
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(small, &st); err != nil || st.Ffree > 0 || st.Bavail*uint64(st.Bsize) < 32<<20 {
		t.Fatalf("the filesystem is not out of inodes with blocks to spare: %+v %v", st, err)
	}
	out := filepath.Join(c.dir, "ran.out")
	id := c.sbatch("-o", out, "--wrap", "echo ran")
	c.waitFor("the node to drain for its full disk (or the job to end)", 30*time.Second, func() bool {
		o, _, _ := c.run("sinfo", "-h", "-R", "-o", "%E")
		return strings.Contains(o, "disk full") || c.jobField(id, "JobState") == "FAILED"
	})
	if s := c.jobField(id, "JobState"); s != "PENDING" {
		t.Fatalf("job placed on a node whose spool has no inodes left: %s (%s), want PENDING", s, c.jobField(id, "Reason"))
	}
	if err := os.RemoveAll(fill); err != nil {
		t.Fatal(err)
	}
	c.waitState(id, "COMPLETED", 60*time.Second)
	if got := strings.TrimSpace(readFile(t, out)); got != "ran" {
		t.Errorf("output after inodes came back: %q", got)
	}
}
