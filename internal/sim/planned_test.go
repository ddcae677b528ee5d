package sim

import "testing"

// blocked counts the free nodes the older jobs' reservations must hold:
// reserved CPUs less the CPUs running jobs free by then, at its worst
// over the new job's window; steps at one instant add frees first.
func TestPlannedBlocked(t *testing.T) {
	// 4 CPUs free at 100. A running job frees 2 CPUs at 200; a
	// reservation of 3 CPUs starts at 200 (one free node at least is
	// held from 200) and one of 2 CPUs at 300 (both running ones and
	// three free nodes needed: at least 3 free nodes held from 300).
	p := planned{ok: true, at: 100, firstRes: 200, use: []step{{200, -2}, {200, 3}, {300, 2}, {400, -3}, {400, -2}}}
	for _, tc := range []struct {
		need  int
		limit int64
		want  bool
	}{
		{5, 10, true},   // more than free
		{4, 100, false}, // ends at 200, before any reservation
		{4, 101, true},  // meets the first: 3 - 2 = 1 held
		{3, 101, false},
		{2, 200, false}, // ends as the second starts: 1 held, 3 left
		{2, 201, true},  // meets it: 3 + 2 - 2 = 3 held, 1 left
		{1, 201, false},
	} {
		if got := p.blocked(tc.need, tc.limit, 4, 100); got != tc.want {
			t.Errorf("need %d for %d s: blocked %v, want %v", tc.need, tc.limit, got, tc.want)
		}
	}
}

// still holds while every reservation is ahead and the horizon, moving
// with now, brings in no instant the plan knew of (rounded up to the
// resolution).
func TestPlannedStill(t *testing.T) {
	p := planned{ok: true, at: 1000, firstRes: 1500, instants: []int64{1600, 4950, 9000}}
	for _, tc := range []struct {
		now, window, res int64
		want             bool
	}{
		{1200, 0, 1, true},      // no window
		{1500, 0, 1, false},     // a reservation is due
		{1200, 3000, 60, true},  // horizon 4000 -> 4200: nothing in (3940, 4200]
		{1200, 4000, 60, false}, // 4950 rounds up to 4980 > 5000-60: may come in
		{1200, 3900, 60, false}, // 4950 in (4840, 5100]
		{1200, 7000, 60, true},  // (7940, 8200]: nothing
		{8000, 7000, 60, false}, // now+1 past the old horizon less a resolution
		{1400, 7900, 1, false},  // (8900, 9300]: 9000 comes in
		{1400, 7500, 1, true},   // (8500, 8900]: nothing
	} {
		if got := p.still(tc.now, tc.window, tc.res); got != tc.want {
			t.Errorf("now %d window %d res %d: still %v, want %v", tc.now, tc.window, tc.res, got, tc.want)
		}
	}
}
