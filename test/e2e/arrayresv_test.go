package e2e

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestArrayPlannedStartsBounded: with Slurm's default bf_max_job_array_resv
// (20) a waiting array of 25 one-minute tasks behind a running job gets
// planned starts for its first 20 tasks only, a minute apart from the
// holder's limit on; squeue --start shows N/A for the other 5, and every
// task keeps Slurm's reason (Resources for the first, Priority behind it).
func TestArrayPlannedStartsBounded(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("short")
	}
	c := upWithConf(t, "SchedulerParameters=bf_resolution=1,bf_interval=1\n"+
		"NodeName=ar1 NodeAddr=127.0.0.1 CPUs=1 RealMemory=1000\n"+
		"PartitionName=p Nodes=ALL Default=YES MaxTime=INFINITE State=UP\n", map[string]string{}, nil)
	submit := func(args ...string) string {
		out := c.must("sbatch", append([]string{"-o", "/dev/null", "-c1", "--mem=10M"}, args...)...)
		return submittedRe.FindStringSubmatch(out)[1]
	}
	holder := submit("-t", "5", "--wrap", "sleep 300")
	c.waitState(holder, "RUNNING", 30*time.Second)
	array := submit("--array=0-24", "-t", "1", "--wrap", "sleep 300")
	rows := func() map[string][2]string {
		out := c.must("squeue", "--start", "-r", "-h", "-o", "%i %S %r")
		m := map[string][2]string{}
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			if f := strings.Fields(l); len(f) == 3 {
				m[f[0]] = [2]string{f[1], f[2]}
			}
		}
		return m
	}
	id := func(task int) string { return array + "_" + strconv.Itoa(task) }
	c.waitFor("planned starts for the array's first 20 tasks", 30*time.Second, func() bool {
		r := rows()
		return r[id(19)][0] != "" && r[id(19)][0] != "N/A" && r[id(24)][1] == "Priority"
	})
	hs, err := time.ParseInLocation("2006-01-02T15:04:05", c.jobField(holder, "StartTime"), time.Local)
	if err != nil {
		t.Fatal(err)
	}
	r := rows()
	for k := 0; k < 25; k++ {
		want := [2]string{"N/A", "Priority"}
		if k < 20 {
			want[0] = hs.Add(time.Duration(5+k) * time.Minute).Format("2006-01-02T15:04:05")
		}
		if k == 0 {
			want[1] = "Resources"
		}
		if got := r[id(k)]; got != want {
			t.Errorf("squeue --start for task %d: %q, want %q", k, got, want)
		}
	}
	if t.Failed() {
		t.Logf("squeue --start -r:\n%s", c.must("squeue", "--start", "-r"))
	}
}
