package e2e

import (
	"os"
	"strings"
	"testing"
	"time"
)

// TestQOSPreemption: PreemptType=preempt/qos. QOS high may preempt low
// (sacctmgr Preempt=, then Preempt+=); a high job takes the low job's
// CPUs (requeued, not the normal job beside it), and a normal job
// preempts nobody.
func TestQOSPreemption(t *testing.T) {
	t.Parallel()
	c := upWithConf(t, "PreemptType=preempt/qos\nPreemptMode=REQUEUE\n"+
		"NodeName=q1 NodeAddr=127.0.0.1 CPUs=4 RealMemory=2000\n"+
		"PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP\n", map[string]string{}, nil)
	c.must("sacctmgr", "-i", "add", "qos", "low,high,scav")
	c.must("sacctmgr", "-i", "modify", "qos", "high", "set", "Preempt=low")
	c.must("sacctmgr", "-i", "modify", "qos", "high", "set", "Preempt+=scav", "PreemptExemptTime=0:00:00")
	c.must("sacctmgr", "-i", "modify", "qos", "scav", "set", "PreemptMode=cancel")
	if got := c.must("sacctmgr", "-n", "-P", "show", "qos", "high,scav", "format=name,preempt,preemptmode"); got != "high|low,scav|cluster\nscav||cancel\n" {
		t.Errorf("sacctmgr show qos: %q", got)
	}

	low := c.sbatch("--qos=low", "-c2", "--mem=10M", "-o", os.DevNull, "--wrap", "sleep 300")
	c.waitState(low, "RUNNING", 30*time.Second)
	normal := c.sbatch("--qos=normal", "-c2", "--mem=10M", "-o", os.DevNull, "--wrap", "sleep 300")
	c.waitState(normal, "RUNNING", 30*time.Second)

	high := c.sbatch("--qos=high", "-c2", "--mem=10M", "-o", os.DevNull, "--wrap", "sleep 2")
	c.waitState(high, "RUNNING", 30*time.Second)
	if r := c.jobField(low, "Restarts"); r != "1" {
		t.Errorf("low job Restarts=%s, want 1 (requeued)", r)
	}
	if st, r := c.jobField(normal, "JobState"), c.jobField(normal, "Restarts"); st != "RUNNING" || r != "0" {
		t.Errorf("normal job %s Restarts=%s: a QOS not in high's Preempt list was preempted", st, r)
	}
	c.waitState(high, "COMPLETED", 30*time.Second)
	c.waitState(low, "RUNNING", 30*time.Second)
	if got := c.must("sacct", "-n", "-P", "-D", "-X", "-j", low, "-o", "State"); !strings.Contains(got, "PREEMPTED") {
		t.Errorf("sacct -D of the requeued job: %q, want a PREEMPTED run", got)
	}

	// A normal job on the full node preempts nobody: it waits.
	wait := c.sbatch("--qos=normal", "-c2", "--mem=10M", "-o", os.DevNull, "--wrap", "true")
	c.waitFor("the normal job's pending reason", 30*time.Second, func() bool { return c.jobField(wait, "Reason") == "Resources" })
	if r := c.jobField(low, "Restarts"); r != "1" || c.jobField(low, "JobState") != "RUNNING" {
		t.Errorf("low job %s Restarts=%s after a normal job arrived", c.jobField(low, "JobState"), r)
	}
	c.must("scancel", low, normal, wait)
}
