package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestUpResumesOnSameDir stops `drover up` and starts it again on the same
// directory: held and finished jobs are still there, the held one runs once
// released, and new job ids continue after the old ones.
func TestUpResumesOnSameDir(t *testing.T) {
	t.Parallel()
	c := startUp(t, 1)
	done := c.sbatch("-o", "/dev/null", "--wrap", "true")
	c.waitState(done, "COMPLETED", 30*time.Second)
	held := c.sbatch("-H", "-J", "keepme", "-o", "resumed-%j.out", "--wrap", "echo ran after restart")
	running := c.sbatch("-o", "interrupted-%j.out", "--wrap", "sleep 6; echo finished")
	c.waitState(running, "RUNNING", 30*time.Second)
	noRequeue := c.sbatch("--no-requeue", "-c1", "-o", "/dev/null", "--wrap", "sleep 60")
	c.waitState(noRequeue, "RUNNING", 30*time.Second)
	conf := readFile(t, c.conf)
	c.stop()

	c.start(1)
	if got := readFile(t, c.conf); got != conf {
		t.Errorf("slurm.conf rewritten on restart")
	}
	if st := c.jobField(held, "JobState"); st != "PENDING" {
		t.Fatalf("held job after restart: %q", st)
	}
	if st := c.jobField(done, "JobState"); st != "COMPLETED" {
		t.Errorf("finished job after restart: %q", st)
	}
	// One that may not be requeued ends NODE_FAIL, as Slurm ends a job its
	// node lost; it does not run again.
	c.waitState(noRequeue, "NODE_FAIL", 30*time.Second)
	if r := c.jobField(noRequeue, "Restarts"); r != "0" {
		t.Errorf("--no-requeue job Restarts=%s, want 0", r)
	}
	// The job cut off by the stop runs again from the start.
	c.waitState(running, "COMPLETED", 30*time.Second)
	if r := c.jobField(running, "Restarts"); r != "1" {
		t.Errorf("interrupted job Restarts=%s, want 1", r)
	}
	if out := readFile(t, filepath.Join(c.dir, "interrupted-"+running+".out")); out != "finished\n" {
		t.Errorf("interrupted job output %q", out)
	}
	c.must("scontrol", "release", held)
	c.waitState(held, "COMPLETED", 30*time.Second)
	if out := readFile(t, filepath.Join(c.dir, "resumed-"+held+".out")); out != "ran after restart\n" {
		t.Errorf("output %q", out)
	}
	next := c.sbatch("-o", "/dev/null", "--wrap", "true")
	a, _ := strconv.Atoi(held)
	b, _ := strconv.Atoi(next)
	if b <= a {
		t.Errorf("new id %d not after %d", b, a)
	}
}

// TestNodeDrainAndArrayDisplay drains a node, checks sinfo's states and
// reasons, and squeue's collapsed array line.
func TestNodeDrainAndArrayDisplay(t *testing.T) {
	t.Parallel()
	c := startUp(t, 2)
	node1, node2 := c.node(1), c.node(2)
	c.must("scontrol", "update", "NodeName="+node2, "State=DRAIN", "Reason=disk check")
	out := c.must("sinfo", "-h", "-N", "-o", "%N %t")
	if !strings.Contains(out, node1+" idle") || !strings.Contains(out, node2+" drain") {
		t.Errorf("sinfo after drain:\n%s", out)
	}
	out = c.must("sinfo", "-R", "-h", "-o", "%E|%N")
	if strings.TrimSpace(out) != "disk check|"+node2 {
		t.Errorf("sinfo -R: %q", out)
	}
	// Nothing lands on the drained node; with node1 busy the rest wait.
	block := c.sbatch("--exclusive", "-o", "/dev/null", "--wrap", "sleep 30")
	c.waitState(block, "RUNNING", 30*time.Second)
	arr := c.sbatch("-a", "0-9%4", "-J", "arr", "-o", "/dev/null", "--wrap", "true")
	// One line with one reason (the first task's, as Slurm's one pending
	// record has), not a list of the tasks' reasons.
	c.waitFor("array pending line with reason Resources", 10*time.Second, func() bool {
		last, _, _ := c.run("squeue", "-h", "-n", "arr", "-o", "%i %t %r")
		return strings.TrimSpace(last) == arr+"_[0-9%4] PD Resources"
	})
	out = c.must("squeue", "-h", "-r", "-n", "arr", "-o", "%i")
	if n := len(strings.Fields(out)); n != 10 {
		t.Errorf("squeue -r shows %d tasks:\n%s", n, out)
	}
	c.must("scontrol", "update", "NodeName="+node2, "State=RESUME")
	c.waitFor("array done", 60*time.Second, func() bool {
		out, _, _ := c.run("squeue", "-h", "-n", "arr")
		return strings.TrimSpace(out) == ""
	})
	c.must("scancel", block)
	_ = os.Remove(filepath.Join(c.dir, "nothing"))
}
