package sched_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/sched"
	"github.com/drover-hpc/drover/internal/sched/schedtest"
)

var qosRequeue = sched.Config{Preempt: sched.Preempt{Type: "qos", Mode: "REQUEUE"}}

// qosTable: high may preempt low and scavenger; normal preempts nothing.
func qosTable() map[string]*model.QOS {
	t := map[string]*model.QOS{}
	for _, q := range []struct {
		name    string
		prio    int
		preempt []string
	}{{"normal", 0, nil}, {"low", 0, nil}, {"scavenger", 0, nil}, {"high", 100, []string{"low", "scavenger"}}} {
		t[q.name] = &model.QOS{Name: q.name, Priority: q.prio, Preempt: q.preempt}
	}
	return t
}

func inQOS(qos string, cpus int) func(*model.JobSpec) {
	return func(s *model.JobSpec) { s.Partition, s.QOS, s.CPUsPerTask = "p", qos, cpus }
}

// scheduleQOS runs one checked cycle with the QOS table.
func scheduleQOS(t *testing.T, c *schedtest.Cluster, now int64, cfg sched.Config, qos map[string]*model.QOS) *sched.Plan {
	t.Helper()
	in := c.Input()
	in.QOS = qos
	p := sched.Schedule(in, now, cfg)
	if err := schedtest.CheckPlan(in, p); err != nil {
		t.Fatalf("plan breaks invariants:\n%v", err)
	}
	return p
}

func fillQOS(t *testing.T, c *schedtest.Cluster, qos ...string) {
	t.Helper()
	for i, q := range qos {
		submit(c, 1, inQOS(q, 2))
		runAll(t, c, int64(10+i), sched.Config{})
	}
}

func TestPreemptQOS(t *testing.T) {
	c := schedtest.New()
	oneNode(c, 8, 8000)
	fillQOS(t, c, "normal", "low", "scavenger", "low") // jobs 1-4, 2 CPUs each
	qos := qosTable()

	// A normal job may preempt nobody: it waits.
	n := submit(c, 1, inQOS("normal", 2))
	if p := scheduleQOS(t, c, 100, qosRequeue, qos); len(p.Preempts) != 0 || p.Reasons[n.ID] != model.ReasonResources {
		t.Fatalf("normal job preempted %v (reason %q)", victimIDs(p), p.Reasons[n.ID])
	}
	c.Finish(n, model.JobCancelled, 0, 100)

	// A high job needing 4 CPUs takes the two most recent of low and
	// scavenger, never the normal job 1.
	h := submit(c, 1, inQOS("high", 4))
	p := scheduleQOS(t, c, 100, qosRequeue, qos)
	if got := victimIDs(p); !slices.Equal(got, []model.JobID{3, 4}) {
		t.Fatalf("victims %v, want [3 4]", got)
	}
	if p.Preempts[0].Job != h.ID || p.Reasons[h.ID] != model.ReasonResources {
		t.Errorf("preemption %+v, reason %q", p.Preempts, p.Reasons[h.ID])
	}

	// The victim's QOS PreemptMode wins over the cluster's; its
	// PreemptExemptTime keeps a young job.
	qos["scavenger"].PreemptMode = "CANCEL"
	qos["low"].PreemptExemptTime = 1000
	p = scheduleQOS(t, c, 100, qosRequeue, qos)
	if len(p.Preempts) != 0 {
		t.Fatalf("exempt low jobs and one scavenger cannot make 4 CPUs, got %+v", p.Preempts)
	}
	qos["low"].PreemptExemptTime = 0
	p = scheduleQOS(t, c, 100, qosRequeue, qos)
	modes := map[model.JobID]string{}
	for _, v := range p.Preempts[0].Victims {
		modes[v.Job] = v.Mode
	}
	if modes[3] != "CANCEL" || modes[4] != "REQUEUE" {
		t.Errorf("modes %v, want 3 CANCEL (scavenger) and 4 REQUEUE (cluster)", modes)
	}

	// min_exempt_priority: only jobs of lower priority are preemptable.
	c.Jobs[4].Priority = 500
	cfg := qosRequeue
	cfg.Preempt.MinExemptPriority = 500
	if got := victimIDs(scheduleQOS(t, c, 100, cfg, qos)); !slices.Equal(got, []model.JobID{2, 3}) {
		t.Errorf("victims %v with job 4 exempt by priority, want [2 3]", got)
	}
}

