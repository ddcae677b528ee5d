package fsm

import (
	"slices"
	"testing"

	"github.com/drover-hpc/drover/internal/model"
)

// A SUSPEND victim lends its CPUs (not its memory) to its preemptor, and
// runs again when the preemptor ends; the suspended time is not run time.
func TestSuspendVictimLendsCPUsAndResumes(t *testing.T) {
	h := newHarness(t)
	h.apply(TypeSubmit, &Submit{Spec: spec(), Partition: "p", Now: 1})
	h.apply(TypeSubmit, &Submit{Spec: spec(), Partition: "p", Now: 1})
	all := []model.NodeAlloc{{Node: "n1", CPUs: 4, Mem: 1000, CPUIDs: model.BitmapOf(0, 1, 2, 3)}}
	h.apply(TypeSchedule, &Schedule{Now: 2, Starts: []StartEntry{{Job: 1, Alloc: all}}})
	r := h.apply(TypeSchedule, &Schedule{Now: 10, Preempt: []PreemptEntry{{Job: 1, Mode: "SUSPEND", For: 2}}}).(ScheduleResult)
	if !slices.Equal(r.Suspended, []model.JobID{1}) || len(r.Preempted) != 0 {
		t.Fatalf("result %+v, want job 1 suspended", r)
	}
	n := h.snap().Node("n1")
	if n.AllocCPUs != 0 || n.AllocCores.Count() != 0 || n.AllocMem != 1000 {
		t.Fatalf("node while the victim is suspended: cpus %d cores %q mem %d", n.AllocCPUs, n.AllocCores, n.AllocMem)
	}
	if v := h.snap().Job(1); !v.Suspended || !v.SchedSuspended || v.PreemptedFor != 2 {
		t.Fatalf("victim %+v", v)
	}
	// A resume for a CPU the preemptor holds changes nothing.
	h.apply(TypeSchedule, &Schedule{Now: 11, Starts: []StartEntry{{Job: 2, Alloc: []model.NodeAlloc{{Node: "n1", CPUs: 1, CPUIDs: model.BitmapOf(0)}}}}})
	if r := h.apply(TypeSlice, &Slice{Resume: []model.JobID{1}, Now: 12}).(SliceResult); len(r.Resumed) != 0 {
		t.Fatalf("resumed onto a CPU in use: %+v", r)
	}
	// scontrol resume leaves a scheduler suspension alone.
	if r := h.apply(TypeControl, &Control{Jobs: []model.JobID{1}, Action: "resume", Now: 12}).(CancelResult); len(r.Resume) != 0 {
		t.Fatalf("scontrol resume thawed a preempted job: %+v", r)
	}
	end := h.apply(TypeJobEnded, &JobEnded{Job: 2, Now: 40}).(JobEndedResult)
	if !slices.Equal(end.Resumed, []model.JobID{1}) {
		t.Fatalf("preemptor's end resumed %v, want [1]", end.Resumed)
	}
	v := h.snap().Job(1)
	if v.Suspended || v.SchedSuspended || v.SuspendedFor(50) != 30 {
		t.Fatalf("victim after resume: suspended %v/%v for %d s, want 30", v.Suspended, v.SchedSuspended, v.SuspendedFor(50))
	}
	if n := h.snap().Node("n1"); n.AllocCPUs != 4 || n.AllocCores.Count() != 4 {
		t.Fatalf("victim's CPUs not taken back: %d %q", n.AllocCPUs, n.AllocCores)
	}
	// Its end gives everything back exactly once.
	h.apply(TypeJobEnded, &JobEnded{Job: 1, Now: 60})
	if n := h.snap().Node("n1"); n.AllocCPUs != 0 || n.AllocMem != 0 || n.AllocCores.Count() != 0 {
		t.Fatalf("node after the end: %d %d %q", n.AllocCPUs, n.AllocMem, n.AllocCores)
	}
}

