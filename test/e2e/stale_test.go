package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestReturningAgentSparesNewRun freezes the agent of a running job's node
// until the controller declares the node dead and requeues the job onto
// another node; when the frozen agent comes back, it must end its stale run
// locally and leave the job's new run alone (issue 12 B1).
func TestReturningAgentSparesNewRun(t *testing.T) {
	t.Parallel()
	c := startUp(t, 2, "--cpus", "1")
	runs := filepath.Join(c.dir, "runs")
	// Each run notes where it ran and its pid, then waits.
	script := fmt.Sprintf("echo \"$SLURMD_NODENAME ${SLURM_RESTART_COUNT:-0} $$\" >> %s; sleep 300 & wait", runs)
	var id string
	t.Cleanup(func() {
		for _, l := range strings.Split(readFileOr(runs), "\n") {
			if f := strings.Fields(l); len(f) == 3 {
				if pid, err := strconv.Atoi(f[2]); err == nil {
					killJobProcess(pid, id, f[0], true)
				}
			}
		}
	})
	id = c.sbatch("--requeue", "-o", "/dev/null", "--wrap", script)
	c.waitState(id, "RUNNING", 30*time.Second)
	first := c.jobField(id, "NodeList")
	c.waitFor("the first run to start", 30*time.Second, func() bool { return strings.Count(readFileOr(runs), "\n") == 1 })
	oldPID, _ := strconv.Atoi(strings.Fields(readFileOr(runs))[2])

	agent := c.agentPID(t, first)
	if err := syscall.Kill(agent, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	resumed := false
	t.Cleanup(func() {
		if !resumed {
			_ = syscall.Kill(agent, syscall.SIGCONT)
		}
	})
	c.waitFor("the job's second run on the other node", 60*time.Second, func() bool {
		return strings.Count(readFileOr(runs), "\n") == 2
	})
	second := c.jobField(id, "NodeList")
	if second == first || c.jobField(id, "JobState") != "RUNNING" || c.jobField(id, "Restarts") != "1" {
		t.Fatalf("after requeue: node %s (first %s), state %s, restarts %s", second,
			first, c.jobField(id, "JobState"), c.jobField(id, "Restarts"))
	}
	newPID, _ := strconv.Atoi(strings.Fields(strings.Split(readFileOr(runs), "\n")[1])[2])

	_ = syscall.Kill(agent, syscall.SIGCONT)
	resumed = true
	// The returning agent ends its stale run.
	c.waitFor("the stale run to end on "+first, 30*time.Second, func() bool {
		return syscall.Kill(oldPID, 0) != nil
	})
	c.waitFor(first+" back", 30*time.Second, func() bool {
		out, _, _ := c.run("sinfo", "-h", "-N", "-n", first, "-o", "%t")
		return strings.TrimSpace(out) == "idle"
	})
	// The old agent reports its stale run's end; the controller records
	// it as such (or, wrongly, ends the job with it).
	c.waitFor("the stale run's end report", 30*time.Second, func() bool {
		b, _ := os.ReadFile(filepath.Join(c.dir, "log", "controller.log"))
		return strings.Contains(string(b), "end of a stale run") || strings.Contains(string(b), "end of a job this node does not hold") ||
			c.jobField(id, "JobState") != "RUNNING"
	})
	if st := c.jobField(id, "JobState"); st != "RUNNING" {
		t.Fatalf("the new run was ended when the old agent came back: state %s", st)
	}
	if syscall.Kill(newPID, 0) != nil {
		t.Fatalf("the new run's process %d is gone", newPID)
	}
	if got := c.jobField(id, "NodeList"); got != second {
		t.Errorf("job moved to %s", got)
	}
	c.must("scancel", id)
	c.waitState(id, "CANCELLED", 30*time.Second)
}
