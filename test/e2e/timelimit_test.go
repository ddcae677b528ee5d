package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
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

// TestTimeLimitUpdateWhileAgentAway: a time limit lowered while the
// job's node had no agent reaches the restarted agent, which ends the job
// TIMEOUT. Before, the update reached nobody and the new agent enforced
// the limit the job was launched with.
func TestTimeLimitUpdateWhileAgentAway(t *testing.T) {
	t.Parallel()
	c, daemon := manualCluster(t, "tlaway", "SlurmdTimeout=60\n")
	daemon("controller")
	c.waitFor("controller", 30*time.Second, func() bool { _, _, code := c.run("scontrol", "ping"); return code == 0 })
	agent := daemon("agent", "--name", "tlaway1")
	c.waitFor("node up", 60*time.Second, func() bool {
		o, _, _ := c.run("sinfo", "-h", "-o", "%t")
		return strings.TrimSpace(o) == "idle"
	})
	started := filepath.Join(c.dir, "started")
	id := c.sbatch("-t", "10:00", "-o", os.DevNull, "--wrap", "touch "+started+"; exec sleep 300")
	// Running on the node, not only scheduled: a launch the stopped agent
	// never got would be run again, with the new limit, by the next one.
	c.waitFor("the job's script to start", 30*time.Second, func() bool { _, err := os.Stat(started); return err == nil })
	_ = agent.Process.Signal(syscall.SIGTERM)
	_ = agent.Wait()
	c.must("scontrol", "update", "JobId="+id, "TimeLimit=0:03")
	daemon("agent", "--name", "tlaway1")
	c.waitState(id, "TIMEOUT", 60*time.Second)
	if r := c.jobField(id, "Restarts"); r != "0" {
		t.Errorf("Restarts=%s: the job ran again instead of being taken back", r)
	}
}
