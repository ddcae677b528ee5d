package e2e

import (
	"strings"
	"testing"
	"time"
)

// TestBackfillGPUs is the picture through the real binary: a
// 4-GPU job waits for GPUs a running job holds; short 1-GPU jobs that end
// before its planned start run beside it, a long one waits (Priority),
// and squeue --start / scontrol show the planned start.
func TestBackfillGPUs(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("short")
	}
	c := upWithConf(t, "GresTypes=gpu\nSchedulerParameters=bf_resolution=1,bf_interval=1,bf_fancy=2\n"+
		"NodeName=bf1 NodeAddr=127.0.0.1 CPUs=8 RealMemory=2000 Gres=gpu:4\n"+
		"PartitionName=gpu Nodes=ALL Default=YES MaxTime=INFINITE State=UP\n",
		map[string]string{"gres.conf": "NodeName=bf1 Name=gpu File=$DIR/dev/nvidia[0-3]\n"},
		func(dir string) { fakeGPUs(t, dir, 4) })
	submit := func(args ...string) string {
		out := c.must("sbatch", append([]string{"-o", "/dev/null", "-c1", "--mem=10M"}, args...)...)
		return submittedRe.FindStringSubmatch(out)[1]
	}
	holder := submit("--gres=gpu:2", "-t", "5", "--wrap", "sleep 300")
	c.waitState(holder, "RUNNING", 30*time.Second)
	big := submit("--gres=gpu:4", "-t", "10", "--wrap", "sleep 300")
	short := submit("--gres=gpu:1", "-t", "2", "--wrap", "sleep 300")
	long := submit("--gres=gpu:1", "-t", "60", "--wrap", "sleep 300")
	c.waitState(short, "RUNNING", 30*time.Second)
	c.waitFor("the 4-GPU job's reason and planned start", 20*time.Second, func() bool {
		return c.jobField(big, "Reason") == "Resources" && c.jobField(big, "StartTime") != "Unknown" &&
			c.jobField(long, "Reason") == "Priority"
	})
	if st := c.jobField(long, "JobState"); st != "PENDING" {
		t.Fatalf("the 60-minute 1-GPU job is %s; it would delay the 4-GPU job", st)
	}
	started := c.jobField(holder, "StartTime")
	hs, err := time.ParseInLocation("2006-01-02T15:04:05", started, time.Local)
	if err != nil {
		t.Fatalf("holder StartTime %q: %v", started, err)
	}
	// The 4-GPU job is planned when the holder reaches its 5-minute limit;
	// the long job after the 4-GPU job's 10 minutes.
	wantBig := hs.Add(5 * time.Minute).Format("2006-01-02T15:04:05")
	if got := c.jobField(big, "StartTime"); got != wantBig {
		t.Errorf("4-GPU job StartTime=%s, want %s", got, wantBig)
	}
	c.waitFor("the long job's planned start", 20*time.Second, func() bool {
		return c.jobField(long, "StartTime") == hs.Add(15*time.Minute).Format("2006-01-02T15:04:05")
	})
	// SCHEDNODES (%Y) names the node the start is planned on.
	out := c.must("squeue", "--start", "-h", "-o", "%i %S %Y %r")
	lines := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		id, rest, _ := strings.Cut(l, " ")
		lines[id] = rest
	}
	if lines[big] != wantBig+" bf1 Resources" {
		t.Errorf("squeue --start for the 4-GPU job: %q, want %q (all: %q)", lines[big], wantBig+" bf1 Resources", out)
	}
	if got := c.jobField(big, "SchedNodeList"); got != "bf1" {
		t.Errorf("scontrol show job SchedNodeList=%q for the 4-GPU job, want bf1", got)
	}
	if _, ok := lines[short]; ok {
		t.Errorf("squeue --start lists running job %s: %q", short, out)
	}
	if strings.Contains(c.must("squeue", "--start"), "N/A") {
		t.Errorf("a pending job without a planned start:\n%s", c.must("squeue", "--start"))
	}
	// The node is held for the 4-GPU job's later start: sinfo shows it
	// planned (22.05's "mix-" for a node in use, -t planned selects it).
	if got := strings.TrimSpace(c.must("sinfo", "-h", "-N", "-o", "%N %t")); got != "bf1 mix-" {
		t.Errorf("sinfo -N %%t: %q, want \"bf1 mix-\"", got)
	}
	if got := strings.TrimSpace(c.must("sinfo", "-h", "-N", "-t", "planned", "-o", "%N")); got != "bf1" {
		t.Errorf("sinfo -t planned: %q", got)
	}
	// sched/builtin would not have started the short job: one cycle
	// later, it is still the only 1-GPU job running.
	if n := strings.Count(c.must("squeue", "-h", "-t", "R", "-o", "%i"), "\n"); n != 2 {
		t.Errorf("%d jobs running, want 2 (holder, short)", n)
	}
	c.must("scancel", holder, big, short, long)
}
