package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestKilledSrunEndsItsStep: srun killed with SIGKILL (no chance to
// cancel its step) does not leave the step's tasks running: the node
// notices srun's connection is gone and, MessageTimeout later, kills the
// step, as slurmctld does for a step whose srun stopped answering. The
// batch script then goes on.
func TestKilledSrunEndsItsStep(t *testing.T) {
	c := startUp(t, 1, "--conf", "MessageTimeout=2")
	pidFile := filepath.Join(c.dir, "srun.pid")
	id := c.sbatch("-o", filepath.Join(c.dir, "loss.out"), "--wrap",
		"srun sleep 3171 & echo $! > "+pidFile+"; wait; echo after-srun; sleep 120")
	c.waitState(id, "RUNNING", 30*time.Second)
	var srunPID int
	c.waitFor("the step's task to run", 30*time.Second, func() bool {
		b, _ := os.ReadFile(pidFile)
		srunPID, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		return srunPID > 0 && taskRunning("3171")
	})
	if err := syscall.Kill(srunPID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	// The batch script outlives srun (it sleeps on): only the step's own
	// end can take the task away.
	c.waitFor("the step's task to be killed after its srun died", 30*time.Second, func() bool { return !taskRunning("3171") })
	t.Logf("task gone %s after srun's SIGKILL", time.Since(killed).Round(100*time.Millisecond))
	if st := c.jobField(id, "JobState"); st != "RUNNING" {
		t.Fatalf("job %s is %s: the task went with the job, not with its srun", id, st)
	}
	c.waitFor("the batch script to go on after the step", 30*time.Second, func() bool {
		b, _ := os.ReadFile(filepath.Join(c.dir, "loss.out"))
		return strings.Contains(string(b), "after-srun")
	})
	c.must("scancel", id)
}

// taskRunning reports whether a "sleep <marker>" process runs.
func taskRunning(marker string) bool {
	return exec.Command("pgrep", "-f", "^sleep "+marker+"$").Run() == nil
}
