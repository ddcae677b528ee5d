package sched_test

import (
	"math/rand"
	"syscall"
	"testing"
	"time"

	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/sched"
	"github.com/drover-hpc/drover/internal/sched/schedtest"
)

// backfillCluster is the backfill benchmark: nodes × 64 CPUs,
// 256 GiB, one node in five with 8 GPUs; about half the CPUs held by
// running jobs whose time limits end over the next two days; and jobs
// pending jobs of 200 users, mixed sizes, one in five asking for GPUs,
// with limits from 10 minutes to 2 days.
func backfillCluster(nodes, jobs int) *schedtest.Cluster {
	rng := rand.New(rand.NewSource(7))
	c := schedtest.New()
	c.AddNodes("n", nodes, 64, 256*1024)
	for i, n := range c.Nodes {
		if i%5 == 0 {
			schedtest.AddGPUs(n, "a100", 8)
		}
	}
	c.AddPartition("batch")
	const now = 100000
	for i, n := range c.Nodes {
		if i%2 == 1 {
			continue
		}
		s := schedtest.Spec()
		s.TimeLimit = int64(600 + rng.Intn(2*86400))
		j := c.Submit(s)
		a := model.NodeAlloc{Node: n.Name, CPUs: 32 + rng.Intn(33), Mem: 64 * 1024}
		if len(n.GPUs) > 0 {
			a.GPUs, _ = model.ParseBitmap("0-3")
		}
		c.Run(j, now-int64(rng.Intn(int(s.TimeLimit))), []model.NodeAlloc{a})
	}
	for range jobs {
		s := schedtest.Spec()
		switch r := rng.Intn(100); {
		case r < 60:
			s.MemPerCPU = 2000
		case r < 75:
			s.MinNodes, s.TasksPerNode = 2+rng.Intn(7), 16
		case r < 80:
			s.NTasks = 32 + rng.Intn(97)
		default:
			s.GPUs = &model.GPUReq{PerNode: []int{1, 2, 4, 8}[rng.Intn(4)]}
			s.CPUsPerTask = 8
		}
		s.TimeLimit = int64(600 + rng.Intn(2*86400))
		j := c.Submit(s)
		j.Priority = uint32(rng.Intn(100000))
		j.UserID = uint32(1000 + rng.Intn(200))
	}
	return c
}

// BenchmarkBackfill is one full pass over 50,000 pending jobs on 10,000
// nodes: the main pass alone (sched/builtin), backfill with Slurm's
// default bf_max_job_test=500, and backfill with no bound, without and
// with a Scratch.
func BenchmarkBackfill10kNodes50kJobs(b *testing.B) {
	c := backfillCluster(10000, 50000)
	in := c.Input()
	for _, bc := range []struct {
		name string
		cfg  sched.Config
	}{
		{"builtin", sched.Config{}},
		{"backfill_max_job_test=500", sched.Config{Backfill: true, BfResolution: 60, BfMaxJobTest: 500}},
		{"backfill_unbounded", sched.Config{Backfill: true, BfResolution: 60}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			var p *sched.Plan
			cpu0 := processCPU()
			for b.Loop() {
				p = sched.Schedule(in, 100000, bc.cfg)
			}
			b.ReportMetric(float64(processCPU()-cpu0)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
			b.ReportMetric(float64(len(p.Starts)), "starts")
			b.ReportMetric(float64(len(p.StartTimes)), "planned")
		})
	}
	// The controller's steady state: one Scratch carried from pass to
	// pass over a queue that barely changes, warmed by a pass before the
	// clock starts (the first pass with a Scratch allocates what later
	// ones take over).
	b.Run("backfill_unbounded_scratch", func(b *testing.B) {
		cfg := sched.Config{Backfill: true, BfResolution: 60}
		var sc sched.Scratch
		sched.ScheduleUntil(in, 100000, cfg, nil, &sc)
		b.ReportAllocs()
		var p *sched.Plan
		cpu0 := processCPU()
		for b.Loop() {
			p = sched.ScheduleUntil(in, 100000, cfg, nil, &sc)
		}
		b.ReportMetric(float64(processCPU()-cpu0)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
		b.ReportMetric(float64(len(p.Starts)), "starts")
		b.ReportMetric(float64(len(p.StartTimes)), "planned")
	})
}

// processCPU is the process's user+system CPU time: on a machine shared
// with other work, wall time per pass says more about the neighbours than
// about the pass (GC workers are counted, as they should be).
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
