package sched

import (
	"testing"

	"github.com/drover-hpc/drover/internal/model"
)

// TestBoundLevels checks the bookkeeping that keeps earliestBound's
// per-shape bounds lower bounds: a job reads the level at or below its
// limit, a new level starts from the one below it, and what a job learns
// reaches only the levels at or above its own limit (a shorter limit may
// fit earlier).
func TestBoundLevels(t *testing.T) {
	for _, l := range []int64{1, 2, 599, 600, 601, 86400, 172800} {
		lv := boundLadder(l)
		if lv > l || lv < 1 || boundLadder(lv) != lv {
			t.Fatalf("boundLadder(%d) = %d: want a level at or below the limit", l, lv)
		}
		if next := lv + max(1, lv/4); next <= l {
			t.Fatalf("boundLadder(%d) = %d: level %d is closer", l, lv, next)
		}
	}
	if boundLadder(0) != never {
		t.Fatal("no limit must read the level of no limit")
	}
	c := &cluster{nodes: make([]*model.Node, 3)}
	r := request{tasks: 1, cpt: 1}
	k := newBoundKey(&r, 1)
	s600 := boundLadder(600) // a level: raise with it reaches the level
	bs, short := c.boundsFor(k, 600)
	bs.raise(1, s600, 5000)
	if short[1] != 5000 {
		t.Fatalf("raise at the level's own limit: got %d", short[1])
	}
	_, long := c.boundsFor(k, 7200) // new: starts from the level below
	if long[1] != 5000 {
		t.Fatalf("new level: got %d, want the lower level's 5000", long[1])
	}
	bs.raise(2, 3600, 9000) // a 1h job: bounds 2h jobs, not 10 min ones
	if short[2] != 0 || long[2] != 9000 {
		t.Fatalf("raise(3600) reached short=%d long=%d; want 0 and 9000", short[2], long[2])
	}
	bs.raise(2, 601, 1) // the 600 s level is below 601 s: untouched
	if short[2] != 0 {
		t.Fatalf("raise(601) reached level %d", s600)
	}
	bs.raise(2, s600, 100) // never lowers a bound
	if long[2] != 9000 || short[2] != 100 {
		t.Fatalf("raise lowered a bound: short=%d long=%d", short[2], long[2])
	}
	r2 := request{tasks: 64, nodes: 4, big: 16, nBig: 4, cpt: 1}
	r3 := request{tasks: 32, nodes: 2, big: 16, nBig: 2, cpt: 1}
	if newBoundKey(&r2, 16) != newBoundKey(&r3, 16) {
		t.Fatal("jobs that differ only in their totals must share bounds")
	}
}
