package sched_test

import (
	"testing"

	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/sched"
	"github.com/drover-hpc/drover/internal/sched/schedtest"
)

const (
	startN1 = "start n1:1:0"
	startN2 = "start n2:1:0"
)

func TestReasons(t *testing.T) {
	runScenarios(t, []scenario{{
		name: "holds",
		setup: func(c *schedtest.Cluster) {
			oneNode(c, 4, 1000)
			submit(c, 1, nil).HoldUser = true
			j := submit(c, 1, nil)
			j.HoldUser, j.HoldAdmin = true, true
			submit(c, 1, nil)
		},
		want: map[model.JobID]string{1: model.ReasonHeldUser, 2: model.ReasonHeldAdmin, 3: startN1},
	}, {
		name: "begin time",
		now:  1000,
		setup: func(c *schedtest.Cluster) {
			oneNode(c, 4, 1000)
			submit(c, 1, func(s *model.JobSpec) { s.BeginTime = 1001 })
			submit(c, 1, func(s *model.JobSpec) { s.BeginTime = 1000 })
		},
		want: map[model.JobID]string{1: model.ReasonBeginTime, 2: startN1},
	}, {
		name: "partition states; DRAIN still starts queued jobs",
		setup: func(c *schedtest.Cluster) {
			c.AddNodes("n", 3, 4, 1000)
			c.AddPartition("down", "n1").State = model.PartDown
			c.AddPartition("inactive", "n2").State = model.PartInactive
			c.AddPartition("drain", "n3").State = model.PartDrain
			submit(c, 1, func(s *model.JobSpec) { s.Partition = "down" })
			submit(c, 1, func(s *model.JobSpec) { s.Partition = "inactive" })
			submit(c, 1, func(s *model.JobSpec) { s.Partition = "drain" })
			submit(c, 1, func(s *model.JobSpec) { s.Partition = "gone" })
		},
		want: map[model.JobID]string{1: model.ReasonPartitionDown, 2: model.ReasonPartitionInactive,
			3: "start n3:1:0", 4: "PartitionConfig"},
	}, {
		name: "partition time limit",
		setup: func(c *schedtest.Cluster) {
			oneNode(c, 4, 1000)
			c.Partitions["p"].MaxTime = 3600
			submit(c, 1, func(s *model.JobSpec) { s.TimeLimit = 3601 })
			submit(c, 1, func(s *model.JobSpec) { s.TimeLimit = model.Unlimited })
			submit(c, 1, func(s *model.JobSpec) { s.TimeLimit = 3600 })
		},
		want: map[model.JobID]string{1: model.ReasonPartitionTime, 2: model.ReasonPartitionTime, 3: startN1},
	}, {
		name: "partition node limits",
		setup: func(c *schedtest.Cluster) {
			c.AddNodes("n", 3, 4, 1000)
			c.AddPartition("p").MaxNodes = 2
			c.AddPartition("q").MinNodes = 2
			submit(c, 1, func(s *model.JobSpec) { s.MinNodes = 3 })
			submit(c, 1, func(s *model.JobSpec) { s.MinNodes = 2 })
			submit(c, 1, func(s *model.JobSpec) { s.Partition = "q" })
			// 12 packed tasks need 3 nodes: more than MaxNodes allows.
			submit(c, 1, func(s *model.JobSpec) { s.NTasks = 12 })
		},
		want: map[model.JobID]string{1: model.ReasonPartitionNodes, 2: "start n1:1:0 n2:1:0",
			3: model.ReasonPartitionNodes, 4: model.ReasonPartitionNodes},
	}, {
		name: "Resources then Priority, even for a job that would fit",
		setup: func(c *schedtest.Cluster) {
			oneNode(c, 4, 1000)
			submit(c, 1, func(s *model.JobSpec) { s.CPUsPerTask = 2 }).Priority = 10
			submit(c, 1, func(s *model.JobSpec) { s.NTasks = 4 }).Priority = 5
			submit(c, 1, nil).Priority = 1
		},
		want: map[model.JobID]string{1: "start n1:2:0", 2: model.ReasonResources, 3: model.ReasonPriority},
	}, {
		name: "no free CPU anywhere",
		setup: func(c *schedtest.Cluster) {
			oneNode(c, 2, 1000)
			c.Node("n1").AllocCPUs = 2
			submit(c, 2, nil)
		},
		want: map[model.JobID]string{1: model.ReasonResources, 2: model.ReasonPriority},
	}, {
		name: "non-resource waits do not block lower jobs",
		setup: func(c *schedtest.Cluster) {
			oneNode(c, 1, 1000)
			submit(c, 1, nil).HoldUser = true
			submit(c, 1, func(s *model.JobSpec) {
				s.Dependency = &model.Dependency{Terms: []model.DepTerm{{Type: model.DepAfterOK, Job: 99, Task: -1}}}
			})
			submit(c, 1, func(s *model.JobSpec) { s.BeginTime = 50 })
			submit(c, 1, func(s *model.JobSpec) { s.CPUsPerTask = 2 }) // never fits: BadConstraints
			for i, j := range c.Pending() {
				j.Priority = uint32(10 - i)
			}
			submit(c, 1, nil)
		},
		want: map[model.JobID]string{1: model.ReasonHeldUser, 2: model.ReasonDepNeverSatisfied,
			3: model.ReasonBeginTime, 4: model.ReasonBadConstraints, 5: startN1},
		depFailed: []model.JobID{2},
	}, {
		name: "unavailable nodes: down, drained, not responding",
		setup: func(c *schedtest.Cluster) {
			c.AddNodes("n", 6, 4, 1000)
			c.Node("n1").State = model.NodeDown
			c.Node("n2").Drain = true
			c.Node("n3").Responding = false
			c.Node("n5").Drain = true
			c.AddPartition("p", "n1", "n2", "n3")
			c.AddPartition("q", "n4")
			c.AddPartition("r", "n5", "n6")
			submit(c, 2, nil) // two, to show it does not block the second
			submit(c, 1, func(s *model.JobSpec) { s.Partition = "q" })
			submit(c, 1, func(s *model.JobSpec) { s.Partition = "r"; s.ReqNodes = []string{"n5"} })
			submit(c, 1, func(s *model.JobSpec) { s.Partition = "r" })
		},
		want: map[model.JobID]string{
			1: "ReqNodeNotAvail, UnavailableNodes:n[1-3]", 2: "ReqNodeNotAvail, UnavailableNodes:n[1-3]",
			3: "start n4:1:0", 4: "ReqNodeNotAvail, UnavailableNodes:n5", 5: "start n6:1:0"},
	}, {
		name: "bad constraints: no partition node set could ever hold it",
		setup: func(c *schedtest.Cluster) {
			oneNode(c, 4, 1000)
			submit(c, 1, func(s *model.JobSpec) { s.CPUsPerTask = 8 })
			submit(c, 1, func(s *model.JobSpec) { s.MinNodes = 2 })
			submit(c, 1, func(s *model.JobSpec) { s.ReqNodes = []string{"zz"} })
			submit(c, 1, func(s *model.JobSpec) { s.MemPerNode = 1001 })
			submit(c, 1, nil)
		},
		// More nodes than the partition has: Slurm's PartitionNodeLimit.
		want: map[model.JobID]string{1: model.ReasonBadConstraints, 2: model.ReasonPartitionNodes,
			3: model.ReasonBadConstraints, 4: model.ReasonBadConstraints, 5: startN1},
	}, {
		name: "required node busy: Resources; its partition's nodes are withheld",
		setup: func(c *schedtest.Cluster) {
			c.AddNodes("n", 2, 1, 1000)
			c.AddPartition("p")
			c.AddPartition("q")
			c.Node("n1").AllocCPUs = 1
			submit(c, 1, func(s *model.JobSpec) { s.ReqNodes = []string{"n1"} })
			submit(c, 1, nil)
			submit(c, 1, func(s *model.JobSpec) { s.Partition = "q"; s.ExcNodes = []string{"n2"} })
		},
		want: map[model.JobID]string{1: model.ReasonResources, 2: model.ReasonPriority, 3: model.ReasonResources},
	}})
}

