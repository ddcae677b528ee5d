package cgroups

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// BenchmarkSuspendResume100 freezes and thaws a job cgroup holding 100
// processes, as scontrol suspend/resume and gang slices do, each until the
// kernel reports the whole group frozen (or thawed). Issue 14's figure:
// under 50 ms each. Needs root and cgroups.
func BenchmarkSuspendResume100(b *testing.B) {
	m := testV1(b)
	g, err := m.Create("job_bench", Limits{})
	if err != nil {
		b.Fatal(err)
	}
	defer g.Kill(b.Context())
	// A shell joins the group, then forks 100 sleepers there.
	sh := exec.Command("sh", "-c", "read go; for i in $(seq 100); do sleep 600 & done; echo ready; wait")
	in, _ := sh.StdinPipe()
	out, _ := sh.StdoutPipe()
	if err := sh.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = sh.Process.Kill(); _ = sh.Wait() }()
	if err := g.AddProc(sh.Process.Pid); err != nil {
		b.Skipf("cannot place a process: %v", err)
	}
	fmt.Fprintln(in, "go")
	buf := make([]byte, 6)
	if _, err := out.Read(buf); err != nil {
		b.Fatal(err)
	}
	if procs, _ := g.Procs(); len(procs) < 101 {
		b.Fatalf("%d processes in the group, want 101", len(procs))
	}
	frozen := frozenState(b, g)
	var susp, res time.Duration
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		if err := g.Freeze(true); err != nil {
			b.Skipf("no freezer: %v", err)
		}
		waitFrozen(b, frozen, true)
		t1 := time.Now()
		if err := g.Freeze(false); err != nil {
			b.Fatal(err)
		}
		waitFrozen(b, frozen, false)
		susp += t1.Sub(t0)
		res += time.Since(t1)
	}
	b.ReportMetric(float64(susp.Microseconds())/1000/float64(b.N), "ms/suspend")
	b.ReportMetric(float64(res.Microseconds())/1000/float64(b.N), "ms/resume")
}

// frozenState returns a reader of g's freezer state: v2 cgroup.events
// "frozen 1", v1 freezer.state FROZEN.
func frozenState(b *testing.B, g Group) func() (bool, error) {
	dirs, v2 := g.Targets()
	if v2 != "" {
		return func() (bool, error) {
			s, err := os.ReadFile(filepath.Join(v2, "cgroup.events"))
			return strings.Contains(string(s), "frozen 1"), err
		}
	}
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "freezer.state")); err == nil {
			return func() (bool, error) {
				s, err := os.ReadFile(filepath.Join(d, "freezer.state"))
				return strings.TrimSpace(string(s)) == "FROZEN", err
			}
		}
	}
	b.Skip("no freezer")
	return nil
}

// waitFrozen polls the freezer state until it is want (bounded: 5 s).
func waitFrozen(b *testing.B, state func() (bool, error), want bool) {
	deadline := time.Now().Add(5 * time.Second)
	for {
		got, err := state()
		if err != nil {
			b.Fatal(err)
		}
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("freezer state still not frozen=%v after 5 s", want)
		}
		time.Sleep(100 * time.Microsecond)
	}
}
