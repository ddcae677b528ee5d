package localapi

import (
	"context"
	"io"
	"log/slog"
	"net"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	pb "github.com/drover-hpc/drover/api/drover/v1"
	"github.com/drover-hpc/drover/client/local"
	"github.com/drover-hpc/drover/internal/api"
	"github.com/drover-hpc/drover/internal/cli"
	"github.com/drover-hpc/drover/internal/cli/squeue"
	"github.com/drover-hpc/drover/internal/localwire"
	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/rpcstats"
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

// cpuTime is this process's CPU time (user and system, every thread).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// cpuPerOp reports the CPU time per op since t0 (the machine is shared:
// CPU is steadier than wall).
func cpuPerOp(b *testing.B, t0 time.Duration) {
	b.ReportMetric(float64(cpuTime()-t0)/1e6/float64(b.N), "cpu-ms/op")
}

// held is n held jobs as `sbatch -H -J scale --wrap=true` leaves them
// (bench/scale100k.sh): one shared spec, pending, JobHeldUser.
func held(n int) []*model.Job {
	spec := &model.JobSpec{Name: "scale", TimeLimit: -1, MinNodes: 1, MaxNodes: -1, NTasks: 1, CPUsPerTask: -1,
		TasksPerNode: -1, MemPerNode: -1, MemPerCPU: -1, TimeMin: -1, Script: "#!/bin/sh\n# This script was created by sbatch --wrap.\n\ntrue\n",
		Env: []string{"A=1", "B=2"}, WorkDir: "/home/alice", StdOut: "/dev/null", SubmitLine: "sbatch -H -J scale -o /dev/null --wrap=true"}
	jobs := make([]*model.Job, n)
	for i := range jobs {
		jobs[i] = &model.Job{ID: model.JobID(i + 1), ArrayTaskID: -1, UserID: 1000, GroupID: 1000, UserName: "alice",
			Groups: []uint32{1000, 27}, Partition: "debug", Reason: "JobHeldUser", HoldUser: true, TimeLimit: 31536000, Name: "scale",
			SubmitTime: 1700000000 + int64(i/1000), EligibleTime: 1700000000 + int64(i/1000), Spec: spec}
	}
	return jobs
}

// BenchmarkListing100kHeld: squeue's listing of 100,000 held jobs, the
// controller's part (view and encode) and the command's (decode).
func BenchmarkListing100kHeld(b *testing.B) {
	jobs := held(100000)
	q := api.JobQuery{Summary: true}
	msg, _ := localwire.Encode(listing(jobs, 1, q))
	b.Run("controller", func(b *testing.B) {
		b.ReportAllocs()
		t0 := cpuTime()
		for range b.N {
			m, _ := localwire.Encode(listing(jobs, 1, q))
			b.ReportMetric(float64(len(m)), "bytes")
		}
		cpuPerOp(b, t0)
	})
	b.Run("controller-cached", func(b *testing.B) {
		var c listCache
		c.listing(jobs, 1, true, nil)
		b.ReportAllocs()
		b.ResetTimer()
		t0 := cpuTime()
		for range b.N {
			c.listing(jobs, 1, true, func(...[]byte) error { return nil })
		}
		cpuPerOp(b, t0)
	})
	b.Run("command-plan", func(b *testing.B) {
		t0 := cpuTime()
		defer func() { cpuPerOp(b, t0) }()
		for range b.N {
			var l localwire.JobList
			if err := localwire.DecodeCompact(msg, &l, localwire.AnswerAlloc(len(msg))); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("command", func(b *testing.B) {
		b.ReportAllocs()
		t0 := cpuTime()
		defer func() { cpuPerOp(b, t0) }()
		for range b.N {
			var l localwire.JobList
			if err := localwire.DecodeAnswer(msg, &l); err != nil {
				b.Fatal(err)
			}
			if got, err := l.API(); err != nil || len(got.Jobs) != len(jobs) {
				b.Fatal("jobs lost")
			}
		}
	})
}

// lister serves a fixed queue, as the service lists it (a new slice of
// the same jobs each time).
type lister struct {
	*fake
	jobs []*model.Job
}

func (l *lister) ListJobs(context.Context, api.JobQuery) (*api.JobList, error) {
	return &api.JobList{Jobs: append([]*model.Job(nil), l.jobs...), Now: 1700000000}, nil
}

// BenchmarkSqueueOverSocket100k is squeue (default format) over 100,000
// held jobs through the local socket, both ends in this process: what
// `squeue` costs but the process start and the controller's walk.
func BenchmarkSqueueOverSocket100k(b *testing.B) {
	c := serveJobs(b, held(100000))
	env := &cli.Env{Prog: "squeue", Stdout: io.Discard, Stderr: io.Discard, Now: time.Now,
		Dial: func() (cli.Client, error) { return c, nil }}
	b.ReportAllocs()
	t0 := cpuTime()
	for b.Loop() {
		if code := squeue.Run(context.Background(), env, nil); code != 0 {
			b.Fatalf("exit %d", code)
		}
	}
	cpuPerOp(b, t0)
}

// serveJobs serves jobs on a socket of the adapter (in this process) and
// returns a local client of it.
func serveJobs(tb testing.TB, jobs []*model.Job) *local.Client {
	tb.Helper()
	sock := filepath.Join(tb.TempDir(), "s")
	l, err := net.Listen("unix", sock)
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	tb.Cleanup(cancel)
	srv := New(ctx, &lister{fake: newFake(), jobs: jobs}, Limits{}, rpcstats.New(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	others := Split(l, srv.Timeout(), srv.ServeConn)
	tb.Cleanup(func() { others.Close() })
	c := local.Dial(sock)
	tb.Cleanup(func() { c.Close() })
	return c
}
