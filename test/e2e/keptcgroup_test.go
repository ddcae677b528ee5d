package e2e

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestKeptCgroupTreeStartsFromZero: a job's emptied cgroup tree, kept and
// taken over by the node's next job (another user's), shows that job none
// of the first one's CPU time in sacct (cpuacct is reset when kept).
func TestKeptCgroupTreeStartsFromZero(t *testing.T) {
	t.Parallel()
	cgroupV1(t)
	u1, u2 := testUser(t, "drovertest1"), testUser(t, "drovertest2")
	c := startUp(t, 1)
	a := c.runAsSbatch(t, u1, "-o", "/dev/null", "--wrap", "i=0; while [ $i -lt 600000 ]; do i=$((i+1)); done")
	c.waitAcct(a, "COMPLETED", 120*time.Second)
	kept := "/sys/fs/cgroup/memory/drover/" + c.node(1) + "/job_" + a
	if _, err := os.Stat(kept); err != nil {
		// Kept only when the job's memory use at its end was small.
		t.Skipf("job %s's cgroup tree was not kept: %v", a, err)
	}
	b := c.runAsSbatch(t, u2, "-o", "/dev/null", "--wrap", "true")
	c.waitAcct(b, "COMPLETED", 60*time.Second)
	if _, err := os.Stat(kept); err == nil {
		t.Fatalf("job %s did not take job %s's kept cgroup tree", b, a)
	}
	use := func(id string) time.Duration {
		f := c.acctRow(id, "TotalCPU")
		// [DD-[HH:]]MM:SS.mmm; these jobs take less than an hour.
		ms := strings.Split(f, ":")
		m, _ := strconv.Atoi(ms[0])
		s, err := strconv.ParseFloat(ms[len(ms)-1], 64)
		if len(ms) != 2 || err != nil {
			t.Fatalf("job %s TotalCPU %q", id, f)
		}
		return time.Duration(m)*time.Minute + time.Duration(s*float64(time.Second))
	}
	cpuA, cpuB := use(a), use(b)
	if cpuA < 100*time.Millisecond {
		t.Fatalf("job %s's CPU time %v: too little to tell whose it is", a, cpuA)
	}
	if cpuB >= cpuA/2 {
		t.Errorf("job %s (true) shows TotalCPU %v: job %s's (%v) carried over", b, cpuB, a, cpuA)
	}
	t.Logf("job %s TotalCPU %v; job %s TotalCPU %v", a, cpuA, b, cpuB)
}
