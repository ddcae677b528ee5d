package client

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/drover-hpc/drover/api/drover/v1"
	"github.com/drover-hpc/drover/internal/api"
)

// bigQueue answers like a server whose message limit holds maxFull jobs
// with their long fields, and any number of summaries.
type bigQueue struct {
	jobs    int
	maxFull int
	calls   int
}

func (b *bigQueue) ListJobs(_ context.Context, r *pb.ListJobsRequest, _ ...grpc.CallOption) (*pb.ListJobsResponse, error) {
	b.calls++
	var ids []uint32
	if len(r.Ids) == 0 {
		for i := 1; i <= b.jobs; i++ {
			ids = append(ids, uint32(i))
		}
	} else {
		ids = r.Ids
	}
	if !r.Summary && len(ids) > b.maxFull {
		return nil, status.Error(codes.ResourceExhausted, "grpc: received message larger than max")
	}
	out := &pb.ListJobsResponse{Now: 7}
	for _, id := range ids {
		j := &pb.Job{Id: id}
		if !r.Summary {
			j.Spec = &pb.JobSpec{Comment: strings.Repeat("x", 64)}
		}
		out.Jobs = append(out.Jobs, j)
	}
	return out, nil
}

// A listing too big for one message arrives whole, each job once, in id
// order, with its long fields.
func TestListJobsPagesPastMessageLimit(t *testing.T) {
	q := &bigQueue{jobs: 5000, maxFull: 300}
	l, err := listJobs(context.Background(), q, api.JobQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Jobs) != 5000 || l.Now != 7 {
		t.Fatalf("%d jobs (now %d), want 5000", len(l.Jobs), l.Now)
	}
	for i, j := range l.Jobs {
		if int(j.ID) != i+1 || j.Spec.Comment == "" {
			t.Fatalf("job %d: id %d comment %q", i, j.ID, j.Spec.Comment)
		}
	}
	// A page of one job still too big is an error, not a loop.
	q = &bigQueue{jobs: 3, maxFull: 0}
	if _, err := listJobs(context.Background(), q, api.JobQuery{}); err == nil {
		t.Fatal("a job bigger than the message limit was listed")
	} else if q.calls > 10 {
		t.Fatalf("%d calls before giving up", q.calls)
	}
}

// A listing that fits takes one call.
func TestListJobsOneCallWhenItFits(t *testing.T) {
	q := &bigQueue{jobs: 10, maxFull: 100}
	l, err := listJobs(context.Background(), q, api.JobQuery{})
	if err != nil || len(l.Jobs) != 10 || q.calls != 1 {
		t.Fatalf("jobs %d calls %d err %v", len(l.Jobs), q.calls, err)
	}
}
