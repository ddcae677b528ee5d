package sched_test

import (
	"errors"
	"testing"

	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/sched"
	"github.com/drover-hpc/drover/internal/sched/schedtest"
)

func gpuSpec(mod func(s *model.JobSpec, g *model.GPUReq)) func(s *model.JobSpec) {
	return func(s *model.JobSpec) {
		s.GPUs = &model.GPUReq{}
		mod(s, s.GPUs)
	}
}

// allocOf runs one cycle and returns each started job's allocation.
func allocOf(t *testing.T, c *schedtest.Cluster) map[model.JobID][]model.NodeAlloc {
	t.Helper()
	p := schedule(t, c, 0, sched.Config{})
	out := map[model.JobID][]model.NodeAlloc{}
	for _, s := range p.Starts {
		out[s.Job] = s.Alloc
	}
	return out
}

func TestGPUPlacement(t *testing.T) {
	t.Run("distinct indices and lowest CPU ids", func(t *testing.T) {
		c := schedtest.New()
		n := c.AddNode("n1", 8, 8000)
		schedtest.AddGPUs(n, "a100", 4)
		c.AddPartition("p")
		submit(c, 3, gpuSpec(func(_ *model.JobSpec, g *model.GPUReq) { g.PerNode = 1 }))
		submit(c, 1, gpuSpec(func(_ *model.JobSpec, g *model.GPUReq) { g.PerNode = 2 }))
		got := allocOf(t, c)
		want := map[model.JobID][2]string{1: {"0", "0"}, 2: {"1", "1"}, 3: {"2", "2"}}
		for id, w := range want {
			a := got[id]
			if len(a) != 1 || a[0].CPUIDs.String() != w[0] || a[0].GPUs.String() != w[1] {
				t.Errorf("job %d alloc %+v, want cpus %s gpus %s", id, a, w[0], w[1])
			}
		}
		if _, ok := got[4]; ok {
			t.Errorf("job 4 (2 GPUs) started with only 1 left: %+v", got[4])
		}
	})
	t.Run("type filter", func(t *testing.T) {
		c := schedtest.New()
		n := c.AddNode("n1", 8, 8000)
		schedtest.AddGPUs(n, "v100", 2)
		schedtest.AddGPUs(n, "a100", 2)
		c.AddPartition("p")
		submit(c, 1, gpuSpec(func(_ *model.JobSpec, g *model.GPUReq) { g.PerNode, g.Type = 2, "a100" }))
		submit(c, 1, gpuSpec(func(_ *model.JobSpec, g *model.GPUReq) { g.PerNode, g.Type = 1, "a100" }))
		got := allocOf(t, c)
		if a := got[1]; len(a) != 1 || a[0].GPUs.String() != "2-3" {
			t.Errorf("job 1 = %+v, want GPUs 2-3", a)
		}
		if _, ok := got[2]; ok {
			t.Errorf("job 2 started though no a100 is left")
		}
	})
	t.Run("per task, cpus and memory per gpu", func(t *testing.T) {
		c := schedtest.New()
		n := c.AddNode("n1", 16, 64000)
		schedtest.AddGPUs(n, "", 4)
		c.AddPartition("p")
		submit(c, 1, gpuSpec(func(s *model.JobSpec, g *model.GPUReq) {
			s.NTasks, g.PerTask, g.CPUsPerGPU, g.MemPerGPU = 2, 2, 3, 1000
		}))
		got := allocOf(t, c)
		a := got[1]
		if len(a) != 1 || a[0].GPUs.Count() != 4 || a[0].CPUs != 12 || a[0].Mem != 4000 {
			t.Fatalf("alloc %+v, want 4 GPUs, 12 CPUs, 4000 MiB", a)
		}
	})
	t.Run("total spreads over nodes", func(t *testing.T) {
		c := schedtest.New()
		for _, name := range c.AddNodes("n", 3, 4, 4000) {
			schedtest.AddGPUs(c.Node(name), "", 2)
		}
		c.AddPartition("p")
		c.Run(submit(c, 1, nil), 0, []model.NodeAlloc{{Node: "n1", CPUs: 1, CPUIDs: model.BitmapOf(0), GPUs: model.BitmapOf(0)}})
		submit(c, 1, gpuSpec(func(s *model.JobSpec, g *model.GPUReq) { s.MinNodes, g.Total = 2, 4 }))
		got := allocOf(t, c)
		a := got[2]
		if len(a) != 2 || a[0].Node != "n2" || a[1].Node != "n3" || a[0].GPUs.Count() != 2 || a[1].GPUs.Count() != 2 {
			t.Fatalf("alloc %+v, want 2 GPUs on each of n2, n3 (n1 has one left)", a)
		}
		if a[0].CPUIDs.String() != "0" {
			t.Errorf("CPU ids %q on an idle node, want 0", a[0].CPUIDs)
		}
	})
	t.Run("waits for GPUs with reason Resources", func(t *testing.T) {
		c := schedtest.New()
		n := c.AddNode("n1", 8, 8000)
		schedtest.AddGPUs(n, "", 1)
		c.AddPartition("p")
		c.Run(submit(c, 1, nil), 0, []model.NodeAlloc{{Node: "n1", CPUs: 1, CPUIDs: model.BitmapOf(0), GPUs: model.BitmapOf(0)}})
		j := submit(c, 1, gpuSpec(func(_ *model.JobSpec, g *model.GPUReq) { g.PerNode = 1 }))
		cpuOnly := submit(c, 1, nil)
		p := schedule(t, c, 0, sched.Config{})
		if p.Reasons[j.ID] != model.ReasonResources {
			t.Errorf("GPU job reason %q, want Resources", p.Reasons[j.ID])
		}
		if len(p.Starts) != 0 {
			t.Errorf("starts %+v: the CPU-only job must wait behind the blocked GPU job (%d)", p.Starts, cpuOnly.ID)
		}
	})
	t.Run("CPU ids skip allocated ones", func(t *testing.T) {
		c := schedtest.New()
		oneNode(c, 4, 4000)
		c.Run(submit(c, 1, nil), 0, []model.NodeAlloc{{Node: "n1", CPUs: 2, CPUIDs: model.BitmapOf(0, 2)}})
		submit(c, 1, func(s *model.JobSpec) { s.NTasks = 2 })
		got := allocOf(t, c)
		if a := got[2]; len(a) != 1 || a[0].CPUIDs.String() != "1,3" {
			t.Errorf("alloc %+v, want CPU ids 1,3", a)
		}
	})
}

