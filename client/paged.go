package client

import (
	"context"
	"slices"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/drover-hpc/drover/api/drover/v1"
	"github.com/drover-hpc/drover/internal/api"
	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/wire"
)

// jobLister is the one call listJobs needs (pb.DroverClient has it).
type jobLister interface {
	ListJobs(ctx context.Context, in *pb.ListJobsRequest, opts ...grpc.CallOption) (*pb.ListJobsResponse, error)
}

// firstPage is the size of the first page once a listing has proved too
// big for one message; pages halve from there while still too big.
const firstPage = 1024

// listJobs answers q in one message when it fits; when the answer would
// exceed the message size (ResourceExhausted, from either end), it takes
// the job ids from a summary listing and fetches the jobs page by page,
// halving a page that is still too big. Each page is taken at its own
// moment; jobs that ended between pages show their newer state, and only
// jobs of the first listing are returned, so nothing appears twice or
// out of its query.
func listJobs(ctx context.Context, lister jobLister, q api.JobQuery) (*api.JobList, error) {
	req := &pb.ListJobsRequest{Ids: ids32(q.IDs), WithoutSpec: true, IncludeFinished: q.IncludeAll, Summary: q.Summary, WithSteps: q.WithSteps}
	r, err := lister.ListJobs(ctx, req)
	if err == nil {
		return &api.JobList{Jobs: wire.JobsFromListing(r), Now: r.Now}, nil
	}
	if status.Code(err) != codes.ResourceExhausted {
		return nil, fromStatus(err)
	}
	idx, err := lister.ListJobs(ctx, &pb.ListJobsRequest{Ids: req.Ids, WithoutSpec: true, IncludeFinished: q.IncludeAll, Summary: true})
	if err != nil {
		return nil, fromStatus(err)
	}
	var ids []uint32
	want := map[uint32]bool{}
	for _, j := range idx.Jobs {
		if !want[j.Id] {
			want[j.Id] = true
			ids = append(ids, j.Id)
		}
	}
	slices.Sort(ids)
	out := &api.JobList{Now: idx.Now}
	page := firstPage
	for len(ids) > 0 {
		n := min(page, len(ids))
		r, err := lister.ListJobs(ctx, &pb.ListJobsRequest{Ids: ids[:n], WithoutSpec: true, IncludeFinished: true,
			Summary: q.Summary, WithSteps: q.WithSteps})
		if status.Code(err) == codes.ResourceExhausted && n > 1 {
			page = max(n/2, 1)
			continue
		}
		if err != nil {
			return nil, fromStatus(err)
		}
		for _, j := range wire.JobsFromListing(r) {
			// An id may name more than itself (an array's tasks): keep
			// each job of the first listing once.
			if want[uint32(j.ID)] {
				want[uint32(j.ID)] = false
				out.Jobs = append(out.Jobs, j)
			}
		}
		out.Now = r.Now
		ids = ids[n:]
	}
	slices.SortFunc(out.Jobs, func(a, b *model.Job) int { return int(a.ID) - int(b.ID) })
	return out, nil
}
