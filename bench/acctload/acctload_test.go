// Package acctload measures whether recording job completions in the
// accounting database slows the scheduler (issue 5: 1,000 completions a
// second must not): the same scheduling cycle is timed alone and while
// another goroutine writes 1,000 finished jobs a second into SQLite the
// way the controller's outbox loop does (a batch every 200 ms).
//
//	go test -bench . ./bench/acctload
package acctload

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/drover-hpc/drover/internal/acct"
	"github.com/drover-hpc/drover/internal/acct/accttest"
	"github.com/drover-hpc/drover/internal/acct/sqlstore"
	"github.com/drover-hpc/drover/internal/sched"
	"github.com/drover-hpc/drover/internal/sched/schedtest"
)

func cluster() *schedtest.Cluster {
	c := schedtest.New()
	c.AddNodes("n", 1000, 64, 256*1024)
	c.AddPartition("batch")
	for range 20000 {
		s := schedtest.Spec()
		s.MemPerCPU = 2000
		c.Submit(s)
	}
	return c
}

// record writes rate jobs a second until ctx ends; it returns how many.
func record(b *testing.B, ctx context.Context, rate int) *atomic.Int64 {
	st, err := sqlstore.Open(context.Background(), sqlstore.Config{Driver: "sqlite", DSN: filepath.Join(b.TempDir(), "acct.db")})
	if err != nil {
		b.Fatal(err)
	}
	var n atomic.Int64
	go func() {
		defer st.Close()
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		id := uint32(0)
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			batch := make([]*acct.Job, rate/5)
			for i := range batch {
				id++
				batch[i] = accttest.Job("c", id, int64(id))
			}
			if err := st.PutJobs(ctx, batch); err == nil {
				n.Add(int64(len(batch)))
			}
		}
	}()
	return &n
}

func BenchmarkScheduleWhileRecording(b *testing.B) {
	for _, rate := range []int{0, 1000} {
		name := "idle"
		if rate > 0 {
			name = "recording-1000-per-s"
		}
		b.Run(name, func(b *testing.B) {
			in := cluster().Input()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var written *atomic.Int64
			if rate > 0 {
				written = record(b, ctx, rate)
				time.Sleep(300 * time.Millisecond) // the writer is in its stride
			}
			t0 := time.Now()
			b.ResetTimer()
			for b.Loop() {
				sched.Schedule(in, 0, sched.Config{})
			}
			b.StopTimer()
			if written != nil {
				b.ReportMetric(float64(written.Load())/time.Since(t0).Seconds(), "recorded/s")
			}
		})
	}
}
