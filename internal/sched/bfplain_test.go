package sched_test

import (
	"fmt"
	"math/rand"
	"reflect"
	"slices"
	"testing"

	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/sched"
	"github.com/drover-hpc/drover/internal/sched/schedtest"
)

// TestSearchShortcutsKeepPlans compares plans made with the backfill
// search's shortcuts (bfpack.go, bfseed.go, job-limit bounds in
// bfbounds.go) and without them: starts with their
// CPU and GPU ids, planned starts and nodes, and every reason must be the
// same, on the benchmark's cluster shape, on clusters with overlapping
// partitions, GPU types, features, exclusions and exclusive jobs, and on
// small random clusters over several cycles.
func TestSearchShortcutsKeepPlans(t *testing.T) {
	defer sched.SetPlainSearch(false)
	cfgs := []sched.Config{
		{Backfill: true, BfResolution: 60},
		{Backfill: true, BfResolution: 300, BfWindow: 86400},
		{Backfill: true, BfResolution: 1, BfMaxJobUser: 40},
	}
	compare := func(name string, in *sched.Input, now int64, cfg sched.Config) *sched.Plan {
		t.Helper()
		sched.SetPlainSearch(true)
		want := sched.Schedule(in, now, cfg)
		sched.SetPlainSearch(false)
		got := sched.Schedule(in, now, cfg)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s %+v: plans differ with the search's shortcuts (%d starts, %d planned; want %d, %d)",
				name, cfg, len(got.Starts), len(got.StartTimes), len(want.Starts), len(want.StartTimes))
		}
		return got
	}
	planned := 0
	for _, cfg := range cfgs {
		in := backfillCluster(200, 1500).Input()
		planned += len(compare("backfillCluster", in, 100000, cfg).StartTimes)
		for seed := range int64(3) {
			in := mixedCluster(seed, 150, 1200).Input()
			planned += len(compare(fmt.Sprint("mixed ", seed), in, 100000, cfg).StartTimes)
		}
	}
	if planned < 1000 {
		t.Fatalf("only %d planned starts: the clusters test little", planned)
	}
	for seed := range int64(150) {
		rng := rand.New(rand.NewSource(seed))
		c := schedtest.Random(rng)
		cfg := sched.Config{Backfill: true, BfResolution: int64(1 + rng.Intn(100))}
		if rng.Intn(3) == 0 {
			cfg.BfWindow = int64(600 + rng.Intn(7200))
		}
		now := int64(1000)
		for cycle := range 4 {
			p := compare(fmt.Sprintf("random seed %d cycle %d", seed, cycle), c.Input(), now, cfg)
			if err := c.Apply(p, now); err != nil {
				t.Fatal(err)
			}
			now += int64(rng.Intn(120))
			ids := make([]model.JobID, 0, len(c.Jobs))
			for id := range c.Jobs {
				ids = append(ids, id)
			}
			slices.Sort(ids)
			for _, id := range ids {
				if j := c.Jobs[id]; j.State == model.JobRunning && rng.Intn(2) == 0 {
					c.Finish(j, model.JobCompleted, 0, now)
				}
			}
		}
	}
}

