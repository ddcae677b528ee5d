package sim

import (
	"os"
	"testing"
)

// BenchmarkSDSC replays the first 5,000 jobs of SDSC-SP2 under each policy
// (the whole trace: drover sim --trace ... ; see bench/README.md).
func BenchmarkSDSC(b *testing.B) {
	path := os.Getenv("DROVER_TRACES")
	if path == "" {
		path = "/work/shared/traces"
	}
	tr, err := ReadFile(path + "/SDSC-SP2-1998-4.2-cln.swf.gz")
	if err != nil {
		b.Skip("trace not available:", err)
	}
	jobs := Slice(tr.Jobs, 0, 5000)
	for _, policy := range []string{"fifo", "easy", "backfill"} {
		b.Run(policy, func(b *testing.B) {
			for b.Loop() {
				r, err := Run(jobs, Options{Procs: tr.MaxProcs, Sched: Policies[policy]})
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(r.JobsPerSecond(), "jobs/s")
			}
		})
	}
}
