package service

import (
	"testing"

	"github.com/drover-hpc/drover/internal/model"
)

// TestListingsOfOneSnapshot: listings of an unchanged queue give the same
// jobs (the queue is walked once per snapshot), each in a slice of its
// own, and a listing after a change has it.
func TestListingsOfOneSnapshot(t *testing.T) {
	svc, _, _ := setup(t)
	ctx := as(1000)
	var ids []model.JobID
	for range 5 {
		id, err := svc.SubmitJob(ctx, spec())
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	first, _, err := listJobs(ctx, svc, nil, false)
	if err != nil || len(first) != 5 {
		t.Fatalf("%d jobs, %v", len(first), err)
	}
	first[0] = nil // a caller may replace entries (ListJobs does, for specs it hides)
	second, _, _ := listJobs(ctx, svc, nil, false)
	if len(second) != 5 || second[0] == nil || second[0].ID != ids[0] {
		t.Fatalf("a second listing of the same queue: %v", second)
	}
	for i := range second {
		if second[i].ID != ids[i] {
			t.Fatalf("job %d is %d, want %d", i, second[i].ID, ids[i])
		}
	}
	id, err := svc.SubmitJob(ctx, spec())
	if err != nil {
		t.Fatal(err)
	}
	third, _, _ := listJobs(ctx, svc, nil, false)
	if len(third) != 6 || third[5].ID != id {
		t.Fatalf("the listing after a submission has %d jobs", len(third))
	}
}
