package sacct

import (
	"github.com/drover-hpc/drover/internal/acct"
	"testing"
)

// FuzzOptions: any --format, -j, -s, -S and --units a user types either
// is refused with a message or prints the jobs, never a panic.
func FuzzOptions(f *testing.F) {
	f.Add("JobID,JobName%-30,State,ExitCode", "7", "CD,F", "2026-11-22T05:00", "M")
	f.Add("jobid%99999999999,state%-0", "7_1.batch,8.0", "pending,XX", "now-1day", "")
	f.Add("ALL", "1_2_3.4.5", "", "midnight", "G")
	f.Add("%,%%,,", "0", ",,", "24:00", "P")
	jobs := &fake{jobs: []*acct.Job{job(7, "job.sh", "COMPLETED", 0, 0, 2, "COMPLETED", 0, 0)}}
	f.Fuzz(func(t *testing.T, format, ids, states, start, units string) {
		args := []string{"--format", format, "-j", ids, "-S", start}
		if states != "" {
			args = append(args, "-s", states)
		}
		if units != "" {
			args = append(args, "--units", units)
		}
		_, errOut, code := run(jobs, nil, args...)
		if code != 0 && errOut == "" {
			t.Fatalf("%q: exit %d with no message", args, code)
		}
	})
}
