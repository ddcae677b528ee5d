package controller

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"

	"github.com/drover-hpc/drover/internal/clock"
	"github.com/drover-hpc/drover/internal/fsm"
	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/service"
	"github.com/drover-hpc/drover/internal/state"
)

// BenchmarkSubmitIntoQueue is the controller's CPU for one submission
// (its commit and the scheduling pass it triggers) into a queue already
// holding `queued` jobs: held ones (sbatch -H) or pending ones that wait
// for resources. A flat cost per submission means ns/op stays the same
// from queued=0 to queued=100000. Raft and gRPC are left out.
func BenchmarkSubmitIntoQueue(b *testing.B) {
	for _, held := range []bool{true, false} {
		for _, queued := range []int{0, 10_000, 100_000} {
			if !held && queued > 10_000 {
				continue // a pass over 100k runnable-looking jobs is the scheduler's own bench
			}
			b.Run(fmt.Sprintf("held=%v/queued=%d", held, queued), func(b *testing.B) {
				c, d := newBenchController(b)
				spec := benchSpec(held)
				submit := func() {
					if _, err := d.Apply(fsm.TypeSubmit, &fsm.Submit{Spec: spec, Partition: "p", User: "u", Now: 1}); err != nil {
						b.Fatal(err)
					}
				}
				for range queued {
					submit()
				}
				c.cycle() // reasons settled, as in a running controller
				b.ResetTimer()
				for b.Loop() {
					submit()
					c.cycle()
				}
			})
		}
	}
}

func newBenchController(b *testing.B) (*Controller, *direct) {
	st := state.New(1)
	d := &direct{f: fsm.New(st, nil)}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	c := New(log, st, d, clock.Real{})
	// One node too small for any benchmark job: pending ones stay pending.
	node := &model.Node{Name: "n1", CPUs: 1, Memory: 100, State: model.NodeUp, Responding: true}
	part := &model.Partition{Name: "p", Nodes: []string{"n1"}, Default: true, State: model.PartUp, MaxTime: model.Unlimited, DefaultTime: model.Unset}
	c.SetService(service.New(log, st, d, clock.Real{}, c, &service.Settings{
		ClusterName: "bench", Nodes: []*model.Node{node}, Partitions: []*model.Partition{part},
	}))
	txn := st.Begin()
	txn.PutNode(node)
	txn.SetPartitions([]*model.Partition{part})
	txn.Commit(0)
	return c, d
}

func benchSpec(held bool) *model.JobSpec {
	return &model.JobSpec{Name: "wrap", Script: "#!/bin/sh\ntrue\n", Hold: held, TimeLimit: model.Unset,
		MinNodes: model.Unset, NTasks: 4, CPUsPerTask: model.Unset, MemPerNode: model.Unset}
}

// BenchmarkSubmitBurst submits (commit + trigger, as SubmitJob does) as
// fast as it can into 10,000 jobs pending on resources while the real
// scheduling loop runs: passes/op < 1 shows triggers coalesced, and
// sched-µs/op is the pass CPU each submission carries.
func BenchmarkSubmitBurst(b *testing.B) {
	c, d := newBenchController(b)
	spec := benchSpec(false)
	for range 10_000 {
		if _, err := d.Apply(fsm.TypeSubmit, &fsm.Submit{Spec: spec, Partition: "p", User: "u", Now: 1}); err != nil {
			b.Fatal(err)
		}
	}
	c.cycle()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { c.scheduleLoop(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	before := c.SchedStats()
	b.ResetTimer()
	for b.Loop() {
		if _, err := d.Apply(fsm.TypeSubmit, &fsm.Submit{Spec: spec, Partition: "p", User: "u", Now: 1}); err != nil {
			b.Fatal(err)
		}
		c.Kick()
	}
	after := c.SchedStats()
	b.ReportMetric(float64(after.Cycles-before.Cycles)/float64(b.N), "passes/op")
	b.ReportMetric(float64((after.Total-before.Total).Microseconds())/float64(b.N), "sched-µs/op")
}
