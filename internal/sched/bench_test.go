package sched_test

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/sched"
	"github.com/drover-hpc/drover/internal/sched/schedtest"
)

// benchCluster builds nodes × 64-CPU, 256 GiB nodes in partition "batch"
// (plus a high-tier "debug" partition over the first 1%) and a queue of
// jobs: 80% one CPU, 15% 2–8 whole-ish nodes (-N, 16 tasks per node), 5%
// packed -n 32–128. The queue asks for more than the cluster has, so a
// cycle both starts many jobs and blocks the rest.
func benchCluster(nodes, jobs int, busy bool) *schedtest.Cluster {
	rng := rand.New(rand.NewSource(42))
	c := schedtest.New()
	names := c.AddNodes("n", nodes, 64, 256*1024)
	c.AddPartition("batch")
	c.AddPartition("debug", names[:max(1, nodes/100)]...).PriorityTier = 2
	if busy {
		for _, n := range c.Nodes {
			n.AllocCPUs, n.AllocMem = n.CPUs, n.Memory/2
		}
	}
	for range jobs {
		s := schedtest.Spec()
		switch r := rng.Intn(100); {
		case r < 80:
			s.MemPerCPU = 2000
		case r < 95:
			s.MinNodes, s.TasksPerNode = 2+rng.Intn(7), 16
		default:
			s.NTasks = 32 + rng.Intn(97)
		}
		if rng.Intn(50) == 0 {
			s.Partition = "debug"
		}
		c.Submit(s).Priority = uint32(rng.Intn(1000))
	}
	return c
}

func BenchmarkSchedule(b *testing.B) {
	for _, bc := range []struct {
		nodes, jobs int
		busy        bool
	}{
		{10000, 50000, false},
		{10000, 50000, true},
		{1, 10000, false},
	} {
		name := fmt.Sprintf("nodes=%d/jobs=%d", bc.nodes, bc.jobs)
		if bc.busy {
			name += "/full"
		}
		b.Run(name, func(b *testing.B) {
			c := benchCluster(bc.nodes, bc.jobs, bc.busy)
			in := c.Input()
			b.ReportAllocs()
			var p *sched.Plan
			for b.Loop() {
				p = sched.Schedule(in, 0, sched.Config{})
			}
			b.ReportMetric(float64(len(p.Starts)), "starts")
			if err := schedtest.CheckPlan(in, p); err != nil {
				b.Fatal(err)
			}
		})
	}
}

// TestLargeClusterIsFast guards the complexity claims in a normal test
// run: a full 10,000-node cluster with 50,000 pending jobs must not be
// scanned per job (that would take minutes, not milliseconds).
func TestLargeClusterIsFast(t *testing.T) {
	if testing.Short() {
		t.Skip("large")
	}
	c := benchCluster(10000, 50000, false)
	p := schedule(t, c, 0, sched.Config{})
	if len(p.Starts) == 0 || len(p.Reasons) == 0 {
		t.Fatalf("want both starts and waits, got %d starts, %d reasons", len(p.Starts), len(p.Reasons))
	}
	counts := map[string]int{}
	for _, r := range p.Reasons {
		counts[r]++
	}
	if counts[model.ReasonResources] == 0 || counts[model.ReasonPriority] == 0 {
		t.Fatalf("reasons = %v", counts)
	}
}