func TestOrdering(t *testing.T) {
	runScenarios(t, []scenario{{
		name: "priority desc, then job id asc",
		setup: func(c *schedtest.Cluster) {
			oneNode(c, 1, 1000)
			submit(c, 1, nil).Priority = 1
			submit(c, 1, nil).Priority = 5
			submit(c, 1, nil).Priority = 5
		},
		want: map[model.JobID]string{1: model.ReasonPriority, 2: startN1, 3: model.ReasonResources},
	}, {
		name: "partition PriorityTier before job priority",
		setup: func(c *schedtest.Cluster) {
			oneNode(c, 1, 1000)
			c.AddPartition("hi").PriorityTier = 2
			submit(c, 1, nil).Priority = 100
			submit(c, 1, func(s *model.JobSpec) { s.Partition = "hi" }).Priority = 1
		},
		want: map[model.JobID]string{1: model.ReasonResources, 2: startN1},
	}, {
		name: "lower Weight first, unusable nodes skipped",
		setup: func(c *schedtest.Cluster) {
			c.AddNodes("n", 3, 1, 1000)
			c.Node("n1").Weight = 10
			c.Node("n2").State = model.NodeDown
			c.AddPartition("p")
			submit(c, 2, nil)
		},
		want: map[model.JobID]string{1: "start n3:1:0", 2: startN1},
	}, {
		name: "allocation listed in node-table order, not pick order",
		setup: func(c *schedtest.Cluster) {
			c.AddNodes("n", 2, 1, 1000)
			c.AddPartition("p", "n2", "n1")
			submit(c, 1, func(s *model.JobSpec) { s.MinNodes = 2 })
		},
		want: map[model.JobID]string{1: "start n1:1:0 n2:1:0"},
	}, {
		name: "a blocked partition's nodes are withheld from overlapping partitions",
		setup: func(c *schedtest.Cluster) {
			c.AddNodes("n", 5, 1, 1000)
			c.Node("n1").AllocCPUs = 1
			c.AddPartition("p1", "n1", "n2")
			c.AddPartition("p2", "n2", "n3")
			c.AddPartition("p3", "n4")
			c.AddPartition("p4", "n2", "n5")
			submit(c, 1, func(s *model.JobSpec) { s.Partition = "p1"; s.MinNodes = 2 }).Priority = 10
			// Fits only with the withheld n2: Priority, and p2 blocks too.
			submit(c, 1, func(s *model.JobSpec) { s.Partition = "p2"; s.MinNodes = 2 }).Priority = 6
			submit(c, 1, func(s *model.JobSpec) { s.Partition = "p3" }).Priority = 5
			submit(c, 1, func(s *model.JobSpec) { s.Partition = "p2" }).Priority = 4
			submit(c, 1, func(s *model.JobSpec) { s.Partition = "p4" }).Priority = 3
			submit(c, 1, func(s *model.JobSpec) { s.Partition = "p1" }).Priority = 1
		},
		want: map[model.JobID]string{1: model.ReasonResources, 2: model.ReasonPriority, 3: "start n4:1:0",
			4: model.ReasonPriority, 5: "start n5:1:0", 6: model.ReasonPriority},
	}})
}

