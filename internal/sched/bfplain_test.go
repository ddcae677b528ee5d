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

// TestLiveMissKeyed: a request that failed to start now in one partition,
// or with nodes excluded, still starts in another partition, or without
// the exclusion (placeLive keeps failures per partition and request, and
// none for jobs that exclude nodes).
func TestLiveMissKeyed(t *testing.T) {
	cfg := sched.Config{Backfill: true, BfResolution: 60}
	run := func(c *schedtest.Cluster, cpus int, nodes ...string) {
		for _, n := range nodes {
			s := schedtest.Spec()
			s.TimeLimit = 3600
			c.Run(c.Submit(s), 99000, []model.NodeAlloc{{Node: n, CPUs: cpus, Mem: 1024}})
		}
	}
	submit := func(c *schedtest.Cluster, part string, prio uint32, exc ...string) *model.Job {
		s := schedtest.Spec()
		s.Partition, s.TimeLimit, s.CPUsPerTask, s.ExcNodes = part, 600, 4, exc
		j := c.Submit(s)
		j.Priority = prio
		return j
	}
	check := func(name string, p *sched.Plan, want *model.Job) {
		t.Helper()
		if len(p.Starts) != 1 || p.Starts[0].Job != want.ID || p.Starts[0].Alloc[0].Node != "b2" {
			t.Fatalf("%s: starts %+v, want job %d on b2 only", name, p.Starts, want.ID)
		}
	}
	c := schedtest.New()
	c.AddNodes("a", 2, 4, 8192)
	c.AddNodes("b", 2, 4, 8192)
	c.AddPartition("pa", "a1", "a2")
	c.AddPartition("pb", "b1", "b2")
	run(c, 2, "a1", "a2") // pa has 4 CPUs free, 2 on each node
	run(c, 4, "b1")
	submit(c, "pa", 20)      // waits: no node of pa has 4 CPUs free
	j := submit(c, "pb", 10) // the same request in pb: starts on b2
	check("partitions", sched.Schedule(c.Input(), 100000, cfg), j)

	c = schedtest.New()
	c.AddNodes("b", 2, 4, 8192)
	c.AddPartition("pb")
	run(c, 4, "b1")
	submit(c, "pb", 20, "b2") // waits: b1 is busy, b2 excluded
	j = submit(c, "pb", 10)   // the same request: starts on b2
	check("exclusion", sched.Schedule(c.Input(), 100000, cfg), j)
}

// TestLiveMissMaxNodes: a packed request bounded in nodes (-n in a
// partition with MaxNodes, or with a maximum node count of its own) gets
// the same plan with the live placement's failure memo (placeLive) as
// without. First-fit alone took the first node with room and ran out of
// nodes, so a failure did not stay one as the live view shrank (a lower
// twin then fit on the node the first one skipped, the memo said no);
// since placePackWidest such a request fails only where no allowed set
// of nodes holds it, and the first one starts.
func TestLiveMissMaxNodes(t *testing.T) {
	defer sched.SetPlainSearch(false)
	cfg := sched.Config{Backfill: true, BfResolution: 60}
	for _, partBound := range []bool{true, false} {
		c := schedtest.New()
		c.AddNodes("a", 3, 4, 8192)
		if p := c.AddPartition("p"); partBound {
			p.MaxNodes = 1
		}
		busy := schedtest.Spec()
		busy.TimeLimit = 3600
		c.Run(c.Submit(busy), 99000, []model.NodeAlloc{{Node: "a1", CPUs: 3, Mem: 1024}}) // a1: 1 CPU free
		bounded := func(prio uint32) *model.Job {
			s := schedtest.Spec()
			s.TimeLimit, s.NTasks, s.MemPerCPU = 600, 4, 100
			if !partBound {
				s.MaxNodes = 1
			}
			j := c.Submit(s)
			j.Priority = prio
			return j
		}
		x := bounded(30)
		small := schedtest.Spec()
		small.TimeLimit, small.MemPerCPU = 60, 100
		c.Submit(small).Priority = 20 // a1's last CPU
		z := bounded(10)
		var plans [2]*sched.Plan
		for k, plain := range []bool{true, false} {
			sched.SetPlainSearch(plain)
			plans[k] = sched.Schedule(c.Input(), 100000, cfg)
		}
		if !reflect.DeepEqual(plans[0].Starts, plans[1].Starts) {
			t.Fatalf("partition bound %v: starts with the plain search %+v, with the shortcuts %+v", partBound, plans[0].Starts, plans[1].Starts)
		}
		on := map[model.JobID]string{}
		for _, st := range plans[1].Starts {
			on[st.Job] = st.Alloc[0].Node
		}
		if on[x.ID] != "a2" || on[z.ID] != "a3" {
			t.Errorf("partition bound %v: starts %+v, want job %d on a2 and job %d on a3", partBound, plans[1].Starts, x.ID, z.ID)
		}
	}
}

// TestPackedBoundStartsOnRoomyNode: a packed job bounded in nodes (-n 4
// in a MaxNodes=1 partition) starts on an idle node of the partition even
// when a node listed before it has a CPU free: first-fit takes that node's
// one task and runs out of nodes; placePackWidest then takes the nodes
// that hold the most tasks. (Before it, the job waited with a whole node
// idle; Slurm places it on the idle node.)
func TestPackedBoundStartsOnRoomyNode(t *testing.T) {
	c := schedtest.New()
	c.AddNodes("a", 2, 4, 8192)
	c.AddPartition("p").MaxNodes = 1
	busy := schedtest.Spec()
	busy.TimeLimit = 3600
	c.Run(c.Submit(busy), 99000, []model.NodeAlloc{{Node: "a1", CPUs: 3, Mem: 1024}}) // a1: 1 CPU free
	s := schedtest.Spec()
	s.TimeLimit, s.NTasks, s.MemPerCPU = 600, 4, 100
	j := c.Submit(s)
	for _, cfg := range []sched.Config{{}, {Backfill: true, BfResolution: 60}} {
		p := sched.Schedule(c.Input(), 100000, cfg)
		if len(p.Starts) != 1 || p.Starts[0].Job != j.ID || p.Starts[0].Alloc[0].Node != "a2" {
			t.Errorf("backfill %v: starts %+v, want job %d on a2", cfg.Backfill, p.Starts, j.ID)
		}
	}
	// A small node listed before a big one in an idle partition: the job
	// is not judged never to fit (BadConstraints) from first-fit's answer.
	c = schedtest.New()
	c.AddNodes("s", 1, 2, 8192)
	c.AddNodes("b", 1, 8, 8192)
	c.AddPartition("p", "s1", "b1").MaxNodes = 1
	s = schedtest.Spec()
	s.NTasks = 8
	j = c.Submit(s)
	for _, cfg := range []sched.Config{{}, {Backfill: true, BfResolution: 60}} {
		p := sched.Schedule(c.Input(), 100000, cfg)
		if len(p.Starts) != 1 || p.Starts[0].Job != j.ID || p.Starts[0].Alloc[0].Node != "b1" {
			t.Errorf("idle partition, backfill %v: starts %+v, reasons %+v, want job %d on b1", cfg.Backfill, p.Starts, p.Reasons, j.ID)
		}
	}
}
