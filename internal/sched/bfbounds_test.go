package sched

import (
	"math/rand"
	"slices"
	"testing"

	"github.com/drover-hpc/drover/internal/model"
)

// TestBoundLevels checks the bookkeeping that keeps earliestBound's
// per-shape bounds lower bounds: a job reads the level at or below its
// limit, a new level starts from the one below it, and what a job learns
// at its own limit reaches only the levels above (a shorter limit may fit
// earlier); and the level trees' queries.
func TestBoundLevels(t *testing.T) {
	for _, l := range []int64{1, 2, 599, 600, 601, 86400, 172800} {
		lv := boundLadder(l)
		if lv > l || lv < 1 || boundLadder(lv) != lv {
			t.Fatalf("boundLadder(%d) = %d: want a level at or below the limit", l, lv)
		}
		if next := 4 * lv; next <= l {
			t.Fatalf("boundLadder(%d) = %d: level %d is closer", l, lv, next)
		}
	}
	if boundLadder(0) != never {
		t.Fatal("no limit must read the level of no limit")
	}
	nodes := []*model.Node{{Name: "a", CPUs: 1, Memory: 1, State: model.NodeUp, Responding: true},
		{Name: "b", CPUs: 1, Memory: 1, State: model.NodeUp, Responding: true},
		{Name: "c", CPUs: 1, Memory: 1, State: model.NodeUp, Responding: true}}
	c := newCluster(nodes, map[string]*model.Partition{"p": {Name: "p", Nodes: []string{"a", "b", "c"}, State: model.PartUp}}, false)
	ps := c.parts["p"]
	r := request{tasks: 1, cpt: 1}
	k := newBoundKey(&r, 1, ps)
	level := func(limit int64) (*boundSet, int, func(pos int) int64) {
		bs, lv, _ := c.boundsFor(k, limit, 0)
		l := bs.levels[lv]
		return bs, lv, func(pos int) int64 { return l.at(pos) }
	}
	bs, short, s := level(600)
	bs.levels[short].raise(1, 5000)
	if s(1) != 5000 {
		t.Fatalf("raise: got %d", s(1))
	}
	_, _, l := level(7200) // new: starts from the level below
	if l(1) != 5000 {
		t.Fatalf("new level: got %d, want the lower level's 5000", l(1))
	}
	_, mid, m := level(3600)
	bs.raiseAbove(mid, 2, 9000) // a 1h job: bounds 2h jobs, not 1h or 10 min ones
	if s(2) != 0 || m(2) != 0 || l(2) != 9000 {
		t.Fatalf("raiseAbove(3600) reached short=%d mid=%d long=%d; want 0, 0 and 9000", s(2), m(2), l(2))
	}
	bs.raiseAbove(short, 2, 100) // never lowers a bound
	if l(2) != 9000 || m(2) != 100 || s(2) != 0 {
		t.Fatalf("raise lowered a bound: short=%d mid=%d long=%d", s(2), m(2), l(2))
	}
	// The tree's queries: least bound, first position at most x.
	sl := bs.levels[short]
	sl.set(0, 7000)
	if p := sl.least(); p != 2 {
		t.Fatalf("least = %d, want 2 (bounds %d %d %d)", p, s(0), s(1), s(2))
	}
	for _, tc := range []struct {
		from int
		x    int64
		want int
	}{{0, 0, 2}, {0, 6000, 1}, {0, 7000, 0}, {1, 4999, 2}, {2, 0, 2}, {3, never - 1, -1}, {0, -1, -1}} {
		if got := sl.firstAtMost(tc.from, tc.x); got != tc.want {
			t.Fatalf("firstAtMost(%d, %d) = %d, want %d", tc.from, tc.x, got, tc.want)
		}
	}
	r2 := request{tasks: 64, nodes: 4, big: 16, nBig: 4, cpt: 1}
	r3 := request{tasks: 32, nodes: 2, big: 16, nBig: 2, cpt: 1}
	if newBoundKey(&r2, 16, ps) != newBoundKey(&r3, 16, ps) {
		t.Fatal("jobs that differ only in their totals must share bounds")
	}
}