func TestPacking(t *testing.T) {
	runScenarios(t, []scenario{{
		name: "several jobs share a node, then spill to the next",
		setup: func(c *schedtest.Cluster) {
			c.AddNodes("n", 2, 4, 1000)
			c.AddPartition("p")
			submit(c, 5, nil)
		},
		want: map[model.JobID]string{1: startN1, 2: startN1, 3: startN1, 4: startN1, 5: startN2},
	}, {
		name: "first fit fills gaps left by bigger jobs",
		setup: func(c *schedtest.Cluster) {
			c.AddNodes("n", 2, 4, 1000)
			c.AddPartition("p")
			submit(c, 1, func(s *model.JobSpec) { s.CPUsPerTask = 3 })
			submit(c, 1, func(s *model.JobSpec) { s.CPUsPerTask = 2 })
			submit(c, 1, nil)
			submit(c, 1, func(s *model.JobSpec) { s.CPUsPerTask = 2 })
			submit(c, 1, nil)
		},
		want: map[model.JobID]string{1: "start n1:3:0", 2: "start n2:2:0", 3: startN1, 4: "start n2:2:0",
			5: model.ReasonResources},
	}, {
		name: "memory limits sharing",
		setup: func(c *schedtest.Cluster) {
			c.AddNodes("n", 2, 4, 1000)
			c.AddPartition("p")
			submit(c, 3, func(s *model.JobSpec) { s.MemPerNode = 600 })
		},
		want: map[model.JobID]string{1: "start n1:1:600", 2: "start n2:1:600", 3: model.ReasonResources},
	}, {
		name: "exclusive takes whole idle nodes only",
		setup: func(c *schedtest.Cluster) {
			c.AddNodes("n", 2, 4, 1000)
			c.AddPartition("p")
			submit(c, 1, nil).Priority = 10
			submit(c, 1, func(s *model.JobSpec) { s.Exclusive = true; s.MemPerCPU = 100 }).Priority = 5
			submit(c, 1, func(s *model.JobSpec) { s.Exclusive = true }).Priority = 1
		},
		want: map[model.JobID]string{1: startN1, 2: "start n2:4:400", 3: model.ReasonResources},
	}, {
		name: "whole-node memory needs a node with no memory in use",
		setup: func(c *schedtest.Cluster) {
			c.AddNodes("n", 2, 4, 1000)
			c.AddPartition("p")
			c.Node("n1").AllocCPUs, c.Node("n1").AllocMem = 1, 100
			submit(c, 1, func(s *model.JobSpec) { s.MemPerNode = 0 })
		},
		want: map[model.JobID]string{1: "start n2:1:1000"},
	}, {
		name: "array throttle counts running, completing and just-started tasks",
		setup: func(c *schedtest.Cluster) {
			oneNode(c, 8, 1000)
			tasks := c.SubmitArray(spec(func(s *model.JobSpec) {
				s.Array = &model.ArraySpec{Raw: "0-5%3", TaskIDs: []int{0, 1, 2, 3, 4, 5}, Throttle: 3}
			}))
			c.Run(tasks[0], 1, []model.NodeAlloc{{Node: "n1", CPUs: 1}})
			c.Finish(tasks[1], model.JobCompleted, 0, 2)
			tasks[1].Completing = true // still cleaning up: holds its slot
		},
		want: map[model.JobID]string{3: startN1, 4: model.ReasonArrayTaskLimit,
			5: model.ReasonArrayTaskLimit, 6: model.ReasonArrayTaskLimit},
	}, {
		name: "MaxJobsPerCycle leaves the rest with their old reason or None",
		cfg:  sched.Config{MaxJobsPerCycle: 2},
		setup: func(c *schedtest.Cluster) {
			oneNode(c, 8, 1000)
			submit(c, 3, nil)
			submit(c, 1, nil).Reason = model.ReasonPriority
		},
		want: map[model.JobID]string{1: startN1, 2: startN1, 3: model.ReasonNone, 4: model.ReasonPriority},
	}})
}