func TestGPUFeasible(t *testing.T) {
	c := schedtest.New()
	n := c.AddNode("n1", 8, 8000)
	schedtest.AddGPUs(n, "a100", 2)
	part := c.AddPartition("p")
	for _, tc := range []struct {
		name string
		g    model.GPUReq
		ok   bool
	}{
		{"2 of 2", model.GPUReq{PerNode: 2}, true},
		{"3 of 2", model.GPUReq{PerNode: 3}, false},
		{"wrong type", model.GPUReq{PerNode: 1, Type: "v100"}, false},
		{"right type", model.GPUReq{PerNode: 1, Type: "a100"}, true},
		{"total 3 on one node", model.GPUReq{Total: 3}, false},
		{"cpus per gpu too many", model.GPUReq{PerNode: 2, CPUsPerGPU: 5}, false},
	} {
		s := schedtest.Spec()
		s.GPUs = &tc.g
		err := sched.Feasible(s, part, c.Nodes, sched.Config{})
		if (err == nil) != tc.ok || (err != nil && !errors.Is(err, sched.ErrNodeConfig)) {
			t.Errorf("%s: Feasible = %v, want ok=%v", tc.name, err, tc.ok)
		}
	}
}

func TestStepGPUs(t *testing.T) {
	j := &model.Job{ID: 1, State: model.JobRunning, Alloc: []model.NodeAlloc{
		{Node: "n1", CPUs: 4, CPUIDs: model.BitmapOf(0, 1, 2, 3), GPUs: model.BitmapOf(1, 2, 3)},
	}}
	all, err := sched.PlaceStep(j, nil, &model.StepSpec{NTasks: 1, Overlap: true})
	if err != nil || all[0].GPUs.String() != "1-3" {
		t.Fatalf("default step: %+v %v, want every job GPU (1-3)", all, err)
	}
	one, err := sched.PlaceStep(j, nil, &model.StepSpec{NTasks: 1, Exact: true, GPUs: &model.GPUReq{PerNode: 2}})
	if err != nil || one[0].GPUs.String() != "1-2" {
		t.Fatalf("2-GPU step: %+v %v, want 1-2", one, err)
	}
	j.Steps = []*model.Step{{ID: 0, State: model.JobRunning, Layout: one, Spec: &model.StepSpec{GPUs: &model.GPUReq{PerNode: 2}}}}
	if _, err := sched.PlaceStep(j, nil, &model.StepSpec{NTasks: 1, Exact: true, GPUs: &model.GPUReq{PerNode: 2}}); !errors.Is(err, sched.ErrStepBusy) {
		t.Errorf("second 2-GPU step: %v, want busy", err)
	}
	next, err := sched.PlaceStep(j, nil, &model.StepSpec{NTasks: 1, Exact: true, GPUs: &model.GPUReq{PerTask: 1}})
	if err != nil || next[0].GPUs.String() != "3" {
		t.Errorf("1-GPU step beside it: %+v %v, want 3", next, err)
	}
	if _, err := sched.PlaceStep(j, nil, &model.StepSpec{NTasks: 1, Overlap: true, GPUs: &model.GPUReq{PerNode: 4}}); err == nil || errors.Is(err, sched.ErrStepBusy) {
		t.Errorf("4 GPUs of 3: %v, want a gres error", err)
	}
}

func TestStepCPUIDs(t *testing.T) {
	j := &model.Job{ID: 1, State: model.JobRunning, Alloc: []model.NodeAlloc{
		{Node: "n1", CPUs: 4, CPUIDs: model.BitmapOf(2, 3, 4, 5)},
	}}
	all, err := sched.PlaceStep(j, nil, &model.StepSpec{NTasks: 1})
	if err != nil || all[0].CPUIDs.String() != "2-5" {
		t.Fatalf("default step: %+v %v, want the job's CPUs 2-5", all, err)
	}
	one, err := sched.PlaceStep(j, nil, &model.StepSpec{NTasks: 1, CPUsPerTask: 2, Exact: true})
	if err != nil || one[0].CPUIDs.String() != "2-3" {
		t.Fatalf("--exact -c2: %+v %v, want 2-3", one, err)
	}
	j.Steps = []*model.Step{{ID: 0, State: model.JobRunning, Layout: one, Spec: &model.StepSpec{Exact: true}}}
	next, err := sched.PlaceStep(j, nil, &model.StepSpec{NTasks: 1, Exact: true})
	if err != nil || next[0].CPUIDs.String() != "4" {
		t.Errorf("second --exact step: %+v %v, want 4", next, err)
	}
	shared, err := sched.PlaceStep(j, nil, &model.StepSpec{NTasks: 1, Overlap: true})
	if err != nil || shared[0].CPUIDs.String() != "2-5" {
		t.Errorf("--overlap step: %+v %v, want 2-5", shared, err)
	}
}