// TestBoundTree compares a level's tree with a linear scan over random
// bounds and updates, for sizes from one node (the leaf is the root) to
// five depths; and the stored form of a bound.
func TestBoundTree(t *testing.T) {
	l0 := &boundLevel{now: 1_800_000_000}
	for _, v := range []int64{0, 1, l0.now - 5, l0.now, l0.now + 1, l0.now + 86400, l0.now + 1<<40, never - 1, never} {
		got := l0.dec(l0.enc(v))
		switch {
		case v >= never && got != never:
			t.Fatalf("never stored as %d", got)
		case v < never && (got > v || got >= never):
			t.Fatalf("%d stored as %d: no longer a lower bound", v, got)
		case v > l0.now && v < l0.now+1<<30 && got != v:
			t.Fatalf("%d stored as %d", v, got)
		}
	}
	rng := rand.New(rand.NewSource(1))
	for round := range 300 {
		n := 1 + rng.Intn(70)
		if round%10 == 0 {
			n = 1 + rng.Intn(5000)
		}
		off, size := boundLayout(n)
		l := &boundLevel{t: make([]boundVal, size), off: off}
		for k := range l.t {
			l.t[k] = boundNever // padding, as baseBounds leaves it
		}
		l.arg = buildAbove(l.t, nil, off)
		vals := make([]int64, n)
		for pos := range vals {
			vals[pos] = int64(rng.Intn(50))
			if rng.Intn(5) == 0 {
				vals[pos] = never
			}
			l.set(pos, vals[pos])
		}
		for q := range 200 {
			if q%2 == 0 {
				pos := rng.Intn(n)
				vals[pos] = int64(rng.Intn(50))
				if rng.Intn(5) == 0 {
					vals[pos] = never
				}
				l.set(pos, vals[pos])
			}
			if q%50 == 49 {
				// Updates in place leave the tree as a rebuild would.
				t2 := slices.Clone(l.t)
				arg2 := buildAbove(t2, nil, off)
				if !slices.Equal(t2, l.t) || !slices.Equal(arg2, l.arg) {
					t.Fatalf("n=%d: tree after updates differs from the tree rebuilt from its leaves", n)
				}
			}
			least := slices.Min(vals)
			if l.root() != least {
				t.Fatalf("n=%d: root %d, want %d", n, l.root(), least)
			}
			if p := l.least(); vals[p] != least || slices.Index(vals, least) != p {
				t.Fatalf("n=%d: least() = %d (bound %d), want the leftmost %d", n, p, vals[p], least)
			}
			from, x := rng.Intn(n+2), int64(rng.Intn(55))
			want := -1
			for pos := from; pos < n; pos++ {
				if vals[pos] <= x {
					want = pos
					break
				}
			}
			if got := l.firstAtMost(from, x); got != want {
				t.Fatalf("n=%d: firstAtMost(%d, %d) = %d, want %d", n, from, x, got, want)
			}
		}
	}
}

// TestNodeNeed checks which shapes seed a new level's bounds (bfseed.go):
// a shape needing no more CPUs, memory or GPUs (of a type it accepts) of
// a node than another; never a whole-node or exclusive one.
func TestNodeNeed(t *testing.T) {
	need := func(r request, unit int) (nodeNeed, bool) {
		k := boundKey{r: r, unit: unit}
		return k.need()
	}
	one, _ := need(request{pack: true, tasks: 64, cpt: 1}, 1)
	sixteen, _ := need(request{nodes: 4, big: 16, nBig: 4, tasks: 64, cpt: 1}, 16)
	perCPU, _ := need(request{pack: true, tasks: 4, cpt: 2, mem: memPerCPU, memVal: 1000}, 1)
	gpu1, _ := need(request{nodes: 1, big: 1, nBig: 1, tasks: 1, cpt: 8, gpuNode: 1}, 1)
	gpu4, _ := need(request{nodes: 1, big: 1, nBig: 1, tasks: 1, cpt: 8, gpuNode: 4}, 1)
	a100, _ := need(request{nodes: 1, big: 1, nBig: 1, tasks: 1, cpt: 8, gpuNode: 4, gpuType: "a100"}, 1)
	if one.cpus != 1 || sixteen.cpus != 16 || perCPU.cpus != 2 || perCPU.mem != 2000 || gpu4.gpus != 4 || gpu4.cpus != 8 {
		t.Fatalf("needs: %+v %+v %+v %+v", one, sixteen, perCPU, gpu4)
	}
	for _, tc := range []struct {
		name string
		n, m nodeNeed
		want bool
	}{
		{"1 CPU within 16", one, sixteen, true}, {"16 within 1", sixteen, one, false},
		{"memory within none", perCPU, sixteen, false}, {"1 GPU within 4", gpu1, gpu4, true},
		{"4 GPUs within 1", gpu4, gpu1, false}, {"any type within a100", gpu4, a100, true},
		{"a100 within any type", a100, gpu4, false}, {"GPUs within none", gpu1, sixteen, false},
	} {
		if got := tc.n.within(tc.m); got != tc.want {
			t.Errorf("%s: within = %v", tc.name, got)
		}
	}
	if _, ok := need(request{nodes: 1, big: 1, nBig: 1, tasks: 1, cpt: 1, exclusive: true}, 1); ok {
		t.Error("an exclusive shape's need depends on the node")
	}
	if _, ok := need(request{pack: true, tasks: 1, cpt: 1, mem: memWholeNode}, 1); ok {
		t.Error("a whole-node shape's need depends on the node")
	}
}