// TestLayouts places one job on an idle cluster of three 4-CPU, 1000 MiB
// nodes and checks exactly what it gets.
func TestLayouts(t *testing.T) {
	cases := []struct {
		name string
		cfg  sched.Config
		mod  func(s *model.JobSpec)
		want string
	}{
		{"default: one task, one CPU", sched.Config{}, nil, startN1},
		{"-N2 -n4 splits evenly", sched.Config{}, func(s *model.JobSpec) { s.MinNodes, s.NTasks = 2, 4 }, "start n1:2:0 n2:2:0"},
		{"-N2 -n3 gives the first node the extra task", sched.Config{}, func(s *model.JobSpec) { s.MinNodes, s.NTasks = 2, 3 }, "start n1:2:0 n2:1:0"},
		{"-n6 packs onto as few nodes as fit", sched.Config{}, func(s *model.JobSpec) { s.NTasks = 6 }, "start n1:4:0 n2:2:0"},
		{"-n2 -c3: a task never spans nodes", sched.Config{}, func(s *model.JobSpec) { s.NTasks, s.CPUsPerTask = 2, 3 }, "start n1:3:0 n2:3:0"},
		{"-N3: one task per node", sched.Config{}, func(s *model.JobSpec) { s.MinNodes = 3 }, "start n1:1:0 n2:1:0 n3:1:0"},
		{"--ntasks-per-node=2 -N2 -c2", sched.Config{}, func(s *model.JobSpec) { s.TasksPerNode, s.MinNodes, s.CPUsPerTask = 2, 2, 2 }, "start n1:4:0 n2:4:0"},
		{"--ntasks-per-node=2 -n5 derives 3 nodes", sched.Config{}, func(s *model.JobSpec) { s.TasksPerNode, s.NTasks = 2, 5 }, "start n1:2:0 n2:2:0 n3:1:0"},
		{"-w grows the node count", sched.Config{}, func(s *model.JobSpec) { s.ReqNodes = []string{"n3", "n2"} }, "start n2:1:0 n3:1:0"},
		{"-x skips nodes", sched.Config{}, func(s *model.JobSpec) { s.ExcNodes = []string{"n1"} }, startN2},
		{"-N4 on three nodes", sched.Config{}, func(s *model.JobSpec) { s.MinNodes = 4 }, model.ReasonPartitionNodes},
		{"-n13 on twelve CPUs", sched.Config{}, func(s *model.JobSpec) { s.NTasks = 13 }, model.ReasonBadConstraints},
		{"-n6 with --nodes max 1", sched.Config{}, func(s *model.JobSpec) { s.NTasks, s.MaxNodes = 6, 1 }, model.ReasonBadConstraints},
		{"exclusive takes every CPU", sched.Config{}, func(s *model.JobSpec) { s.Exclusive = true }, "start n1:4:0"},
		{"exclusive -n6 packs whole nodes", sched.Config{}, func(s *model.JobSpec) { s.Exclusive, s.NTasks = true, 6 }, "start n1:4:0 n2:4:0"},
		{"--mem", sched.Config{}, func(s *model.JobSpec) { s.MemPerNode = 300 }, "start n1:1:300"},
		{"--mem=0 is the whole node", sched.Config{}, func(s *model.JobSpec) { s.MemPerNode = 0 }, "start n1:1:1000"},
		{"--mem-per-cpu scales with CPUs", sched.Config{}, func(s *model.JobSpec) { s.MemPerCPU, s.CPUsPerTask = 100, 2 }, "start n1:2:200"},
		{"--mem-per-cpu limits tasks per node", sched.Config{}, func(s *model.JobSpec) { s.NTasks, s.MemPerCPU = 4, 400 }, "start n1:2:800 n2:2:800"},
		{"DefMemPerCPU", sched.Config{DefMemPerCPU: 50}, func(s *model.JobSpec) { s.CPUsPerTask = 2 }, "start n1:2:100"},
		{"DefMemPerNode", sched.Config{DefMemPerNode: 256}, nil, "start n1:1:256"},
		{"DefMemPerCPU wins over DefMemPerNode", sched.Config{DefMemPerCPU: 50, DefMemPerNode: 256}, nil, "start n1:1:50"},
		{"an explicit request beats defaults", sched.Config{DefMemPerCPU: 50}, func(s *model.JobSpec) { s.MemPerNode = 10 }, "start n1:1:10"},
		{"no memory asked, no default: untracked", sched.Config{}, nil, startN1},
		{"more memory than any node", sched.Config{}, func(s *model.JobSpec) { s.MemPerNode = 1001 }, model.ReasonBadConstraints},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := schedtest.New()
			c.AddNodes("n", 3, 4, 1000)
			c.AddPartition("p")
			submit(c, 1, tc.mod)
			if got := outcomes(schedule(t, c, 0, tc.cfg))[1]; got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestScheduleDoesNotWriteInput(t *testing.T) {
	c := schedtest.New()
	c.AddNodes("n", 2, 4, 1000)
	c.AddPartition("p")
	submit(c, 3, func(s *model.JobSpec) { s.NTasks = 3 })
	before := make([]model.Node, len(c.Nodes))
	for i, n := range c.Nodes {
		before[i] = *n
	}
	in := c.Input()
	p1 := sched.Schedule(in, 0, sched.Config{})
	p2 := sched.Schedule(in, 0, sched.Config{})
	for i, n := range c.Nodes {
		if n.AllocCPUs != before[i].AllocCPUs || n.AllocMem != before[i].AllocMem {
			t.Fatalf("node %s changed: %+v", n.Name, *n)
		}
	}
	if show(outcomes(p1)) != show(outcomes(p2)) {
		t.Fatalf("same input, different plans:\n%s\n%s", show(outcomes(p1)), show(outcomes(p2)))
	}
}

func TestStaleInputNeverStartsTwice(t *testing.T) {
	c := schedtest.New()
	oneNode(c, 4, 1000)
	j := submit(c, 1, nil)
	in := c.Input()
	in.Pending = append(in.Pending, j, nil, &model.Job{ID: 9, State: model.JobRunning, Spec: schedtest.Spec()})
	p := sched.Schedule(in, 0, sched.Config{})
	if len(p.Starts) != 1 || len(p.Reasons) != 0 {
		t.Fatalf("plan = %+v", p)
	}
}

func TestNilJobIndex(t *testing.T) {
	c := schedtest.New()
	oneNode(c, 4, 1000)
	submit(c, 1, after(false, on(model.DepAfterOK, 99)))
	submit(c, 1, after(false, model.DepTerm{Type: model.DepSingleton, Task: model.NoArrayTask}))
	c.SubmitArray(spec(func(s *model.JobSpec) { s.Array = &model.ArraySpec{TaskIDs: []int{0, 1}, Throttle: 1} }))
	in := c.Input()
	in.Jobs = nil
	p := sched.Schedule(in, 0, sched.Config{})
	want := map[model.JobID]string{1: model.ReasonDependency, 2: startN1, 3: startN1, 4: model.ReasonArrayTaskLimit}
	if got := outcomes(p); show(got) != show(want) || len(p.DepFailed) != 0 {
		t.Fatalf("got %s, DepFailed %v; want %s", show(got), p.DepFailed, show(want))
	}
}
