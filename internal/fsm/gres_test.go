package fsm

import (
	"strings"
	"testing"

	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/state"
)

func gpuHarness(t *testing.T) *harness {
	h := &harness{t: t, f: New(state.New(1), nil)}
	placeholders := []model.GPU{{Index: 0, Type: "a100", Major: -1, Minor: -1}, {Index: 1, Type: "a100", Major: -1, Minor: -1}}
	h.apply(TypeSetConfig, &SetConfig{
		Nodes:      []*model.Node{{Name: "n1", CPUs: 4, Memory: 4000, Gres: "gpu:a100:2", GPUs: placeholders}},
		Partitions: []*model.Partition{{Name: "p", Nodes: []string{"n1"}, Default: true, MaxTime: model.Unlimited}},
	})
	return h
}

func TestRegisterGPUs(t *testing.T) {
	h := gpuHarness(t)
	// Fewer devices than configured: the node drains.
	h.apply(TypeNodeRegister, &NodeRegister{Node: "n1", CPUs: 4, Memory: 4000, Now: 100, HasGPUs: true,
		GPUs: []model.GPU{{Index: 0, File: "/dev/nvidia0", Major: 195, Minor: 0}}})
	n := h.snap().Node("n1")
	if !n.Drain || !strings.HasPrefix(n.Reason, ReasonGresLow) || len(n.GPUs) != 2 || n.GPUs[0].File != "" {
		t.Fatalf("after a short report: drain=%v reason=%q gpus=%+v", n.Drain, n.Reason, n.GPUs)
	}
	// INVAL, as in Slurm: a resume does not make it usable (its second
	// GPU does not exist), and a start there is refused.
	h.apply(TypeUpdateNodes, &UpdateNodes{Nodes: []string{"n1"}, State: "RESUME", Now: 100})
	if n := h.snap().Node("n1"); !n.InvalidReg || !n.Drain || n.Usable() {
		t.Fatalf("resumed while short of GPUs: invalid=%v drain=%v usable=%v", n.InvalidReg, n.Drain, n.Usable())
	}
	h.apply(TypeSubmit, &Submit{Spec: spec(), Partition: "p", Now: 100})
	res := h.apply(TypeSchedule, &Schedule{Now: 100, Starts: []StartEntry{{Job: 1, Alloc: []model.NodeAlloc{{Node: "n1", CPUs: 1, GPUs: model.BitmapOf(1)}}}}}).(ScheduleResult)
	if len(res.Started) != 0 {
		t.Fatal("a job was given a GPU the node does not have")
	}
	// All devices: taken, with the configured type; the drain is lifted.
	h.apply(TypeNodeRegister, &NodeRegister{Node: "n1", CPUs: 4, Memory: 4000, Now: 101, HasGPUs: true,
		GPUs: []model.GPU{{Index: 7, File: "/dev/nvidia0", Major: 195, Minor: 0}, {File: "/dev/nvidia1", Major: 195, Minor: 1}, {File: "/dev/nvidia2"}}})
	n = h.snap().Node("n1")
	if n.Drain || n.InvalidReg || len(n.GPUs) != 2 || n.GPUs[1].File != "/dev/nvidia1" || n.GPUs[1].Index != 1 || n.GPUs[0].Type != "a100" {
		t.Fatalf("after a full report: drain=%v invalid=%v gpus=%+v", n.Drain, n.InvalidReg, n.GPUs)
	}
	// A heartbeat's re-registration reports no GPUs and changes none.
	h.apply(TypeNodeRegister, &NodeRegister{Node: "n1", CPUs: 4, Memory: 4000, Now: 102})
	if n := h.snap().Node("n1"); len(n.GPUs) != 2 || n.GPUs[0].File != "/dev/nvidia0" {
		t.Fatalf("heartbeat changed GPUs: %+v", n.GPUs)
	}
	// slurm.conf names another GPU count (scontrol reconfigure): the
	// new placeholders have no devices behind them, so the node takes
	// no work until its agent registers its GPUs again.
	more := []model.GPU{{Index: 0, Major: -1, Minor: -1}, {Index: 1, Major: -1, Minor: -1}, {Index: 2, Major: -1, Minor: -1}}
	h.apply(TypeSetConfig, &SetConfig{
		Nodes:      []*model.Node{{Name: "n1", CPUs: 4, Memory: 4000, Gres: "gpu:3", GPUs: more}},
		Partitions: []*model.Partition{{Name: "p", Nodes: []string{"n1"}, Default: true, MaxTime: model.Unlimited}},
	})
	if n := h.snap().Node("n1"); !n.InvalidReg || n.Usable() {
		t.Fatalf("after a reconfigure to 3 GPUs: invalid=%v usable=%v", n.InvalidReg, n.Usable())
	}
	three := []model.GPU{{File: "/dev/nvidia0"}, {File: "/dev/nvidia1"}, {File: "/dev/nvidia2"}}
	h.apply(TypeNodeRegister, &NodeRegister{Node: "n1", CPUs: 4, Memory: 4000, Now: 103, HasGPUs: true, GPUs: three})
	n = h.snap().Node("n1")
	if n.InvalidReg || !n.Usable() || len(n.GPUs) != 3 {
		t.Fatalf("after registering 3 GPUs: invalid=%v usable=%v gpus=%d", n.InvalidReg, n.Usable(), len(n.GPUs))
	}
	// An admin's drain is not lifted by a report.
	h.apply(TypeUpdateNodes, &UpdateNodes{Nodes: []string{"n1"}, State: "DRAIN", Reason: "maintenance", Now: 103})
	h.apply(TypeNodeRegister, &NodeRegister{Node: "n1", CPUs: 4, Memory: 4000, Now: 104, HasGPUs: true, GPUs: n.GPUs})
	if n := h.snap().Node("n1"); !n.Drain || n.Reason != "maintenance" {
		t.Fatalf("admin drain lost: %v %q", n.Drain, n.Reason)
	}
}