// mixedCluster has three overlapping partitions (one of GPU nodes of two
// types, one with a MaxTime), node weights, features and drained nodes,
// running jobs with and without limits, and a queue of every layout: -n
// with memory, -N with tasks per node, packed, exclusive, GPU jobs (some
// typed, some on two nodes), feature constraints and -x.
func mixedCluster(seed int64, nodes, jobs int) *schedtest.Cluster {
	rng := rand.New(rand.NewSource(seed))
	c := schedtest.New()
	names := c.AddNodes("n", nodes, 64, 256*1024)
	var gpuNames []string
	for i, n := range c.Nodes {
		n.Weight = 1 + rng.Intn(3)
		if i%4 == 0 {
			schedtest.AddGPUs(n, []string{"a100", "v100"}[rng.Intn(2)], 4+4*rng.Intn(2))
			gpuNames = append(gpuNames, n.Name)
		}
		if rng.Intn(3) == 0 {
			n.Features = []string{"fast"}
		}
		if rng.Intn(50) == 0 {
			n.Drain = true
		}
	}
	c.AddPartition("batch", names...)
	c.AddPartition("gpu", gpuNames...).PriorityTier = 1 + rng.Intn(2)
	c.AddPartition("short", names[:nodes/2]...).MaxTime = 4 * 3600
	const now = 100000
	for _, n := range c.Nodes {
		if rng.Intn(3) == 0 {
			continue
		}
		s := schedtest.Spec()
		s.TimeLimit = int64(600 + rng.Intn(2*86400))
		if rng.Intn(20) == 0 {
			s.TimeLimit = 0
		}
		j := c.Submit(s)
		a := model.NodeAlloc{Node: n.Name, CPUs: 8 + rng.Intn(57), Mem: int64(rng.Intn(200 * 1024))}
		if len(n.GPUs) > 0 && rng.Intn(2) == 0 {
			a.GPUs, _ = model.ParseBitmap("0-1")
		}
		c.Run(j, now-int64(rng.Intn(int(max(1, s.TimeLimit)))), []model.NodeAlloc{a})
	}
	for range jobs {
		s := schedtest.Spec()
		s.Partition = "batch"
		switch r := rng.Intn(100); {
		case r < 50:
			s.MemPerCPU = int64(500 + rng.Intn(4000))
			s.NTasks = 1 + rng.Intn(4)
		case r < 65:
			s.MinNodes, s.TasksPerNode = 1+rng.Intn(8), 1+rng.Intn(32)
		case r < 72:
			s.NTasks = 16 + rng.Intn(200)
		case r < 75:
			s.MinNodes = 1 + rng.Intn(3)
			s.Exclusive = true
		case r < 80:
			s.Partition = "short"
			s.NTasks = 1 + rng.Intn(64)
		default:
			s.Partition = "gpu"
			s.GPUs = &model.GPUReq{PerNode: []int{1, 2, 4, 8}[rng.Intn(4)]}
			if rng.Intn(3) == 0 {
				s.GPUs.Type = "a100"
			}
			if rng.Intn(4) == 0 {
				s.MinNodes = 2
			}
			s.CPUsPerTask = 1 + rng.Intn(16)
		}
		if rng.Intn(10) == 0 {
			s.Features = "fast"
		}
		if rng.Intn(15) == 0 {
			s.ExcNodes = []string{names[rng.Intn(nodes)], names[rng.Intn(nodes)]}
		}
		s.TimeLimit = int64(60 + rng.Intn(3*86400))
		if rng.Intn(30) == 0 {
			s.TimeLimit = 0
		}
		j := c.Submit(s)
		j.Priority = uint32(rng.Intn(100000))
		j.UserID = uint32(1000 + rng.Intn(50))
	}
	return c
}

// TestSearchShortcutsWideGPUNodes is TestSearchShortcutsKeepPlans on mixed
// clusters where some GPU nodes have more than 64 GPUs, alike in CPUs and
// memory to the others: the earliest-start search counts such a node's
// GPUs apart (holds), and must not take the thresholds kept from a node
// whose GPUs it counted as a word.
func TestSearchShortcutsWideGPUNodes(t *testing.T) {
	defer sched.SetPlainSearch(false)
	wide := 0
	for seed := range int64(3) {
		c := mixedCluster(seed, 150, 1200)
		for i, n := range c.Nodes {
			if len(n.GPUs) > 0 && i%3 == 0 {
				schedtest.AddGPUs(n, n.GPUs[0].Type, 72)
				wide++
			}
		}
		in := c.Input()
		cfg := sched.Config{Backfill: true, BfResolution: 60}
		sched.SetPlainSearch(true)
		want := sched.Schedule(in, 100000, cfg)
		sched.SetPlainSearch(false)
		got := sched.Schedule(in, 100000, cfg)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("seed %d: plans differ with the search's shortcuts (%d starts, %d planned; want %d, %d)",
				seed, len(got.Starts), len(got.StartTimes), len(want.Starts), len(want.StartTimes))
		}
		if len(got.StartTimes) < 100 {
			t.Fatalf("seed %d: only %d planned starts", seed, len(got.StartTimes))
		}
	}
	if wide == 0 {
		t.Fatal("no node has more than 64 GPUs")
	}
}
