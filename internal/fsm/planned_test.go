package fsm

import (
	"testing"

	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/wire"
)

// Planned starts land on pending jobs only, with their reason in the same
// command, are cleared by a start, and reach clients as StartTime.
func TestSchedulePlannedStarts(t *testing.T) {
	h := newHarness(t)
	h.apply(TypeSubmit, &Submit{Spec: spec(), Partition: "p", Now: 1})
	h.apply(TypeSubmit, &Submit{Spec: spec(), Partition: "p", Now: 1})
	h.apply(TypeSchedule, &Schedule{Now: 5, Starts: []StartEntry{{Job: 1, Alloc: []model.NodeAlloc{{Node: "n1", CPUs: 1}}}},
		Reasons: map[model.JobID]string{2: model.ReasonResources},
		Planned: map[model.JobID]int64{1: 900, 2: 700}})
	j1, j2 := h.snap().Job(1), h.snap().Job(2)
	if j1.PlannedStart != 0 || j1.StartTime != 5 {
		t.Errorf("started job: planned %d start %d", j1.PlannedStart, j1.StartTime)
	}
	if j2.PlannedStart != 700 || j2.Reason != model.ReasonResources || j2.StartTime != 0 {
		t.Errorf("pending job: planned %d reason %q start %d", j2.PlannedStart, j2.Reason, j2.StartTime)
	}
	if got := wire.JobToPB(j2, wire.Full).StartTime; got != 700 {
		t.Errorf("clients see StartTime %d for the pending job, want 700", got)
	}
	if got := wire.JobToPB(j1, wire.Full).StartTime; got != 5 {
		t.Errorf("clients see StartTime %d for the running job, want 5", got)
	}
	h.apply(TypeSchedule, &Schedule{Now: 6, Planned: map[model.JobID]int64{2: 0}})
	if p := h.snap().Job(2).PlannedStart; p != 0 {
		t.Errorf("cleared planned start: %d", p)
	}
	h.apply(TypeSchedule, &Schedule{Now: 7, Planned: map[model.JobID]int64{2: 800}})
	h.apply(TypeSchedule, &Schedule{Now: 8, Starts: []StartEntry{{Job: 2, Alloc: []model.NodeAlloc{{Node: "n2", CPUs: 1}}}}})
	if j := h.snap().Job(2); j.PlannedStart != 0 || j.StartTime != 8 {
		t.Errorf("after its start: planned %d start %d", j.PlannedStart, j.StartTime)
	}
}
