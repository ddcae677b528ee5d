package sim

import (
	"os"
	"testing"
)

// The gate only skips passes that start nothing, and the tail only ends
// passes early where nothing more starts: replayed with every pass run in
// full (and each one the gate would skip checked to start no job), a
// trace gives the same starts as with the gate and the tail. Windows of the public
// traces where queues run deep and jobs outlive their time limits.
func TestGateExact(t *testing.T) {
	dir := os.Getenv("DROVER_TRACES")
	if dir == "" {
		dir = "/work/shared/traces"
	}
	shadowSkips := 0
	for _, tc := range []struct {
		trace       string
		first, jobs int
	}{
		{"SDSC-SP2-1998-4.2-cln.swf.gz", 2500, 400},
		{"HPC2N-2002-2.2-cln.swf.gz", 0, 400},
		{"lublin_256.swf", 0, 400},
	} {
		tr, err := ReadFile(dir + "/" + tc.trace)
		if err != nil {
			t.Skip("trace not available:", err)
		}
		jobs := Slice(tr.Jobs, tc.first, tc.jobs)
		for _, p := range []struct {
			policy, priority string
			noWindow         bool // --bf-window 0 --bf-resolution 1
		}{{"fifo", "basic", false}, {"easy", "basic", false}, {"backfill", "basic", false}, {"backfill", "basic", true},
			{"backfill", "multifactor", false}, {"fifo", "multifactor", false}} {
			m, err := ParseMultifactor(p.priority)
			if err != nil {
				t.Fatal(err)
			}
			o := Options{Procs: tr.MaxProcs, Sched: Policies[p.policy], Priority: m.Func(tr.MaxProcs)}
			if p.noWindow {
				o.Sched.BfWindow, o.Sched.BfResolution = 0, 1
				p.policy += "(no window)"
			}
			gated, err := traceWorkload(jobs, o)
			if err != nil {
				t.Fatal(err)
			}
			full, _ := traceWorkload(jobs, o)
			full.everyPass = true
			rg, err := gated.Simulate(o.Sched)
			if err != nil {
				t.Fatalf("%s %s+%s: %v", tc.trace, p.policy, p.priority, err)
			}
			rf, err := full.Simulate(o.Sched)
			if err != nil {
				t.Fatalf("%s %s+%s, every pass: %v", tc.trace, p.policy, p.priority, err)
			}
			for k := range gated.Jobs {
				if a, b := gated.Jobs[k].StartTime, full.Jobs[k].StartTime; a != b {
					t.Fatalf("%s %s+%s: job %d starts at %d with the gate, %d without", tc.trace, p.policy, p.priority, k+1, a, b)
				}
			}
			if rg.Passes >= rf.Passes {
				t.Errorf("%s %s+%s: the gate skipped no pass (%d, %d)", tc.trace, p.policy, p.priority, rg.Passes, rf.Passes)
			}
			// The plan rule (planned.go) must be exercised where it applies:
			// backfill with equal fixed priorities.
			if o.Sched.Backfill && p.priority == "basic" && gated.planSkips == 0 {
				t.Errorf("%s %s+%s: the plan rule skipped no pass", tc.trace, p.policy, p.priority)
			}
			// Backfill passes over these queues end early (tail.go).
			if o.Sched.Backfill && gated.tailStops == 0 {
				t.Errorf("%s %s+%s: the tail ended no pass early", tc.trace, p.policy, p.priority)
			}
			shadowSkips += gated.shadowSkips
			t.Logf("%s %s+%s: %d of %d passes run (%d skipped by the plan rule, %d by the shadow rule; %d ended early)",
				tc.trace, p.policy, p.priority, rg.Passes, rf.Passes, gated.planSkips, gated.shadowSkips, gated.tailStops)
		}
	}
	// The shadow rule (shadow.go) must be exercised.
	if shadowSkips == 0 {
		t.Error("the shadow rule skipped no pass")
	}
}
