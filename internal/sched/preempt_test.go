package sched_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/sched"
	"github.com/drover-hpc/drover/internal/sched/schedtest"
)

var requeue = sched.Config{Preempt: sched.Preempt{Type: "partition_prio", Mode: "REQUEUE"}}

// requeueBF is the same under sched/backfill.
var requeueBF = sched.Config{Backfill: true, Preempt: requeue.Preempt}

// lab is the guaranteed/besteffort setup: GPU nodes shared by a tier-2
// partition and a tier-1 one.
func lab(c *schedtest.Cluster, nodes, gpus int) {
	for _, name := range c.AddNodes("g", nodes, 8, 64000) {
		schedtest.AddGPUs(c.Node(name), "", gpus)
	}
	c.AddPartition("gpu").PriorityTier = 2 // every node; the default
	c.AddPartition("besteffort").PriorityTier = 1
}

func gpuIn(part string, gpus int) func(*model.JobSpec) {
	return func(s *model.JobSpec) {
		s.Partition = part
		s.GPUs = &model.GPUReq{PerNode: gpus}
	}
}

// runAll schedules and commits until nothing more starts, at time now.
func runAll(t *testing.T, c *schedtest.Cluster, now int64, cfg sched.Config) *sched.Plan {
	t.Helper()
	p := schedule(t, c, now, cfg)
	if err := c.Apply(p, now); err != nil {
		t.Fatal(err)
	}
	return p
}

func victimIDs(p *sched.Plan) []model.JobID {
	var out []model.JobID
	for _, pr := range p.Preempts {
		for _, v := range pr.Victims {
			out = append(out, v.Job)
		}
	}
	slices.Sort(out)
	return out
}

func newLab(t *testing.T, nodes, gpus int) *schedtest.Cluster {
	c := schedtest.New()
	lab(c, nodes, gpus)
	return c
}

func TestPreemptPartitionPrio(t *testing.T) {
	for _, cfg := range []sched.Config{requeue, requeueBF} {
		testPreemptPartitionPrio(t, cfg)
	}
}

func testPreemptPartitionPrio(t *testing.T, requeue sched.Config) {
	c := newLab(t, 1, 4)
	for i := range 4 {
		submit(c, 1, gpuIn("besteffort", 1))
		runAll(t, c, int64(10+i), requeue) // started one second apart
	}
	guaranteed := submit(c, 1, gpuIn("gpu", 2))
	p := schedule(t, c, 100, requeue)
	if got := victimIDs(p); !slices.Equal(got, []model.JobID{3, 4}) {
		t.Fatalf("victims %v, want the two most recently started besteffort jobs [3 4]", got)
	}
	if len(p.Preempts) != 1 || p.Preempts[0].Job != guaranteed.ID || p.Preempts[0].Victims[0].Mode != "REQUEUE" {
		t.Errorf("preemptions %+v", p.Preempts)
	}
	if r := p.Reasons[guaranteed.ID]; r != model.ReasonResources {
		t.Errorf("preemptor waits with %q, want Resources", r)
	}
	// Without preemption configured nobody is touched.
	if p := schedule(t, c, 100, sched.Config{}); len(p.Preempts) != 0 {
		t.Errorf("preempted with PreemptType=none: %+v", p.Preempts)
	}
	// While the victims drain, the next cycle takes no more.
	for _, id := range []model.JobID{3, 4} {
		c.Jobs[id].Preempted, c.Jobs[id].Completing = true, true
	}
	if p := schedule(t, c, 101, requeue); len(p.Preempts) != 0 {
		t.Errorf("more victims while the first drain: %+v", p.Preempts)
	}
	// Once they are gone the guaranteed job starts.
	for _, id := range []model.JobID{3, 4} {
		c.Finish(c.Jobs[id], model.JobPending, 0, 102)
	}
	p = runAll(t, c, 103, requeue)
	if len(p.Starts) != 1 || p.Starts[0].Job != guaranteed.ID {
		t.Errorf("after the victims ended: starts %+v", p.Starts)
	}
}

func TestPreemptNeverUpward(t *testing.T) {
	c := newLab(t, 1, 2)
	submit(c, 2, gpuIn("gpu", 1))
	runAll(t, c, 1, requeue)
	be := submit(c, 1, gpuIn("besteffort", 1))
	same := submit(c, 1, gpuIn("gpu", 1))
	p := schedule(t, c, 10, requeue)
	if len(p.Preempts) != 0 {
		t.Errorf("a job preempted an equal or higher tier: %+v", p.Preempts)
	}
	if p.Reasons[be.ID] == "" || p.Reasons[same.ID] == "" {
		t.Errorf("reasons %v", p.Reasons)
	}
	// PreemptMode=OFF on besteffort protects it; PreemptExemptTime too.
	c2 := newLab(t, 1, 2)
	submit(c2, 2, gpuIn("besteffort", 1))
	runAll(t, c2, 1, requeue)
	submit(c2, 1, gpuIn("gpu", 1))
	c2.Partitions["besteffort"].PreemptMode = "OFF"
	if p := schedule(t, c2, 10, requeue); len(p.Preempts) != 0 {
		t.Errorf("PreemptMode=OFF partition preempted")
	}
	c2.Partitions["besteffort"].PreemptMode = ""
	exempt := requeue
	exempt.Preempt.ExemptTime = 60
	if p := schedule(t, c2, 10, exempt); len(p.Preempts) != 0 {
		t.Errorf("jobs younger than PreemptExemptTime preempted")
	}
	if p := schedule(t, c2, 100, exempt); len(p.Preempts) != 1 {
		t.Errorf("jobs older than PreemptExemptTime spared: %+v", p.Preempts)
	}
}

