package sched_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/sched"
	"github.com/drover-hpc/drover/internal/sched/schedtest"
)

func TestFeasible(t *testing.T) {
	const nodeConfig = "Requested node configuration is not available"
	cases := []struct {
		name   string
		cfg    sched.Config
		mod    func(s *model.JobSpec)
		err    bool
		memory bool // the error also matches ErrMemorySpec
	}{
		{name: "default job", mod: nil},
		{name: "down and drained nodes still count", mod: func(s *model.JobSpec) { s.MinNodes = 3 }},
		{name: "more nodes than the partition has", mod: func(s *model.JobSpec) { s.MinNodes = 4 }, err: true},
		{name: "more CPUs per task than a node has", mod: func(s *model.JobSpec) { s.CPUsPerTask = 9 }, err: true},
		{name: "packed tasks up to every CPU", mod: func(s *model.JobSpec) { s.NTasks = 4 + 4 + 8 }},
		{name: "one packed task too many", mod: func(s *model.JobSpec) { s.NTasks = 17 }, err: true},
		{name: "packed tasks bounded by --nodes max", mod: func(s *model.JobSpec) { s.NTasks, s.MaxNodes = 12, 1 }, err: true},
		{name: "the big node by name", mod: func(s *model.JobSpec) { s.ReqNodes = []string{"big"}; s.CPUsPerTask = 8 }},
		{name: "a node outside the partition", mod: func(s *model.JobSpec) { s.ReqNodes = []string{"other"} }, err: true},
		{name: "an unknown node", mod: func(s *model.JobSpec) { s.ReqNodes = []string{"nope"} }, err: true},
		{name: "a node both required and excluded", mod: func(s *model.JobSpec) { s.ReqNodes, s.ExcNodes = []string{"big"}, []string{"big"} }, err: true},
		{name: "excluding every node", mod: func(s *model.JobSpec) { s.ExcNodes = []string{"n1", "n2", "big"} }, err: true},
		{name: "memory of the biggest node", mod: func(s *model.JobSpec) { s.MemPerNode = 4000 }},
		{name: "memory beyond every node", mod: func(s *model.JobSpec) { s.MemPerNode = 4001 }, err: true, memory: true},
		{name: "--mem-per-cpu beyond every node", mod: func(s *model.JobSpec) { s.MemPerCPU, s.CPUsPerTask = 600, 8 }, err: true, memory: true},
		{name: "DefMemPerCPU applies", cfg: sched.Config{DefMemPerCPU: 1000}, mod: func(s *model.JobSpec) { s.CPUsPerTask = 8 }, err: true, memory: true},
		{name: "CPUs and memory both too big: not a memory error", mod: func(s *model.JobSpec) { s.MemPerNode, s.CPUsPerTask = 9000, 9 }, err: true},
		{name: "exclusive", mod: func(s *model.JobSpec) { s.Exclusive, s.MinNodes = true, 3 }},
	}
	c := schedtest.New()
	c.AddNodes("n", 2, 4, 1000)
	c.AddNode("big", 8, 4000)
	c.AddNode("other", 64, 64000)
	c.Node("n1").State = model.NodeDown
	c.Node("n2").Drain = true
	part := c.AddPartition("p", "n1", "n2", "big")
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := sched.Feasible(spec(tc.mod), part, c.Nodes, tc.cfg)
			if (err != nil) != tc.err {
				t.Fatalf("err = %v, want error %v", err, tc.err)
			}
			if err == nil {
				return
			}
			if err.Error() != nodeConfig || !errors.Is(err, sched.ErrNodeConfig) {
				t.Errorf("err = %q, want %q matching ErrNodeConfig", err, nodeConfig)
			}
			if got := errors.Is(err, sched.ErrMemorySpec); got != tc.memory {
				t.Errorf("errors.Is(err, ErrMemorySpec) = %v, want %v", got, tc.memory)
			}
		})
	}
	if err := sched.Feasible(schedtest.Spec(), &model.Partition{Name: "empty"}, c.Nodes, sched.Config{}); !errors.Is(err, sched.ErrNodeConfig) {
		t.Errorf("empty partition: err = %v", err)
	}
}