// Gang slices swap two jobs on the same CPUs; a job ending while
// suspended gives back only what it still held.
func TestSliceSwapsAndEndWhileSuspended(t *testing.T) {
	h := newHarness(t)
	all := []model.NodeAlloc{{Node: "n1", CPUs: 4, Mem: 500, CPUIDs: model.BitmapOf(0, 1, 2, 3)}}
	for range 2 {
		h.apply(TypeSubmit, &Submit{Spec: spec(), Partition: "p", Now: 1})
	}
	h.apply(TypeSchedule, &Schedule{Now: 2, Starts: []StartEntry{{Job: 1, Alloc: all}}})
	h.apply(TypeSchedule, &Schedule{Now: 3, Preempt: []PreemptEntry{{Job: 1, Mode: "GANG", For: 2}}})
	h.apply(TypeSchedule, &Schedule{Now: 4, Starts: []StartEntry{{Job: 2, Alloc: all}}})
	r := h.apply(TypeSlice, &Slice{Suspend: []model.JobID{2}, Resume: []model.JobID{1}, Now: 34}).(SliceResult)
	if !slices.Equal(r.Suspended, []model.JobID{2}) || !slices.Equal(r.Resumed, []model.JobID{1}) {
		t.Fatalf("slice %+v", r)
	}
	if n := h.snap().Node("n1"); n.AllocCPUs != 4 || n.AllocMem != 1000 {
		t.Fatalf("node after the swap: cpus %d mem %d", n.AllocCPUs, n.AllocMem)
	}
	h.apply(TypeCancel, &Cancel{Jobs: []model.JobID{2}, Now: 40})
	h.apply(TypeJobEnded, &JobEnded{Job: 2, Now: 41})
	if n := h.snap().Node("n1"); n.AllocCPUs != 4 || n.AllocMem != 500 || n.AllocCores.Count() != 4 {
		t.Fatalf("node after the suspended job's end: cpus %d mem %d cores %q", n.AllocCPUs, n.AllocMem, n.AllocCores)
	}
}

// A step running while its job is suspended owes the suspension to its
// own accounting (sacct leaves it out of the step's Elapsed, as Slurm);
// a step that ended before, or started after, owes nothing. Earlier
// snapshots keep their steps as they were.
func TestStepSuspendedTime(t *testing.T) {
	h := newHarness(t)
	h.apply(TypeSubmit, &Submit{Spec: spec(), Partition: "p", Now: 1})
	h.apply(TypeSchedule, &Schedule{Now: 2, Starts: []StartEntry{{Job: 1, Alloc: []model.NodeAlloc{
		{Node: "n1", CPUs: 2, CPUIDs: model.BitmapOf(0, 1)}}}}})
	step := func(cpu int, now int64) {
		h.apply(TypeCreateStep, &CreateStep{Job: 1, Spec: &model.StepSpec{Exact: true}, Now: now,
			Layout: []model.StepNode{{Node: "n1", CPUs: 1, Tasks: []int{0}, CPUIDs: model.BitmapOf(cpu)}}})
	}
	step(0, 3) // step 0: ends before the suspension
	step(1, 4) // step 1: runs through it
	h.apply(TypeStepEnded, &StepEnded{Job: 1, Step: 0, Node: "n1", Run: 1, Now: 5})
	h.apply(TypeControl, &Control{Jobs: []model.JobID{1}, Action: "suspend", Now: 10})
	before := h.snap()
	h.apply(TypeControl, &Control{Jobs: []model.JobID{1}, Action: "resume", Now: 17})
	step(0, 20) // step 2: after it
	j := h.snap().Job(1)
	var got []int64
	for _, s := range j.Steps {
		got = append(got, s.SuspendedSecs)
	}
	if !slices.Equal(got, []int64{0, 7, 0}) {
		t.Errorf("steps' suspended seconds %v, want [0 7 0]", got)
	}
	if s := before.Job(1).Steps[1]; s.SuspendedSecs != 0 {
		t.Errorf("an earlier snapshot's step changed: %d", s.SuspendedSecs)
	}
}
