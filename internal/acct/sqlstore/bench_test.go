package sqlstore

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/drover-hpc/drover/internal/acct"
	"github.com/drover-hpc/drover/internal/acct/accttest"
)

// BenchmarkPutJobs writes batches of 500 finished jobs with two steps
// each, as the controller's outbox does (issue 5 asks for 1,000 job
// completions per second without slowing scheduling).
// BenchmarkPutJobs writes batches of new records: 25 is the controller's
// batch at ~125 submissions/s (one every 200 ms), 500 its largest.
func BenchmarkPutJobs(b *testing.B) {
	for _, batch := range []int{25, 500} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) { benchPutJobs(b, batch) })
	}
}

func benchPutJobs(b *testing.B, batch int) {
	ctx := context.Background()
	st, err := Open(ctx, Config{Driver: "sqlite", DSN: filepath.Join(b.TempDir(), "acct.db")})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	id := uint32(0)
	b.ResetTimer()
	t0 := time.Now()
	for range b.N {
		jobs := make([]*acct.Job, batch)
		for i := range jobs {
			id++
			jobs[i] = accttest.Job("c", id, int64(id))
		}
		if err := st.PutJobs(ctx, jobs); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*batch)/time.Since(t0).Seconds(), "jobs/s")
	b.ReportMetric(float64(time.Since(t0).Microseconds())/float64(b.N*batch), "µs/job")
}

// BenchmarkJobs100k reads 100,000 records without steps (sacct -X).
func BenchmarkJobs100k(b *testing.B) {
	ctx := context.Background()
	st, err := Open(ctx, Config{Driver: "sqlite", DSN: filepath.Join(b.TempDir(), "acct.db")})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	for start := uint32(1); start <= 100_000; start += 1000 {
		jobs := make([]*acct.Job, 1000)
		for i := range jobs {
			jobs[i] = accttest.Job("c", start+uint32(i), int64(start)+int64(i))
			jobs[i].Steps = jobs[i].Steps[:1]
		}
		if err := st.PutJobs(ctx, jobs); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for range b.N {
		jobs, err := st.Jobs(ctx, acct.Query{NoSteps: true, Start: 1, End: 200_000})
		if err != nil || len(jobs) != 100_000 {
			b.Fatalf("%v %d", err, len(jobs))
		}
	}
}

// BenchmarkJobs100kDefaultFields reads what sacct's default columns need.
func BenchmarkJobs100kDefaultFields(b *testing.B) {
	ctx := context.Background()
	st, err := Open(ctx, Config{Driver: "sqlite", DSN: filepath.Join(b.TempDir(), "acct.db")})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	for start := uint32(1); start <= 100_000; start += 1000 {
		jobs := make([]*acct.Job, 1000)
		for i := range jobs {
			jobs[i] = accttest.Job("c", start+uint32(i), int64(start)+int64(i))
			jobs[i].Steps = jobs[i].Steps[:1]
		}
		if err := st.PutJobs(ctx, jobs); err != nil {
			b.Fatal(err)
		}
	}
	fields := []string{"name", "partition", "account", "ncpus", "state", "cancelled_by", "exit_status", "exit_signal"}
	b.ResetTimer()
	for range b.N {
		jobs, err := st.Jobs(ctx, acct.Query{NoSteps: true, Start: 1, End: 200_000, Fields: fields})
		if err != nil || len(jobs) != 100_000 || jobs[5].State != "COMPLETED" || jobs[5].User != "" {
			b.Fatalf("%v %d", err, len(jobs))
		}
	}
}