// TestPreemptQOSProperty: over random clusters, a preemptor of QOS high
// never takes a job whose QOS is not in its Preempt list, and never more
// victims than it needs.
func TestPreemptQOSProperty(t *testing.T) {
	names := []string{"normal", "low", "scavenger", "high"}
	preempted := 0
	for seed := range 200 {
		rng := rand.New(rand.NewPCG(uint64(seed), 11))
		c := schedtest.New()
		c.AddNodes("n", 1+rng.IntN(3), 8, 16000)
		c.AddPartition("p")
		qos := qosTable()
		for range 1 + rng.IntN(14) {
			submit(c, 1, inQOS(names[rng.IntN(len(names))], 1+rng.IntN(4)))
			runAll(t, c, int64(rng.IntN(50)), sched.Config{})
		}
		for _, j := range c.Pending() {
			c.Finish(j, model.JobCancelled, 0, 60)
		}
		pre := submit(c, 1, inQOS("high", 1+rng.IntN(8)))
		p := scheduleQOS(t, c, 100, qosRequeue, qos)
		victims := victimIDs(p)
		if len(victims) == 0 {
			continue
		}
		preempted++
		for _, id := range victims {
			if q := c.Jobs[id].Spec.QOS; !slices.Contains(qos["high"].Preempt, q) {
				t.Fatalf("seed %d: victim %d of QOS %s", seed, id, q)
			}
		}
		startsWithout := func(gone []model.JobID) bool {
			in := c.Input()
			nodes := make([]*model.Node, len(in.Nodes))
			for i, n := range in.Nodes {
				cp := *n
				nodes[i] = &cp
				for _, id := range gone {
					for _, a := range c.Jobs[id].Alloc {
						if a.Node == n.Name {
							cp.AllocCPUs -= a.CPUs
							cp.AllocMem -= a.Mem
							cp.AllocCores = cp.AllocCores.AndNot(a.CPUIDs)
						}
					}
				}
			}
			in.Nodes, in.Pending, in.Running = nodes, []*model.Job{pre}, nil
			return len(sched.Schedule(in, 100, sched.Config{}).Starts) == 1
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
		t.Errorf("only %d of 200 random clusters needed a preemption: the test exercises too little", preempted)
	}
}

// TestPreemptSuspendKeepsGPUs: a SUSPEND victim lends only its CPUs, so
// a GPU job cannot preempt it for its GPUs, while a CPU job can.
func TestPreemptSuspendKeepsGPUs(t *testing.T) {
	cfg := sched.Config{Preempt: sched.Preempt{Type: "partition_prio", Mode: "SUSPEND"}}
	c := newLab(t, 1, 2)
	submit(c, 1, func(s *model.JobSpec) {
		s.Partition, s.CPUsPerTask, s.GPUs = "besteffort", 8, &model.GPUReq{PerNode: 2}
	})
	runAll(t, c, 10, cfg)
	g := submit(c, 1, gpuIn("gpu", 1))
	if p := schedule(t, c, 100, cfg); len(p.Preempts) != 0 {
		t.Fatalf("a GPU job suspended %v, whose GPUs stay taken", victimIDs(p))
	}
	c.Finish(g, model.JobCancelled, 0, 100)
	cpu := submit(c, 1, func(s *model.JobSpec) { s.Partition, s.CPUsPerTask = "gpu", 4 })
	p := schedule(t, c, 100, cfg)
	if got := victimIDs(p); !slices.Equal(got, []model.JobID{1}) || p.Preempts[0].Victims[0].Mode != "SUSPEND" {
		t.Fatalf("preemptions %+v, want job 1 SUSPEND", p.Preempts)
	}
	// Suspended, its CPUs are free: the preemptor starts next cycle.
	c.SchedSuspend(c.Jobs[1], 100, cpu.ID)
	if p := runAll(t, c, 101, cfg); len(p.Starts) != 1 || p.Starts[0].Job != cpu.ID {
		t.Fatalf("preemptor did not start on the lent CPUs: %+v", p)
	}
}

// TestGangEntry: on an OverSubscribe=FORCE:2 partition a waiting job
// suspends one job it shares CPUs with, and no more than FORCE:2 allows.
func TestGangEntry(t *testing.T) {
	cfg := sched.Config{Preempt: sched.Preempt{Mode: "SUSPEND", Gang: true}}
	c := schedtest.New()
	oneNode(c, 4, 8000)
	c.Partitions["p"].OverSubscribe = "FORCE:2"
	submit(c, 1, func(s *model.JobSpec) { s.CPUsPerTask = 4 })
	runAll(t, c, 10, cfg)
	b := submit(c, 1, func(s *model.JobSpec) { s.CPUsPerTask = 4 })
	p := schedule(t, c, 20, cfg)
	if got := victimIDs(p); !slices.Equal(got, []model.JobID{1}) || p.Preempts[0].Victims[0].Mode != "GANG" {
		t.Fatalf("preemptions %+v, want job 1 GANG", p.Preempts)
	}
	c.SchedSuspend(c.Jobs[1], 20, 0)
	if p := runAll(t, c, 21, cfg); len(p.Starts) != 1 || p.Starts[0].Job != b.ID {
		t.Fatalf("job %d did not start on the shared CPUs: %+v", b.ID, p)
	}
	// Two jobs share every CPU now: a third waits.
	third := submit(c, 1, func(s *model.JobSpec) { s.CPUsPerTask = 1 })
	p = schedule(t, c, 30, cfg)
	if len(p.Preempts) != 0 || p.Reasons[third.ID] != model.ReasonResources {
		t.Fatalf("a third job on FORCE:2 CPUs: %+v, reason %q", p.Preempts, p.Reasons[third.ID])
	}
	// Without OverSubscribe=FORCE there is no sharing.
	c = schedtest.New()
	oneNode(c, 4, 8000)
	submit(c, 1, func(s *model.JobSpec) { s.CPUsPerTask = 4 })
	runAll(t, c, 10, cfg)
	w := submit(c, 1, func(s *model.JobSpec) { s.CPUsPerTask = 4 })
	if p := schedule(t, c, 40, cfg); len(p.Preempts) != 0 || p.Reasons[w.ID] != model.ReasonResources {
		t.Fatalf("suspended %v on an OverSubscribe=NO partition", victimIDs(p))
	}
}
