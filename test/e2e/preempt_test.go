package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestLabPreemption is the lab setup of examples/lab: besteffort jobs
// fill every GPU; a job of the default partition asking for 2 GPUs
// preempts exactly two of them (requeued, not lost), starts, and the
// requeued ones run again once it ends. A PreemptMode=CANCEL partition's
// victim ends PREEMPTED, 0:15.
func TestLabPreemption(t *testing.T) {
	t.Parallel()
	c := upWithConf(t, "GresTypes=gpu\nPreemptType=preempt/partition_prio\nPreemptMode=REQUEUE\n"+
		"NodeName=lab1 NodeAddr=127.0.0.1 CPUs=8 RealMemory=2000 Gres=gpu:4\n"+
		"PartitionName=gpu Nodes=ALL Default=YES PriorityTier=2 MaxTime=INFINITE State=UP\n"+
		"PartitionName=besteffort Nodes=ALL PriorityTier=1 MaxTime=INFINITE State=UP\n"+
		"PartitionName=scavenger Nodes=ALL PriorityTier=1 PreemptMode=CANCEL MaxTime=INFINITE State=UP\n",
		map[string]string{"gres.conf": "NodeName=lab1 Name=gpu File=$DIR/dev/nvidia[0-3]\n"},
		func(dir string) { fakeGPUs(t, dir, 4) })

	var be []string
	for i := range 4 {
		be = append(be, c.sbatch("-p", "besteffort", "--gres=gpu:1", "-c1", "--mem=10M",
			"-o", filepath.Join(c.dir, "be-%j.out"), "--wrap", "echo started; sleep 300"))
		c.waitState(be[i], "RUNNING", 30*time.Second)
	}
	// RUNNING is from the allocation on; the preemption line goes into the
	// output of a job whose script runs, so wait for the scripts.
	for _, id := range be {
		out := filepath.Join(c.dir, "be-"+id+".out")
		c.waitFor("besteffort job "+id+"'s script to run", 30*time.Second, func() bool {
			b, _ := os.ReadFile(out)
			return strings.Contains(string(b), "started")
		})
	}
	g := c.sbatch("--gres=gpu:2", "-c1", "--mem=10M", "-o", filepath.Join(c.dir, "g.out"), "--wrap", "echo gpus=$CUDA_VISIBLE_DEVICES; sleep 2")
	c.waitState(g, "RUNNING", 30*time.Second)

	// Exactly the two most recently started went back to the queue.
	requeued := 0
	for i, id := range be {
		state, restarts := c.jobField(id, "JobState"), c.jobField(id, "Restarts")
		switch {
		case i >= 2 && (state == "PENDING" || state == "RUNNING") && restarts == "1":
			requeued++
			if !strings.Contains(readFile(t, filepath.Join(c.dir, "be-"+id+".out")), "CANCELLED AT") ||
				!strings.Contains(readFile(t, filepath.Join(c.dir, "be-"+id+".out")), "DUE TO PREEMPTION") {
				t.Errorf("job %s's output has no preemption line", id)
			}
		case i < 2 && state == "RUNNING" && restarts == "0":
		default:
			t.Errorf("besteffort job %d (%s): %s, Restarts=%s", i, id, state, restarts)
		}
	}
	if requeued != 2 {
		t.Fatalf("%d besteffort jobs requeued, want 2", requeued)
	}
	// The guaranteed job got two GPUs; once it ends the requeued jobs run.
	c.waitState(g, "COMPLETED", 30*time.Second)
	if out := readFile(t, filepath.Join(c.dir, "g.out")); !strings.Contains(out, "gpus=0,1") && !strings.Contains(out, "gpus=2,3") {
		t.Errorf("guaranteed job saw %q", out)
	}
	for _, id := range be[2:] {
		c.waitState(id, "RUNNING", 30*time.Second)
	}
	// sacct keeps the preempted run.
	c.waitFor("sacct to show the preempted run", 15*time.Second, func() bool {
		out, _, _ := c.run("sacct", "-D", "-X", "-n", "-P", "-o", "JobID,State", "-j", be[3])
		return strings.Contains(out, be[3]+"|PREEMPTED\n") && strings.Contains(out, be[3]+"|RUNNING\n")
	})

	// CANCEL mode: the victim ends PREEMPTED with 0:15.
	c.must("scancel", be...)
	for _, id := range be {
		c.waitState(id, "CANCELLED", 30*time.Second)
	}
	var sc []string
	for i := range 4 {
		sc = append(sc, c.sbatch("-p", "scavenger", "--gres=gpu:1", "-c1", "--mem=10M", "-o", os.DevNull, "--wrap", "sleep 300"))
		c.waitState(sc[i], "RUNNING", 30*time.Second)
	}
	g2 := c.sbatch("--gres=gpu:1", "-c1", "--mem=10M", "-o", os.DevNull, "--wrap", "sleep 1")
	c.waitState(g2, "RUNNING", 30*time.Second)
	c.waitState(sc[3], "PREEMPTED", 30*time.Second)
	if ec := c.jobField(sc[3], "ExitCode"); ec != "0:15" {
		t.Errorf("cancelled victim ExitCode=%s, want 0:15", ec)
	}
	for _, id := range sc[:3] {
		if st := c.jobField(id, "JobState"); st != "RUNNING" {
			t.Errorf("scavenger job %s: %s, want RUNNING", id, st)
		}
	}
}
