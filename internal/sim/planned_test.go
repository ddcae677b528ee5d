package sim

import "testing"

// blocked counts the free nodes no older job's reservation takes within
// the new job's window.
func TestPlannedBlocked(t *testing.T) {
	// 4 nodes free at 100: reservations start on one at 200, on two at
	// 300, the fourth is reserved by none.
	p := planned{ok: true, at: 100, firstRes: 200, first: []int64{200, 300, 300, never}}
	for _, tc := range []struct {
		need  int
		limit int64
		want  bool
	}{
		{5, 10, true},   // more than free
		{4, 100, false}, // ends at 200, before any reservation
		{4, 101, true},  // meets the first: 3 left
		{3, 101, false},
		{3, 200, false}, // ends as the others start
		{3, 201, true},  // meets them: 1 left
		{1, 201, false},
		{1, 0, false}, // no limit: the unreserved node
		{2, 0, true},
	} {
		if got := p.blocked(tc.need, tc.limit, 100); got != tc.want {
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
