package sched

import (
	"math/rand"
	"slices"
	"testing"

	"github.com/drover-hpc/drover/internal/model"
)

// TestNodeStepsPeak checks the cached step function (built at once, or
// grown reservation by reservation) and its peak
// against the sum of overlapping reservations at every instant.
func TestNodeStepsPeak(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for round := range 300 {
		var res []reserve
		var grown nodeSteps
		var buf []resEvent
		grown.build(nil, nil, &buf)
		for range rng.Intn(12) {
			from := int64(rng.Intn(50))
			rv := reserve{from: from, to: from + 1 + int64(rng.Intn(30)), cpu: int32(1 + rng.Intn(4)), mem: int64(rng.Intn(100))}
			res = append(res, rv)
			grown.addReserve(rv)
		}
		var built nodeSteps
		built.build(nil, res, &buf)
		brute := func(a, b int64) (int32, int64) {
			var pc int32
			var pm int64
			for tt := a; tt < b && tt < 100; tt++ {
				var sc int32
				var sm int64
				for _, r := range res {
					if r.from <= tt && tt < r.to {
						sc += r.cpu
						sm += r.mem
					}
				}
				pc, pm = max(pc, sc), max(pm, sm)
			}
			return pc, pm
		}
		a := int64(0)
		for range 20 {
			a += int64(rng.Intn(6))
			b := a + 1 + int64(rng.Intn(40))
			wc, wm := brute(a, b)
			for name, st := range map[string]*nodeSteps{"built": &built, "grown": &grown} {
				if c, m := st.peakOver(a, b); c != wc || m != wm {
					t.Fatalf("round %d %s: peakOver(%d, %d) = %d, %d; want %d, %d (res %+v)", round, name, a, b, c, m, wc, wm, res)
				}
			}
		}
	}
}

// TestNodeEarliest compares nodeEarliest's one-scan search with the plain
// definition: window() at each of the node's instants in time order.
func TestNodeEarliest(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	mid, past := 0, 0
	defer func() {
		if mid < 50 || past < 20 {
			t.Errorf("only %d of 400 cases start between now+1 and never, %d past the horizon: the cases test little", mid, past)
		}
	}()
	for round := range 400 {
		node := &model.Node{Name: "n1", CPUs: 1 + rng.Intn(8), Memory: 1000, State: model.NodeUp, Responding: true}
		node.AllocCPUs = rng.Intn(node.CPUs + 1)
		node.AllocMem = int64(rng.Intn(1000))
		part := &model.Partition{Name: "p", Nodes: []string{"n1"}, State: model.PartUp}
		c := newCluster([]*model.Node{node}, map[string]*model.Partition{"p": part}, true)
		c.bf = newProfile(1)
		now := int64(100)
		for range rng.Intn(4) {
			c.bf.addRelease(0, release{t: now + int64(rng.Intn(60)), cpu: int32(rng.Intn(node.AllocCPUs + 1)), mem: int64(rng.Intn(200))})
		}
		if rng.Intn(2) == 0 {
			c.stepsOf(0) // built before the reservations: grown in place
		}
		for range rng.Intn(10) {
			from := now + int64(rng.Intn(80))
			c.reserve([]pick{{node: 0, cpus: 1 + rng.Intn(node.CPUs), mem: int64(rng.Intn(300))}}, "", from, from+1+int64(rng.Intn(40)))
		}
		spec := &model.JobSpec{NTasks: 1 + rng.Intn(3), CPUsPerTask: 1, MemPerCPU: int64(rng.Intn(100)), MemPerNode: -1}
		r := newRequest(spec, Config{}, 0)
		limit := int64(1 + rng.Intn(50))
		horizon := now + 200
		if rng.Intn(3) == 0 {
			horizon = now + 1 + int64(rng.Intn(100)) // some cases stop before the fit
		}
		want := never
		var ts []int64
		ts = append(ts, now+1)
		for _, rl := range c.bf.rel[0] {
			ts = append(ts, rl.t)
		}
		for _, rv := range c.bf.res[0] {
			ts = append(ts, rv.to)
		}
		slices.Sort(ts)
		for _, tt := range ts {
			if tt <= now || tt > horizon {
				continue
			}
			cpu, mem, _ := c.window(0, tt, endOf(tt, limit), false)
			if r.capTasks(1, cpu, mem, 0, node) > 0 {
				want = tt
				break
			}
		}
		if want > now+1 && want < never {
			mid++
		}
		got, next := c.nodeEarliest(0, &r, 1, limit, now, horizon, 0)
		if got != want {
			t.Fatalf("round %d: nodeEarliest = %d, want %d (rel %+v res %+v)", round, got, want, c.bf.rel[0], c.bf.res[0])
		}
		// Past the horizon, the second result bounds the start found
		// with no horizon.
		if all, _ := c.nodeEarliest(0, &r, 1, limit, now, never, 0); got >= never {
			if all < next || next <= horizon {
				t.Fatalf("round %d: no fit up to %d, next %d, but one at %d", round, horizon, next, all)
			}
			if all < never && all > horizon {
				past++
			}
		}
	}
}

// TestDeltaSums checks the block sums of the profile's deltas through
// settle's two ways in (one by one, and merged), against a plain sum.
func TestDeltaSums(t *testing.T) {
	rng := rand.New(rand.NewSource(9))
	p := newProfile(1)
	for round := range 300 {
		for range []int{1, 3, 40}[rng.Intn(3)] {
			p.addDelta(int64(rng.Intn(5*deltaBlock)), int64(rng.Intn(21)-10))
		}
		p.settle()
		for b := range p.dsum {
			var want int64
			for _, d := range p.deltas[b*deltaBlock : min((b+1)*deltaBlock, len(p.deltas))] {
				want += d.cpu
			}
			if p.dsum[b] != want {
				t.Fatalf("round %d: block %d sums to %d, want %d", round, b, p.dsum[b], want)
			}
		}
		if want := (len(p.deltas) + deltaBlock - 1) / deltaBlock; len(p.dsum) != want {
			t.Fatalf("round %d: %d blocks for %d deltas", round, len(p.dsum), len(p.deltas))
		}
		at := int64(rng.Intn(6 * deltaBlock))
		var want int64
		for _, d := range p.deltas {
			if d.t <= at {
				want += d.cpu
			}
		}
		got, _ := p.deltasUpTo(0, 0, at)
		mid, d := p.deltasUpTo(0, 0, at/2)
		if again, _ := p.deltasUpTo(mid, d, at); got != want || again != want {
			t.Fatalf("round %d: deltas up to %d sum to %d (%d in two steps), want %d", round, at, got, again, want)
		}
	}
	if len(p.deltas) < 3*deltaBlock {
		t.Fatalf("only %d deltas: the blocks are not tested", len(p.deltas))
	}
}
