package e2e

import (
	"os"
	"strings"
	"testing"
	"time"
)

// TestUpdateTimeLimitRunning: scontrol update TimeLimit= on a running job
// reaches its node: a raised limit lets it finish, a lowered one ends it
// TIMEOUT.
func TestUpdateTimeLimitRunning(t *testing.T) {
	t.Parallel()
	c := startUp(t, 1)
	raised := c.sbatch("-t", "0:04", "-o", os.DevNull, "--wrap", "sleep 7")
	lowered := c.sbatch("-t", "5:00", "-o", os.DevNull, "--wrap", "sleep 120")
	c.waitState(raised, "RUNNING", 30*time.Second)
	c.waitState(lowered, "RUNNING", 30*time.Second)
	c.must("scontrol", "update", "JobId="+raised, "TimeLimit=1:00")
	c.must("scontrol", "update", "JobId="+lowered, "TimeLimit=0:03")
	c.waitState(lowered, "TIMEOUT", 30*time.Second)
	c.waitState(raised, "COMPLETED", 30*time.Second)
}

// TestAllocationTimeLimit: a job srun or salloc allocated ends TIMEOUT at
// its time limit, as a batch job does (sacct: TIMEOUT 0:0), not FAILED
// with the status its holder saw when the node killed the step.
func TestAllocationTimeLimit(t *testing.T) {
	t.Parallel()
	c := startUp(t, 1)
	for _, cmd := range [][]string{
		{"srun", "-J", "tl-srun", "-t", "0:02", "sleep", "60"},
		{"salloc", "-J", "tl-salloc", "-t", "0:02", "srun", "sleep", "60"},
	} {
		_, errOut, code := c.run(cmd[0], cmd[1:]...)
		if code == 0 || !strings.Contains(errOut, "DUE TO TIME LIMIT") {
			t.Errorf("%v: exit %d\n%s", cmd, code, errOut)
		}
		id := strings.TrimSpace(c.must("squeue", "-h", "-t", "all", "-n", cmd[2], "-o", "%i"))
		c.waitState(id, "TIMEOUT", 30*time.Second)
		c.waitFor("sacct to record job "+id+" TIMEOUT", 15*time.Second, func() bool {
			out, _, _ := c.run("sacct", "-X", "-n", "-P", "-o", "State,ExitCode", "-j", id)
			return out == "TIMEOUT|0:0\n"
		})
	}
}
