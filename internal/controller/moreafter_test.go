package controller

import "testing"

// TestMoreAfterStarts: the pass after a pass that started jobs runs at
// once for each duty it has (refused starts, preemption, dependencies on
// starts, the per-cycle start cap), and not for starts alone.
func TestMoreAfterStarts(t *testing.T) {
	for _, tc := range []struct {
		name                        string
		planned, started, preempted int
		depWait                     bool
		maxPerCycle                 int
		want                        bool
	}{
		{name: "starts alone", planned: 4, started: 4, want: false},
		{name: "starts under the cap", planned: 4, started: 4, maxPerCycle: 10, want: false},
		{name: "some refused by the FSM", planned: 4, started: 3, want: true},
		{name: "victims picked", planned: 1, started: 1, preempted: 2, want: true},
		{name: "a job waits on a dependency", planned: 1, started: 1, depWait: true, want: true},
		{name: "stopped at MaxJobsPerCycle", planned: 10, started: 10, maxPerCycle: 10, want: true},
	} {
		if got := moreAfterStarts(tc.planned, tc.started, tc.preempted, tc.depWait, tc.maxPerCycle); got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
}
