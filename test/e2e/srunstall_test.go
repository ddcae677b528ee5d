package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestStalledSrunDoesNotPinItsJob: an srun whose own output is never read
// (its stdout a pipe nobody drains) stops reading the node's frames. A
// scancel must still end the job and free the node: the node's last frames
// to that srun are bounded by MessageTimeout instead of blocking the step's
// end for ever.
func TestStalledSrunDoesNotPinItsJob(t *testing.T) {
	c := startUp(t, 1, "--conf", "MessageTimeout=2")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	srun := exec.Command(filepath.Join(binDir, "srun"), "-n1", "-J", "stall", "yes", "stalled-srun-output")
	srun.Dir, srun.Env, srun.Stdout = c.dir, c.env(), w
	if err := srun.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	defer srun.Process.Kill()
	var id string
	c.waitFor("the stalled srun's job to run", 30*time.Second, func() bool {
		o, _, _ := c.run("squeue", "-h", "-n", "stall", "-t", "R", "-o", "%i")
		id = strings.TrimSpace(o)
		return id != ""
	})
	// Let the pipe and both sockets fill: yes writes far faster than the
	// 64 KiB pipe takes, so srun and then the node block on their writes.
	c.waitFor("srun to stall on its full stdout", 30*time.Second, func() bool {
		return blockedOnPipe(srun.Process.Pid)
	})
	c.must("scancel", id)
	c.waitFor("the cancelled job to leave the queue although its srun stalls", 60*time.Second, func() bool {
		o, _, _ := c.run("squeue", "-h", "-j", id, "-o", "%T")
		return strings.TrimSpace(o) == ""
	})
	c.waitFor("the task to be gone", 30*time.Second, func() bool {
		return exec.Command("pgrep", "-f", "^yes stalled-srun-output$").Run() != nil
	})
	if st := c.jobField(id, "JobState"); st != "CANCELLED" {
		t.Errorf("job %s ended %s, want CANCELLED", id, st)
	}
	// Reading the pipe at last lets srun go.
	r.Close()
	done := make(chan error, 1)
	go func() { done <- srun.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Error("srun did not exit within 30 s once its stdout was closed")
	}
}

// blockedOnPipe reports whether a thread of process pid sleeps in a pipe
// write (its stdout is full).
func blockedOnPipe(pid int) bool {
	tasks, _ := filepath.Glob(filepath.Join("/proc", strconv.Itoa(pid), "task", "*", "wchan"))
	for _, f := range tasks {
		if b, _ := os.ReadFile(f); strings.Contains(string(b), "pipe_write") {
			return true
		}
	}
	return false
}
