package wire

import (
	"syscall"
	"testing"

	"google.golang.org/protobuf/proto"

	pb "github.com/drover-hpc/drover/api/drover/v1"
	"github.com/drover-hpc/drover/internal/model"
)

// heldQueue is n held jobs submitted alike: one shared spec.
func heldQueue(n int) []*model.Job {
	sp := &model.JobSpec{Name: "scale", Script: "#!/bin/sh\ntrue\n", Env: make([]string, 40), TimeLimit: model.Unset,
		MinNodes: model.Unset, NTasks: model.Unset, CPUsPerTask: model.Unset, MemPerNode: model.Unset,
		WorkDir: "/home/user", StdOut: "/dev/null", SubmitLine: "sbatch -H -J scale -o /dev/null --wrap=true", Hold: true}
	jobs := make([]*model.Job, n)
	for i := range jobs {
		jobs[i] = &model.Job{ID: model.JobID(i + 1), SpecID: model.JobID(i + 1), ArrayTaskID: model.NoArrayTask, Spec: sp,
			UserID: 1000, GroupID: 1000, UserName: "user", Partition: "debug", State: model.JobPending,
			Reason: model.ReasonHeldUser, HoldUser: true, TimeLimit: 3600, Name: "scale", SubmitTime: 1700000000 + int64(i)}
	}
	return jobs
}

// BenchmarkListing100k: the server's summary listing of 100,000 held jobs
// and its encoding, then the client's decoding and conversion.
func BenchmarkListing100k(b *testing.B) {
	jobs := heldQueue(100000)
	var size int
	b.Run("server", func(b *testing.B) {
		defer cpuPerOp(b)()
		for b.Loop() {
			r := SummaryListing(jobs, 1, false)
			data, err := proto.Marshal(r)
			if err != nil {
				b.Fatal(err)
			}
			size = len(data)
		}
		b.ReportMetric(float64(size)/(1<<20), "MiB")
	})
	data, _ := proto.Marshal(SummaryListing(jobs, 1, false))
	b.Run("client", func(b *testing.B) {
		defer cpuPerOp(b)()
		for b.Loop() {
			var r pb.ListJobsResponse
			if err := proto.Unmarshal(data, &r); err != nil {
				b.Fatal(err)
			}
			if got := JobsFromListing(&r); len(got) != len(jobs) {
				b.Fatal(len(got))
			}
		}
	})
}

// cpuPerOp reports the process's CPU time (user+sys) per iteration: on a
// shared machine wall time says more about the neighbours.
func cpuPerOp(b *testing.B) func() {
	cpu := func() float64 {
		var ru syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e6
	}
	c0 := cpu()
	return func() { b.ReportMetric((cpu()-c0)/float64(b.N), "cpu-ms/op") }
}
