package localapi

import (
	"testing"

	"google.golang.org/protobuf/proto"

	pb "github.com/drover-hpc/drover/api/drover/v1"
	"github.com/drover-hpc/drover/internal/api"
	"github.com/drover-hpc/drover/internal/localwire"
	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/wire"
)

// queue is n pending and running jobs as squeue lists them.
func queue(n int) []*model.Job {
	spec := &model.JobSpec{Name: "job.sh", TimeLimit: 3600, MinNodes: 1, MaxNodes: -1, NTasks: 1, CPUsPerTask: -1,
		TasksPerNode: -1, MemPerNode: -1, MemPerCPU: -1, TimeMin: -1, Script: "#!/bin/sh\ntrue\n", Env: []string{"A=1", "B=2"},
		WorkDir: "/home/alice", StdOut: "slurm-%j.out", Argv: []string{"job.sh"}, SubmitLine: "sbatch job.sh"}
	jobs := make([]*model.Job, n)
	for i := range jobs {
		j := &model.Job{ID: model.JobID(i + 1), ArrayTaskID: -1, UserID: 1000, GroupID: 1000, UserName: "alice",
			Partition: "debug", Reason: "Priority", Priority: 4294900000, TimeLimit: 3600, Name: "job.sh",
			SubmitTime: 1700000000 + int64(i), Spec: spec}
		if i%3 == 1 {
			j.State = model.JobRunning
			j.Alloc = []model.NodeAlloc{{Node: "n1", CPUs: 1, Mem: 100, CPUIDs: model.BitmapOf(i % 64)}}
			j.StartTime = 1700000100
		}
		jobs[i] = j
	}
	return jobs
}

// BenchmarkListing10k: a 10,000-job summary listing, encoded by the
// controller and decoded by the command, over each transport's encoding.
func BenchmarkListing10k(b *testing.B) {
	jobs := queue(10000)
	b.Run("local", func(b *testing.B) {
		for range b.N {
			msg, _ := localwire.Encode(listing(jobs, 1, api.JobQuery{Summary: true}))
			var l localwire.JobList
			if err := localwire.DecodeAnswer(msg, &l); err != nil {
				b.Fatal(err)
			}
			if got, err := l.API(); err != nil || len(got.Jobs) != len(jobs) {
				b.Fatal("jobs lost")
			}
			b.ReportMetric(float64(len(msg)), "bytes")
		}
	})
	b.Run("grpc-protobuf", func(b *testing.B) {
		for range b.N {
			msg, err := proto.Marshal(wire.SummaryListing(jobs, 1, false))
			if err != nil {
				b.Fatal(err)
			}
			var r pb.ListJobsResponse
			if err := proto.Unmarshal(msg, &r); err != nil {
				b.Fatal(err)
			}
			if len(wire.JobsFromListing(&r)) != len(jobs) {
				b.Fatal("jobs lost")
			}
			b.ReportMetric(float64(len(msg)), "bytes")
		}
	})
}