func TestJobResources(t *testing.T) {
	cases := []struct {
		name  string
		cfg   sched.Config
		mod   func(s *model.JobSpec)
		cpus  int
		mem   int64
		nodes int
	}{
		{"default", sched.Config{}, nil, 1, 0, 1},
		{"-N2 -n5 reports the bigger share", sched.Config{}, func(s *model.JobSpec) { s.MinNodes, s.NTasks = 2, 5 }, 3, 0, 2},
		{"-n10 packs 4 per node", sched.Config{}, func(s *model.JobSpec) { s.NTasks = 10 }, 4, 0, 3},
		{"-n3 fits one node", sched.Config{}, func(s *model.JobSpec) { s.NTasks = 3 }, 3, 0, 1},
		{"-c8 is more than a node", sched.Config{}, func(s *model.JobSpec) { s.CPUsPerTask = 8 }, 8, 0, 1},
		{"exclusive", sched.Config{DefMemPerCPU: 10}, func(s *model.JobSpec) { s.Exclusive = true }, 4, 40, 1},
		{"--mem-per-cpu", sched.Config{}, func(s *model.JobSpec) { s.MemPerCPU, s.CPUsPerTask = 100, 2 }, 2, 200, 1},
		{"--mem=0", sched.Config{}, func(s *model.JobSpec) { s.MemPerNode = 0 }, 1, 1000, 1},
		{"DefMemPerNode", sched.Config{DefMemPerNode: 64}, nil, 1, 64, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cpus, mem, nodes := sched.JobResources(spec(tc.mod), tc.cfg, 4, 1000)
			if cpus != tc.cpus || mem != tc.mem || nodes != tc.nodes {
				t.Errorf("got (%d, %d, %d), want (%d, %d, %d)", cpus, mem, nodes, tc.cpus, tc.mem, tc.nodes)
			}
		})
	}
}

// A Feasibility reused across jobs answers as Feasible does for each,
// whatever came before, and sees a node that changed.
func TestFeasibilityMatchesFeasible(t *testing.T) {
	c := schedtest.New()
	c.AddNodes("n", 2, 4, 1000)
	c.AddNode("big", 8, 4000)
	c.Node("n1").State = model.NodeDown
	c.Node("n1").Features = []string{"fast"}
	c.Node("big").Features = []string{"fast", "gpu"}
	part := c.AddPartition("p", "n1", "n2", "big")
	mods := []func(s *model.JobSpec){
		nil,
		func(s *model.JobSpec) { s.MinNodes = 3 },
		func(s *model.JobSpec) { s.MinNodes = 4 },
		func(s *model.JobSpec) { s.CPUsPerTask = 9 },
		func(s *model.JobSpec) { s.CPUsPerTask = 8 },
		func(s *model.JobSpec) { s.NTasks = 16 },
		func(s *model.JobSpec) { s.NTasks = 17 },
		func(s *model.JobSpec) { s.ReqNodes = []string{"big"}; s.CPUsPerTask = 8 },
		func(s *model.JobSpec) { s.ReqNodes = []string{"n1"}; s.CPUsPerTask = 8 },
		func(s *model.JobSpec) { s.ExcNodes = []string{"big"}; s.CPUsPerTask = 8 },
		func(s *model.JobSpec) { s.MemPerNode = 4000 },
		func(s *model.JobSpec) { s.MemPerNode = 4001 },
		func(s *model.JobSpec) { s.Features = "gpu"; s.CPUsPerTask = 8 },
		func(s *model.JobSpec) { s.Features = "gpu"; s.MinNodes = 2 },
		func(s *model.JobSpec) { s.Features = "fast"; s.MinNodes = 2 },
		func(s *model.JobSpec) { s.Features = "nope" },
		func(s *model.JobSpec) { s.Exclusive, s.MinNodes = true, 3 },
	}
	verdict := func(err error) string {
		switch {
		case err == nil:
			return "fits"
		case errors.Is(err, sched.ErrMemorySpec):
			return "memory"
		case errors.Is(err, sched.ErrNodeConfig):
			return "node config"
		}
		return err.Error()
	}
	var f sched.Feasibility
	check := func(round string) {
		t.Helper()
		order := make([]int, len(mods))
		for i := range order {
			order[i] = i
			if round == "backwards" {
				order[i] = len(mods) - 1 - i
			}
		}
		for _, i := range order {
			want := verdict(sched.Feasible(spec(mods[i]), part, c.Nodes, sched.Config{}))
			if got := verdict(f.Check(spec(mods[i]), part, c.Nodes, sched.Config{})); got != want {
				t.Errorf("%s, job %d: Check says %s, Feasible %s", round, i, got, want)
			}
		}
	}
	check("forwards")
	check("backwards")
	// A node is a new value when it changes: the next check sees it.
	bigger := *c.Node("big")
	bigger.CPUs = 16
	c.Nodes[2] = &bigger
	if err := f.Check(spec(func(s *model.JobSpec) { s.CPUsPerTask = 16 }), part, c.Nodes, sched.Config{}); err != nil {
		t.Errorf("after the node grew to 16 CPUs: %v", err)
	}
	check("after the change")
	// More expressions than it keeps: still right.
	for i := range 100 {
		expr := fmt.Sprintf("f%d", i)
		if i == 99 {
			expr = "gpu"
		}
		err := f.Check(spec(func(s *model.JobSpec) { s.Features = expr }), part, c.Nodes, sched.Config{})
		if (err == nil) != (i == 99) {
			t.Fatalf("--constraint=%s: %v", expr, err)
		}
	}
	check("after many expressions")
}