func TestAllocIDsCommitAndRelease(t *testing.T) {
	h := gpuHarness(t)
	h.apply(TypeNodeRegister, &NodeRegister{Node: "n1", CPUs: 4, Memory: 4000, Now: 100})
	h.apply(TypeSubmit, &Submit{Spec: spec(), Partition: "p", Now: 1})
	h.apply(TypeSubmit, &Submit{Spec: spec(), Partition: "p", Now: 1})
	a1 := []model.NodeAlloc{{Node: "n1", CPUs: 1, CPUIDs: model.BitmapOf(0), GPUs: model.BitmapOf(1)}}
	a2 := []model.NodeAlloc{{Node: "n1", CPUs: 1, CPUIDs: model.BitmapOf(1), GPUs: model.BitmapOf(1)}} // same GPU
	res := h.apply(TypeSchedule, &Schedule{Now: 5, Starts: []StartEntry{{Job: 1, Alloc: a1}, {Job: 2, Alloc: a2}}}).(ScheduleResult)
	if len(res.Started) != 1 {
		t.Fatalf("started %v: a GPU given twice must be refused", res.Started)
	}
	n := h.snap().Node("n1")
	if n.AllocCores.String() != "0" || n.AllocGPUs.String() != "1" {
		t.Fatalf("node ids cores=%q gpus=%q", n.AllocCores, n.AllocGPUs)
	}
	h.apply(TypeJobEnded, &JobEnded{Job: 1, Now: 9, Usage: &model.Usage{MaxRSS: 5}})
	n = h.snap().Node("n1")
	if n.AllocCores.Count() != 0 || n.AllocGPUs.Count() != 0 {
		t.Fatalf("ids not released: cores=%q gpus=%q", n.AllocCores, n.AllocGPUs)
	}
	if u := h.snap().Job(1).BatchUsage; u == nil || u.MaxRSS != 5 {
		t.Fatalf("batch usage %+v", u)
	}
	// A job the node could not start (prolog) goes back to the queue, held.
	h.apply(TypeSchedule, &Schedule{Now: 11, Starts: []StartEntry{{Job: 2, Alloc: a2}}})
	h.apply(TypeJobEnded, &JobEnded{Job: 2, Requeue: true, Reason: model.ReasonLaunchFailedHeld, Now: 12})
	if j := h.snap().Job(2); j.State != model.JobPending || !j.HoldAdmin || j.Restarts != 1 {
		t.Fatalf("prolog-failed job %v held=%v restarts=%d", j.State, j.HoldAdmin, j.Restarts)
	}
}

func TestConcurrentStepsCannotShareIDs(t *testing.T) {
	h := gpuHarness(t)
	h.apply(TypeNodeRegister, &NodeRegister{Node: "n1", CPUs: 4, Memory: 4000, Now: 100})
	h.apply(TypeSubmit, &Submit{Spec: spec(), Partition: "p", Now: 1})
	h.apply(TypeSchedule, &Schedule{Now: 5, Starts: []StartEntry{{Job: 1, Alloc: []model.NodeAlloc{
		{Node: "n1", CPUs: 2, CPUIDs: model.BitmapOf(0, 1), GPUs: model.BitmapOf(0, 1)}}}}})
	// Two sruns laid out on the same snapshot both chose CPU 0.
	layout := []model.StepNode{{Node: "n1", CPUs: 1, Tasks: []int{0}, CPUIDs: model.BitmapOf(0)}}
	first := h.apply(TypeCreateStep, &CreateStep{Job: 1, Spec: &model.StepSpec{Exact: true}, Layout: layout, Now: 6}).(CreateStepResult)
	second := h.apply(TypeCreateStep, &CreateStep{Job: 1, Spec: &model.StepSpec{Exact: true}, Layout: layout, Now: 6}).(CreateStepResult)
	if first.Err != nil || second.Err != ErrStepBusy {
		t.Fatalf("first %v, second %v: want the second busy", first.Err, second.Err)
	}
	other := []model.StepNode{{Node: "n1", CPUs: 1, Tasks: []int{0}, CPUIDs: model.BitmapOf(1)}}
	if r := h.apply(TypeCreateStep, &CreateStep{Job: 1, Spec: &model.StepSpec{Exact: true}, Layout: other, Now: 7}).(CreateStepResult); r.Err != nil {
		t.Fatalf("a step on the free CPU: %v", r.Err)
	}
}
