package e2e

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// ticker is a batch script that appends "<name> <unix time>" to file
// every 0.2 s, n times: its progress shows when it ran.
func ticker(file, name string, n int) string {
	return "for i in $(seq 1 " + strconv.Itoa(n) + "); do echo " + name + " $(date +%s.%N) >> " + file + "; sleep 0.2; done"
}

// ticks reads a ticker file: the names in order, and their times.
func ticks(t *testing.T, file string) ([]string, []float64) {
	var names []string
	var times []float64
	for _, l := range strings.Split(strings.TrimSpace(readFile(t, file)), "\n") {
		f := strings.Fields(l)
		if len(f) != 2 {
			continue
		}
		v, _ := strconv.ParseFloat(f[1], 64)
		names, times = append(names, f[0]), append(times, v)
	}
	return names, times
}

// secsOf reads [D-]HH:MM:SS or MM:SS as seconds.
func secsOf(s string) int {
	days := 0
	if d, rest, ok := strings.Cut(s, "-"); ok {
		days, _ = strconv.Atoi(d)
		s = rest
	}
	n := 0
	for _, x := range strings.Split(s, ":") {
		v, _ := strconv.Atoi(x)
		n = n*60 + v
	}
	return days*86400 + n
}

// TestPreemptSuspend: PreemptMode=SUSPEND under partition_prio. A
// high-tier job freezes the low-tier job on its CPUs (state S, no
// progress), runs, and when it ends the victim resumes (R) and finishes
// within a time limit that the suspension would have broken; sacct shows
// the suspended time and leaves it out of Elapsed.
func TestPreemptSuspend(t *testing.T) {
	t.Parallel()
	c := upWithConf(t, "PreemptType=preempt/partition_prio\nPreemptMode=SUSPEND,GANG\n"+
		"NodeName=psus1 NodeAddr=127.0.0.1 CPUs=2 RealMemory=2000\n"+
		"PartitionName=hi Nodes=ALL Default=YES PriorityTier=2 MaxTime=INFINITE State=UP\n"+
		"PartitionName=lo Nodes=ALL PriorityTier=1 MaxTime=INFINITE State=UP\n", map[string]string{}, nil)
	out := filepath.Join(c.dir, "victim.ticks")
	// 40 ticks: about 8 s of run time, under its 12 s limit only if the
	// suspension (about 5 s) does not count.
	pidFile := filepath.Join(c.dir, "victim.pid")
	v := c.sbatch("-p", "lo", "-c2", "--mem=10M", "-t", "0:12", "-o", os.DevNull, "--wrap", "echo $$ > "+pidFile+"; "+ticker(out, "v", 40))
	c.waitState(v, "RUNNING", 30*time.Second)
	c.waitFor("the victim to tick", 10*time.Second, func() bool { b, _ := os.ReadFile(out); return len(b) > 0 })
	pid := pidIn(t, pidFile)

	p := c.sbatch("-p", "hi", "-c2", "--mem=10M", "-o", os.DevNull, "--wrap", "sleep 5")
	c.waitState(p, "RUNNING", 30*time.Second)
	if got := strings.TrimSpace(c.must("squeue", "-h", "-j", v, "-o", "%t")); got != "S" {
		t.Fatalf("victim squeue %%t = %q while the preemptor runs, want S", got)
	}
	// The preemptor RUNNING is the controller's record; the node freezes
	// the victim when the message arrives.
	c.waitFor("the victim's cgroup to be frozen", 30*time.Second, func() bool { return frozen(pid) })
	held, _ := os.ReadFile(out)
	polls := 0
	for {
		now, _ := os.ReadFile(out)
		if c.jobField(p, "JobState") != "RUNNING" {
			break
		}
		polls++
		if len(now) != len(held) {
			t.Fatalf("the victim kept running while suspended (%d -> %d bytes)", len(held), len(now))
		}
		time.Sleep(200 * time.Millisecond) // sampling the frozen file while the preemptor runs
	}
	if polls < 5 {
		t.Errorf("only %d looks at the frozen victim: the preemptor ended too soon", polls)
	}
	c.waitState(p, "COMPLETED", 30*time.Second)
	c.waitFor("the victim to resume (R)", 10*time.Second, func() bool {
		st, _, _ := c.run("squeue", "-h", "-j", v, "-o", "%t")
		return strings.TrimSpace(st) == "R"
	})
	c.waitState(v, "COMPLETED", 30*time.Second)
	if n := strings.Count(readFile(t, out), "\n"); n != 40 {
		t.Errorf("victim ticked %d times, want 40", n)
	}
	f := strings.Split(strings.TrimSpace(c.must("sacct", "-n", "-P", "-X", "-j", v, "-o", "State,Suspended,Elapsed,Start,End")), "|")
	if len(f) != 5 || f[0] != "COMPLETED" || secsOf(f[1]) < 3 {
		t.Fatalf("sacct: %q, want COMPLETED with 3 s or more suspended", f)
	}
	start, _ := time.ParseInLocation("2006-01-02T15:04:05", f[3], time.Local)
	end, _ := time.ParseInLocation("2006-01-02T15:04:05", f[4], time.Local)
	if wall := int(end.Sub(start).Seconds()); secsOf(f[2]) != wall-secsOf(f[1]) {
		t.Errorf("Elapsed %s with %s suspended over %d s of wall time", f[2], f[1], wall)
	}
}

