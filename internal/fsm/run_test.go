package fsm

import (
	"testing"

	"github.com/drover-hpc/drover/internal/model"
)

// A node that comes back with an earlier run of a requeued job reports that
// run's end; it must change nothing of the new run, even in the same second.
func TestStaleRunEndIgnored(t *testing.T) {
	h := newHarness(t)
	sp := spec()
	sp.Requeue = true
	h.apply(TypeSubmit, &Submit{Spec: sp, Partition: "p", Now: 1})
	h.apply(TypeSchedule, &Schedule{Now: 2, Starts: []StartEntry{{Job: 1, Alloc: []model.NodeAlloc{{Node: "n1", CPUs: 1}}}}})
	h.apply(TypeNodeDown, &NodeDown{Node: "n1", Reason: ReasonNotResponding, Now: 2})
	j := h.snap().Job(1)
	if j.State != model.JobPending || j.Run() != 2 {
		t.Fatalf("after node loss: %v run %d, want PENDING run 2", j.State, j.Run())
	}
	h.apply(TypeSchedule, &Schedule{Now: 2, Starts: []StartEntry{{Job: 1, Alloc: []model.NodeAlloc{{Node: "n2", CPUs: 1}}}}})
	h.apply(TypeCreateStep, &CreateStep{Job: 1, Spec: &model.StepSpec{}, Now: 2,
		Layout: []model.StepNode{{Node: "n2", CPUs: 1, Tasks: []int{0}}}})

	// Same start second as the stale run: only the run tells them apart.
	if r := h.apply(TypeJobEnded, &JobEnded{Job: 1, ExitCode: 1, StartTime: 2, Run: 1, Now: 3}).(JobEndedResult); r.Applied {
		t.Fatal("the stale run's end was applied")
	}
	h.apply(TypeStepEnded, &StepEnded{Job: 1, Step: 0, Node: "n2", Run: 1, ExitCode: 1, Now: 3})
	j = h.snap().Job(1)
	if j.State != model.JobRunning || j.Steps[0].Finished() {
		t.Fatalf("a stale run's reports ended the new run: %v, step finished %v", j.State, j.Steps[0].Finished())
	}
	if r := h.apply(TypeJobEnded, &JobEnded{Job: 1, Run: 2, Now: 4}).(JobEndedResult); !r.Applied {
		t.Fatal("the current run's end was not applied")
	}
	if j := h.snap().Job(1); j.State != model.JobCompleted {
		t.Fatalf("after the current run's end: %v", j.State)
	}
}
