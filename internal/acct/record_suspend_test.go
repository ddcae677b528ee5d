package acct

import (
	"testing"

	"github.com/drover-hpc/drover/internal/model"
)

// The record carries the time the job spent suspended (sacct Suspended,
// and Elapsed leaves it out).
func TestFromModelSuspended(t *testing.T) {
	j := job(model.JobCompleted, 0, 0)
	j.StartTime, j.EndTime, j.SuspendedSecs = 100, 200, 30
	if r := FromModel("c", j, "g"); r.Suspended != 30 {
		t.Fatalf("Suspended %d, want 30", r.Suspended)
	}
	j.Suspended, j.SuspendTime = true, 190 // ended while suspended
	if r := FromModel("c", j, "g"); r.Suspended != 40 {
		t.Fatalf("Suspended %d, want 40", r.Suspended)
	}
}

// An srun step's record carries the suspension it ran through.
func TestFromModelStepSuspended(t *testing.T) {
	j := job(model.JobCompleted, 0, 0)
	j.StartTime, j.EndTime, j.SuspendedSecs = 100, 200, 30
	j.Steps = []*model.Step{{ID: 0, Name: "sleep", State: model.JobCompleted, StartTime: 110, EndTime: 190, SuspendedSecs: 25}}
	r := FromModel("c", j, "g")
	for _, s := range r.Steps {
		if s.StepID == 0 && s.Suspended != 25 {
			t.Errorf("step 0 Suspended %d, want 25", s.Suspended)
		}
	}
}
