package sim

import "testing"

// BenchmarkLublinDeepQueue replays Lublin-1's first 2,000 jobs under the
// shipped backfill: queues grow hundreds deep, the simulator's worst case.
func BenchmarkLublinDeepQueue(b *testing.B) {
	tr, err := ReadFile("/work/shared/traces/lublin_256.swf")
	if err != nil {
		b.Skip("trace not available:", err)
	}
	jobs := Slice(tr.Jobs, 0, 2000)
	for b.Loop() {
		r, err := Run(jobs, Options{Procs: 256, Sched: Policies["backfill"]})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(r.JobsPerSecond(), "jobs/s")
	}
}
