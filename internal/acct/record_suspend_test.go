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
