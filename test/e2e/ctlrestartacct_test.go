package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestControllerRestartNoRequeuedRow: after a controller restart, a job
// that ran across it and a job submitted while a node's agent had not come
// back each have one accounting record (sacct -D: one row, no REQUEUED
// run, Restarts=0): neither was ever requeued. Before, the restarted
// controller placed the second job on the node whose agent was not back,
// the launch reached nobody, and the agent's registration requeued it: an
// extra REQUEUED row (zero-length after a whole cluster restart).
func TestControllerRestartNoRequeuedRow(t *testing.T) {
	t.Parallel()
	c, daemon := manualCluster(t, "ctlrst", "SlurmdTimeout=60\n")
	dir := c.dir
	conf := strings.Replace(readFile(t, c.conf), "NodeName=ctlrst1 ", "NodeName=ctlrst[1-2] ", 1)
	if err := os.WriteFile(c.conf, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	nodeState := func(node string) string {
		o, _, _ := c.run("sinfo", "-h", "-n", node, "-o", "%t")
		return strings.TrimSpace(o)
	}
	ping := func() bool { _, _, code := c.run("scontrol", "ping"); return code == 0 }
	ctl := daemon("controller")
	c.waitFor("controller", 30*time.Second, ping)
	daemon("agent", "--name", "ctlrst1")
	agent2 := daemon("agent", "--name", "ctlrst2")
	c.waitFor("both nodes idle", 60*time.Second, func() bool { return nodeState("ctlrst1") == "idle" && nodeState("ctlrst2") == "idle" })
	gate, started := filepath.Join(dir, "go"), filepath.Join(dir, "started")
	across := c.sbatch("-w", "ctlrst1", "-o", os.DevNull, "--wrap", "touch "+started+"; while [ ! -e "+gate+" ]; do sleep 0.1; done")
	// Running on its node, not only scheduled: a launch the stopped
	// controller never sent would rightly be requeued.
	c.waitFor("the job's script to start", 30*time.Second, func() bool { _, err := os.Stat(started); return err == nil })

	// Node 2's agent stops, then the controller restarts: its saved state
	// still has node 2 up and responding.
	stop := func(cmd *exec.Cmd) { _ = cmd.Process.Signal(syscall.SIGTERM); _ = cmd.Wait() }
	stop(agent2)
	stop(ctl)
	daemon("controller")
	c.waitFor("controller after its restart", 30*time.Second, ping)
	c.waitFor("node 1's agent back", 60*time.Second, func() bool { return nodeState("ctlrst1") == "mix" || nodeState("ctlrst1") == "alloc" })
	later := c.sbatch("-w", "ctlrst2", "-o", os.DevNull, "--wrap", "true")
	c.waitFor("the scheduler's verdict on the job for node 2", 30*time.Second, func() bool {
		r := c.jobField(later, "Reason")
		return c.jobField(later, "JobState") != "PENDING" || r != "" && r != "None"
	})
	daemon("agent", "--name", "ctlrst2")
	c.waitState(later, "COMPLETED", 60*time.Second)
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	c.waitState(across, "COMPLETED", 30*time.Second)
	for _, id := range []string{across, later} {
		var out string
		c.waitFor("job "+id+"'s end in sacct", 30*time.Second, func() bool {
			out, _, _ = c.run("sacct", "-D", "-X", "-n", "-P", "-o", "jobid,state,start,end", "-j", id)
			return strings.Contains(out, "COMPLETED")
		})
		if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) != 1 {
			t.Errorf("sacct -D of job %s, run once:\n%s\nwant one COMPLETED row", id, out)
		}
		if r := c.jobField(id, "Restarts"); r != "0" {
			t.Errorf("job %s: Restarts=%s", id, r)
		}
	}
}
