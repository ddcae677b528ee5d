package sched_test

import (
	"slices"
	"testing"

	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/sched"
	"github.com/drover-hpc/drover/internal/sched/schedtest"
)

// TestGangGPUs: GPU jobs time-slice CPUs as Slurm 22.05 does, GPUs not.
// A suspended job keeps its GPUs (slurm.conf: "Suspended jobs will not
// release GRES"), so a GPU job on an OverSubscribe=FORCE partition may
// share a running job's CPUs only with GPUs of its own that are free; it
// never suspends a job to take its GPUs.
func TestGangGPUs(t *testing.T) {
	cfg := sched.Config{Preempt: sched.Preempt{Mode: "SUSPEND", Gang: true}}
	setup := func() *schedtest.Cluster {
		c := schedtest.New()
		n := c.AddNode("g1", 4, 8000)
		schedtest.AddGPUs(n, "", 4)
		c.AddPartition("p")
		c.Partitions["p"].OverSubscribe = "FORCE:2"
		return c
	}
	gpuJob := func(c *schedtest.Cluster, gpus int) *model.Job {
		return submit(c, 1, func(s *model.JobSpec) { s.CPUsPerTask, s.GPUs = 4, &model.GPUReq{PerNode: gpus} })
	}

	// Two jobs of 2 GPUs each share the node's CPUs: the second suspends
	// the first and starts on the other two GPUs.
	c := setup()
	a := gpuJob(c, 2)
	runAll(t, c, 10, cfg)
	b := gpuJob(c, 2)
	p := schedule(t, c, 20, cfg)
	if got := victimIDs(p); !slices.Equal(got, []model.JobID{a.ID}) || p.Preempts[0].Victims[0].Mode != "GANG" {
		t.Fatalf("preemptions %+v, want job %d GANG", p.Preempts, a.ID)
	}
	c.SchedSuspend(a, 20, 0)
	p = runAll(t, c, 21, cfg)
	if len(p.Starts) != 1 || p.Starts[0].Job != b.ID {
		t.Fatalf("job %d did not start on the shared CPUs: %+v", b.ID, p)
	}
	if ga, gb := a.Alloc[0].GPUs, p.Starts[0].Alloc[0].GPUs; ga.Intersects(gb) || gb.Count() != 2 {
		t.Errorf("GPUs of the suspended job %v and of the new one %v overlap", ga, gb)
	}

	// A job whose GPUs a running job holds waits: suspending that job
	// would not free them.
	c = setup()
	gpuJob(c, 4)
	runAll(t, c, 10, cfg)
	w := gpuJob(c, 1)
	if p := schedule(t, c, 20, cfg); len(p.Preempts) != 0 || p.Reasons[w.ID] != model.ReasonResources {
		t.Fatalf("suspended %v for GPUs it keeps; reason %q", victimIDs(p), p.Reasons[w.ID])
	}
}