// TestGang: two jobs on an OverSubscribe=FORCE:2 partition with a 2 s
// SchedulerTimeSlice share the node's CPUs by turns: each is suspended
// (S) while the other runs, both make progress in alternating blocks, and
// their run times add up to about the wall time.
func TestGang(t *testing.T) {
	t.Parallel()
	c := upWithConf(t, "PreemptMode=SUSPEND,GANG\nSchedulerTimeSlice=2\n"+
		"NodeName=gang1 NodeAddr=127.0.0.1 CPUs=2 RealMemory=2000\n"+
		"PartitionName=shared Nodes=ALL Default=YES OverSubscribe=FORCE:2 MaxTime=INFINITE State=UP\n", map[string]string{}, nil)
	out := filepath.Join(c.dir, "gang.ticks")
	// 30 ticks each: about 6 s of run time apiece.
	a := c.sbatch("-c2", "--mem=10M", "-o", os.DevNull, "--wrap", ticker(out, "a", 30))
	c.waitState(a, "RUNNING", 30*time.Second)
	b := c.sbatch("-c2", "--mem=10M", "-o", os.DevNull, "--wrap", ticker(out, "b", 30))
	c.waitState(b, "RUNNING", 30*time.Second)
	// One runs while the other is suspended, and they swap.
	c.waitTakingTurns(t, a, b)
	c.waitState(a, "COMPLETED", 60*time.Second)
	c.waitState(b, "COMPLETED", 60*time.Second)

	names, times := ticks(t, out)
	if n := len(names); n != 60 {
		t.Fatalf("%d ticks, want 60", n)
	}
	// Alternating blocks: the ticks change hands a few times, in runs of
	// several ticks (a slice is 2 s, 10 ticks).
	switches := 0
	for i := 1; i < len(names); i++ {
		if names[i] != names[i-1] {
			switches++
		}
	}
	if switches < 3 || switches > 20 {
		t.Errorf("the jobs changed hands %d times: %v", switches, names)
	}
	// Run times (sacct Elapsed leaves suspended time out) add up to the
	// wall time the two took, within the slicer's half-second steps.
	var elapsed, susp []int
	for _, id := range []string{a, b} {
		f := strings.Split(strings.TrimSpace(c.must("sacct", "-n", "-P", "-X", "-j", id, "-o", "ElapsedRaw,Suspended")), "|")
		n, _ := strconv.Atoi(f[0])
		elapsed, susp = append(elapsed, n), append(susp, secsOf(f[1]))
	}
	wall := times[len(times)-1] - times[0]
	t.Logf("%d hand-overs; run times %v s, suspended %v s, wall %.1f s", switches, elapsed, susp, wall)
	if sum := float64(elapsed[0] + elapsed[1]); sum < wall-3 || sum > wall+4 || slices.Contains(susp, 0) {
		t.Errorf("run times %v (suspended %v) over %.1f s of wall time", elapsed, susp, wall)
	}
}

// waitTakingTurns waits (bounded) until each of the gang jobs a and b has
// been seen suspended while the other runs; both running at once fails.
func (c *cluster) waitTakingTurns(t *testing.T, a, b string) {
	t.Helper()
	seen := map[string]bool{}
	c.waitFor("each gang job to be seen suspended while the other runs", 30*time.Second, func() bool {
		st, _, _ := c.run("squeue", "-h", "-j", a+","+b, "-o", "%i %t")
		s := map[string]string{}
		for _, l := range strings.Split(strings.TrimSpace(st), "\n") {
			if f := strings.Fields(l); len(f) == 2 {
				s[f[0]] = f[1]
			}
		}
		switch {
		case s[a] == "S" && s[b] == "R":
			seen[a] = true
		case s[b] == "S" && s[a] == "R":
			seen[b] = true
		case s[a] == "R" && s[b] == "R":
			t.Fatalf("both gang jobs running at once")
		}
		return seen[a] && seen[b]
	})
}