// TestPreemptProperty: over random labs, a preemptor's victims are all of
// a lower tier, freeing them lets it start, and none could be spared.
func TestPreemptProperty(t *testing.T) {
	preempted := 0
	for seed := range 200 {
		rng := rand.New(rand.NewPCG(uint64(seed), 7))
		c := newLab(t, 1+rng.IntN(4), 1+rng.IntN(4))
		for range 1 + rng.IntN(12) {
			part := "besteffort"
			if rng.IntN(4) == 0 {
				part = "gpu"
			}
			submit(c, 1, func(s *model.JobSpec) {
				s.Partition = part
				s.CPUsPerTask = 1 + rng.IntN(3)
				if rng.IntN(2) == 0 {
					s.GPUs = &model.GPUReq{PerNode: 1 + rng.IntN(2)}
				}
			})
			runAll(t, c, int64(rng.IntN(50)), sched.Config{})
		}
		for _, j := range c.Pending() {
			c.Finish(j, model.JobCancelled, 0, 60)
		}
		pre := submit(c, 1, func(s *model.JobSpec) {
			s.Partition = "gpu"
			s.CPUsPerTask = 1 + rng.IntN(6)
			s.GPUs = &model.GPUReq{PerNode: 1 + rng.IntN(3)}
		})
		p := schedule(t, c, 100, requeue)
		victims := victimIDs(p)
		if len(victims) == 0 {
			continue
		}
		preempted++
		for _, id := range victims {
			if c.Jobs[id].Partition != "besteffort" {
				t.Fatalf("seed %d: victim %d of partition %s", seed, id, c.Jobs[id].Partition)
			}
		}
		startsWithout := func(gone []model.JobID) bool {
			in := c.Input()
			nodes := make([]*model.Node, len(in.Nodes))
			for i, n := range in.Nodes {
				cp := *n
				nodes[i] = &cp
			}
			for _, id := range gone {
				for _, a := range c.Jobs[id].Alloc {
					for _, n := range nodes {
						if n.Name == a.Node {
							n.AllocCPUs -= a.CPUs
							n.AllocMem -= a.Mem
							n.AllocCores = n.AllocCores.AndNot(a.CPUIDs)
							n.AllocGPUs = n.AllocGPUs.AndNot(a.GPUs)
						}
					}
				}
			}
			in.Nodes, in.Pending, in.Running = nodes, []*model.Job{pre}, nil
			q := sched.Schedule(in, 100, sched.Config{})
			return len(q.Starts) == 1
		}
		if !startsWithout(victims) {
			t.Fatalf("seed %d: job %d still cannot start without victims %v", seed, pre.ID, victims)
		}
		for i := range victims {
			if startsWithout(slices.Delete(slices.Clone(victims), i, i+1)) {
				t.Fatalf("seed %d: victim %d of %v was not needed", seed, victims[i], victims)
			}
		}
	}
	if preempted < 20 {
		t.Errorf("only %d of 200 random labs needed a preemption: the test exercises too little", preempted)
	}
}

// BenchmarkPreemptWhatIf: one guaranteed job on a cluster of 1,000
// 10-CPU nodes full of 10,000 one-CPU besteffort jobs (issue 14's figure:
// under 50 ms per preemptor).
func BenchmarkPreemptWhatIf(b *testing.B) {
	c := schedtest.New()
	names := c.AddNodes("n", 1000, 10, 64000)
	c.AddPartition("gpu").PriorityTier = 2
	c.AddPartition("besteffort").PriorityTier = 1
	for i := range 10000 {
		j := c.Submit(spec(func(s *model.JobSpec) { s.Partition = "besteffort" }))
		n := c.Node(names[i%1000])
		c.Run(j, int64(i), []model.NodeAlloc{{Node: n.Name, CPUs: 1, Mem: 100, CPUIDs: model.BitmapOf(i / 1000)}})
	}
	c.Submit(spec(func(s *model.JobSpec) { s.Partition = "gpu"; s.NTasks = 8 }))
	in := c.Input()
	b.ResetTimer()
	for range b.N {
		p := sched.Schedule(in, 100000, requeue)
		if len(p.Preempts) != 1 || len(p.Preempts[0].Victims) != 8 {
			b.Fatalf("preempts %+v", p.Preempts)
		}
	}
}
