package sched_test

import (
	"fmt"
	"testing"

	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/sched"
	"github.com/drover-hpc/drover/internal/sched/schedtest"
)

// BenchmarkArrayDrain is one pass in the middle of draining a large
// array (issue 16's "one 2,000-task array"): one 64-CPU node (drover up's
// shape) full of the array's running tasks, every other task pending and
// identical for placement. The drain repeats this pass hundreds of times,
// so its cost per pending task is what the controller pays per job.
func BenchmarkArrayDrain(b *testing.B) {
	for _, bc := range []struct {
		name  string
		limit int64 // minutes; 0 = none (drover up's partition)
		cfg   sched.Config
	}{
		{"builtin", 0, sched.Config{}},
		{"backfill", 0, sched.Config{Backfill: true, BfWindow: 86400, BfResolution: 60, BfMaxJobTest: 500}},
		{"backfill/time=1", 1, sched.Config{Backfill: true, BfWindow: 86400, BfResolution: 60, BfMaxJobTest: 500}},
		// The controller's default: bf_max_job_array_resv=20.
		{"backfill/time=1/array_resv=20", 1, sched.Config{Backfill: true, BfWindow: 86400, BfResolution: 60,
			BfMaxJobTest: 500, BfMaxJobArrayResv: 20}},
	} {
		b.Run(fmt.Sprintf("tasks=2000/%s", bc.name), func(b *testing.B) {
			c := schedtest.New()
			c.AddNodes("n", 1, 64, 16000)
			c.AddPartition("batch")
			s := schedtest.Spec()
			s.Array = &model.ArraySpec{TaskIDs: make([]int, 2000)}
			for i := range s.Array.TaskIDs {
				s.Array.TaskIDs[i] = i + 1
			}
			if bc.limit > 0 {
				s.TimeLimit = bc.limit
			}
			c.SubmitArray(s)
			first := sched.Schedule(c.Input(), 0, bc.cfg)
			if err := c.Apply(first, 0); err != nil {
				b.Fatal(err)
			}
			in := c.Input()
			b.ReportAllocs()
			var p *sched.Plan
			for b.Loop() {
				p = sched.Schedule(in, 1, bc.cfg)
			}
			b.ReportMetric(float64(len(first.Starts)), "running")
			b.ReportMetric(float64(len(p.Reasons)), "waiting")
			if len(p.Starts) != 0 {
				b.Fatalf("a full node started %d more", len(p.Starts))
			}
		})
	}
}
