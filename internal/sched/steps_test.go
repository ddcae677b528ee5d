package sched

import (
	"cmp"
	"math/rand"
	"slices"
	"testing"
	"unsafe"

	"github.com/drover-hpc/drover/internal/model"
)

// TestNodeStepsPeak checks a node's steps (built at once, or grown
// release by release and reservation by reservation, in random order)
// against the plain lists: what releases gave back by an instant, the
// reserved peaks over a window (sum of the reservations overlapping each
// instant), the GPUs reserved over it, and which instants are candidates.
func TestNodeStepsPeak(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for round := range 300 {
		var res []reserve
		var rel []release
		var grown nodeSteps
		grown.build(nil, nil, true)
		for range rng.Intn(16) {
			if rng.Intn(4) == 0 {
				rl := release{t: int64(rng.Intn(60)), cpu: int32(rng.Intn(5)), mem: int64(rng.Intn(100)), gpus: model.Bitmap{uint64(rng.Intn(256))}}
				k, _ := slices.BinarySearchFunc(rel, rl.t, func(x release, t int64) int { return cmp.Compare(x.t, t+1) })
				rel = slices.Insert(rel, k, rl)
				grown.addRelease(rl)
				continue
			}
			from := int64(rng.Intn(50))
			rv := reserve{from: from, to: from + 1 + int64(rng.Intn(30)), cpu: int32(1 + rng.Intn(4)), mem: int64(rng.Intn(100)), gpus: model.Bitmap{uint64(rng.Intn(256))}}
			res = append(res, rv)
			grown.addReserve(rv)
		}
		var built nodeSteps
		built.build(rel, res, true)
		brute := func(a, b int64) (pc int32, pm int64, pg uint64) {
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
			for _, r := range res {
				if r.from < b && r.to > a {
					pg |= word0(r.gpus)
				}
			}
			return pc, pm, pg
		}
		released := func(a int64) (cpu int32, mem int64, gpu uint64) {
			for _, r := range rel {
				if r.t <= a {
					cpu, mem, gpu = cpu+r.cpu, mem+r.mem, gpu|word0(r.gpus)
				}
			}
			return cpu, mem, gpu
		}
		a := int64(0)
		for range 20 {
			a += int64(rng.Intn(6))
			b := a + 1 + int64(rng.Intn(40))
			wc, wm, wg := brute(a, b)
			rc, rm, rg := released(a)
			for name, st := range map[string]*nodeSteps{"built": &built, "grown": &grown} {
				if c, m := st.peakOver(a, b); c != wc || m != wm {
					t.Fatalf("round %d %s: peakOver(%d, %d) = %d, %d; want %d, %d (res %+v)", round, name, a, b, c, m, wc, wm, res)
				}
				var c int32
				var m int64
				var g, rgot uint64
				k := st.find(a)
				if k >= 0 {
					c, m, rgot = st.e[k].relCPU, st.e[k].relMem, st.gpu()[k].rel
				}
				for k = max(k, 0); k < len(st.e) && st.at(k) < b; k++ {
					g |= st.gpu()[k].res
				}
				if c != rc || m != rm || rgot != rg || g != wg {
					t.Fatalf("round %d %s: at %d released %d CPUs %d MiB GPUs %b, reserved GPUs %b over [%d, %d); want %d, %d, %b, %b",
						round, name, a, c, m, rgot, g, a, b, rc, rm, rg, wg)
				}
			}
		}
		for name, st := range map[string]*nodeSteps{"built": &built, "grown": &grown} {
			var cands []int64
			if len(st.ts) != len(st.e) || len(st.gpu()) != len(st.e) {
				t.Fatalf("round %d %s: %d instants, %d entries, %d GPU words", round, name, len(st.ts), len(st.e), len(st.gpu()))
			}
			for k := range st.e {
				if k > 0 && st.at(k) <= st.at(k-1) {
					t.Fatalf("round %d %s: entries out of order: %v", round, name, st.ts)
				}
				if st.cand(k) {
					cands = append(cands, st.at(k))
				}
			}
			var want []int64
			for _, r := range rel {
				want = append(want, r.t)
			}
			for _, r := range res {
				want = append(want, r.to)
			}
			slices.Sort(want)
			if want = slices.Compact(want); !slices.Equal(cands, want) {
				t.Fatalf("round %d %s: candidates %v, want %v", round, name, cands, want)
			}
		}
	}
}

// TestNodeStepsSize keeps a node's steps one cache line (see nodeSteps).
func TestNodeStepsSize(t *testing.T) {
	if s := unsafe.Sizeof(nodeSteps{}); s != 64 {
		t.Fatalf("nodeSteps takes %d bytes, want 64 (one cache line)", s)
	}
	if s := unsafe.Sizeof(maskEntry{}); s != 32 {
		t.Fatalf("maskEntry takes %d bytes, want 32 (two to a cache line, none across two)", s)
	}
	if s := unsafe.Sizeof(leafVal{}); s != 16 {
		t.Fatalf("leafVal takes %d bytes, want 16 (a slot and its sibling in half a cache line)", s)
	}
}

// TestNodeStepsUnbuild checks that steps unbuilt for the next pass report
// so, are built again from the lists into the arrays they had (GPU words
// included), and that a node of no CPUs counts as built.
func TestNodeStepsUnbuild(t *testing.T) {
	for _, cpus := range []int{0, 8} {
		node := &model.Node{Name: "n1", CPUs: cpus, Memory: 1000, State: model.NodeUp, Responding: true,
			GPUs: []model.GPU{{Index: 0}, {Index: 1}}}
		part := &model.Partition{Name: "p", Nodes: []string{"n1"}, State: model.PartUp}
		c := newCluster([]*model.Node{node}, map[string]*model.Partition{"p": part}, true)
		c.bf = newProfile(1)
		c.bf.addRelease(0, release{t: 150, cpu: 2, mem: 10, gpus: model.BitmapOf(1)})
		c.reserve([]pick{{node: 0, cpus: 1, mem: 5}}, "", 120, 170)
		st := c.stepsOf(0)
		if !st.built() || st.nodeCPUs() != cpus {
			t.Fatalf("%d CPUs: built %v, CPUs %d", cpus, st.built(), st.nodeCPUs())
		}
		ts, e, g := slices.Clone(st.ts), slices.Clone(st.e), slices.Clone(st.gpu())
		ts0, e0, g0 := &st.ts[:1][0], &st.e[:1][0], &st.gpu()[:1][0]
		st.unbuild()
		if st.built() {
			t.Fatalf("%d CPUs: built after unbuild", cpus)
		}
		st = c.stepsOf(0)
		if !slices.Equal(st.ts, ts) || !slices.Equal(st.e, e) || !slices.Equal(st.gpu(), g) {
			t.Fatalf("%d CPUs: rebuilt steps %v %v %v, want %v %v %v", cpus, st.ts, st.e, st.gpu(), ts, e, g)
		}
		if &st.ts[:1][0] != ts0 || &st.e[:1][0] != e0 || &st.gpu()[:1][0] != g0 {
			t.Fatalf("%d CPUs: rebuilt steps did not keep their arrays", cpus)
		}
	}
}

// TestNodeEarliest compares nodeEarliest's one-scan search with the plain
// definition: window() at each of the node's instants in time order. Half
// the nodes have GPUs (of two types), and a third of the jobs ask for them.
func TestNodeEarliest(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	mid, past, gpuMid, wholeMid, bigMid := 0, 0, 0, 0, 0
	defer func() {
		if mid < 50 || past < 20 || gpuMid < 10 || wholeMid < 5 || bigMid < 2 {
			t.Errorf("only %d of 400 cases start between now+1 and never (%d of them GPU jobs, %d whole-node memory, %d of those on big nodes), %d past the horizon: the cases test little",
				mid, gpuMid, wholeMid, bigMid, past)
		}
	}()
	for round := range 400 {
		node := &model.Node{Name: "n1", CPUs: 1 + rng.Intn(8), Memory: 1000, State: model.NodeUp, Responding: true}
		node.AllocCPUs = rng.Intn(node.CPUs + 1)
		node.AllocMem = int64(rng.Intn(1000))
		// A node of more memory than the steps keep in 32 bits (nodeMem
		// reads the node's): a job of the whole node's memory still needs
		// what is allocated given back.
		big := rng.Intn(2) == 0
		if big {
			node.Memory += 1 << 33
		}
		if rng.Intn(2) == 0 {
			for k := range 1 + rng.Intn(8) {
				node.GPUs = append(node.GPUs, model.GPU{Index: k, Type: []string{"a", "b"}[rng.Intn(2)]})
			}
		}
		gpuIDs := func() model.Bitmap {
			var out []int
			for k := range node.GPUs {
				if rng.Intn(3) == 0 {
					out = append(out, k)
				}
			}
			return model.BitmapOf(out...)
		}
		node.AllocGPUs = gpuIDs()
		part := &model.Partition{Name: "p", Nodes: []string{"n1"}, State: model.PartUp}
		c := newCluster([]*model.Node{node}, map[string]*model.Partition{"p": part}, true)
		c.bf = newProfile(1)
		if rng.Intn(3) == 0 {
			c.gpus[0] = gpuIDs().AndNot(node.AllocGPUs) // taken by starts earlier in the pass
		}
		now := int64(100)
		for range rng.Intn(4) {
			c.bf.addRelease(0, release{t: now + int64(rng.Intn(60)), cpu: int32(rng.Intn(node.AllocCPUs + 1)), mem: int64(rng.Intn(200)), gpus: gpuIDs()})
		}
		if rng.Intn(2) == 0 {
			c.stepsOf(0) // built before the reservations: grown in place
		}
		for range rng.Intn(10) {
			from := now + int64(rng.Intn(80))
			c.reserve([]pick{{node: 0, cpus: 1 + rng.Intn(node.CPUs), mem: int64(rng.Intn(300)), gpus: rng.Intn(1 + len(node.GPUs)/2)}}, "", from, from+1+int64(rng.Intn(40)))
		}
		spec := &model.JobSpec{NTasks: 1 + rng.Intn(3), CPUsPerTask: 1, MemPerCPU: int64(rng.Intn(100)), MemPerNode: -1}
		if rng.Intn(3) == 0 {
			spec.MemPerNode = 0 // the whole node's memory: its size counts
		}
		if rng.Intn(3) == 0 {
			spec.GPUs = &model.GPUReq{PerNode: 1 + rng.Intn(3), Type: []string{"", "a", "b"}[rng.Intn(3)]}
		}
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
			cpu, mem, used := c.window(0, tt, endOf(tt, limit), true)
			// The GPUs window says are taken (from the steps' words),
			// against the plain lists.
			plain := node.AllocGPUs.Or(c.gpus[0])
			for _, rl := range c.bf.rel[0] {
				if rl.t <= tt {
					plain = plain.AndNot(rl.gpus)
				}
			}
			for _, rv := range c.bf.res[0] {
				if rv.from < endOf(tt, limit) && rv.to > tt {
					plain = plain.Or(rv.gpus)
				}
			}
			for k := range node.GPUs {
				if cpu >= 0 && used.Has(k) != plain.Has(k) {
					t.Fatalf("round %d: window(%d) has GPU %d taken: %v, the plain lists: %v", round, tt, k, used.Has(k), plain.Has(k))
				}
			}
			gpu := 0
			if r.hasGPU() && cpu >= 0 {
				gpu = c.countFree(0, used, r.gpuType)
			}
			if r.capTasks(1, cpu, mem, gpu, node) > 0 {
				want = tt
				break
			}
		}
		if want > now+1 && want < never {
			if r.mem == memWholeNode {
				wholeMid++
				if big {
					bigMid++
				}
			}
			mid++
			if r.hasGPU() {
				gpuMid++
			}
		}
		if st := c.stepsOf(0); c.nodeMem(st, 0) != node.Memory || st.nodeCPUs() != node.CPUs || (st.mem == memBig) != big {
			t.Fatalf("round %d: steps keep a node of %d CPUs and %d MiB as %d and %d (%d)", round, node.CPUs, node.Memory, st.nodeCPUs(), c.nodeMem(st, 0), st.mem)
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

// TestDeltaSums checks the profile's chunked deltas (their chunk sums
// included) and release instants against plain sorted lists; a third of
// the deltas are no releases (a reservation's start), and some releases
// change no CPU count.
func TestDeltaSums(t *testing.T) {
	rng := rand.New(rand.NewSource(9))
	p := newProfile(1)
	var times []int64
	sums := map[int64]int64{}
	for round := range 300 {
		for range []int{1, 3, 40}[rng.Intn(3)] {
			at, cpu := int64(rng.Intn(30*chunkMax)), int64(rng.Intn(21)-10)
			release := rng.Intn(3) > 0
			p.addDelta(at, cpu, release)
			if cpu != 0 {
				sums[at] += cpu
			}
			if release && !slices.Contains(times, at) {
				times = append(times, at)
			}
		}
		p.settle()
		slices.Sort(times)
		var got []int64
		for c := p.deltas.from(0); p.deltas.ok(c); c = p.deltas.next(c) {
			got = append(got, p.deltas.at(c))
		}
		if !slices.Equal(got, times) {
			t.Fatalf("round %d: instants %v, want %v", round, got, times)
		}
		for b, ch := range p.deltas.ch {
			var s int64
			for _, d := range ch {
				s += d.cpu
			}
			if s != p.deltas.sum[b] || len(ch) == 0 || len(ch) > chunkMax {
				t.Fatalf("round %d: chunk %d of %d deltas sums to %d, kept %d", round, b, len(ch), s, p.deltas.sum[b])
			}
		}
		if len(p.deltas.super) != (len(p.deltas.ch)+superFan-1)/superFan {
			t.Fatalf("round %d: %d runs of chunks for %d chunks", round, len(p.deltas.super), len(p.deltas.ch))
		}
		for s, sum := range p.deltas.super {
			var want int64
			for _, x := range p.deltas.sum[s*superFan : min(len(p.deltas.sum), (s+1)*superFan)] {
				want += x
			}
			if sum != want {
				t.Fatalf("round %d: run %d of chunks sums to %d, kept %d", round, s, want, sum)
			}
		}
		at := int64(rng.Intn(33 * chunkMax))
		var want int64
		for tt, s := range sums {
			if tt <= at {
				want += s
			}
		}
		all, _ := p.deltas.upTo(0, cursor{}, at)
		mid, c := p.deltas.upTo(0, cursor{}, at/2)
		if again, _ := p.deltas.upTo(mid, c, at); all != want || again != want {
			t.Fatalf("round %d: deltas up to %d sum to %d (%d in two steps), want %d", round, at, all, again, want)
		}
		k, _ := slices.BinarySearch(times, at)
		if c := p.deltas.from(at); p.deltas.ok(c) != (k < len(times)) || (k < len(times) && p.deltas.at(c) != times[k]) {
			t.Fatalf("round %d: from(%d) is not the first instant at or after it", round, at)
		}
	}
	if len(p.deltas.ch) < 2*superFan {
		t.Fatalf("only %d delta chunks: splits and runs of chunks are not tested", len(p.deltas.ch))
	}
}

// TestWindowGPUFree64 checks the one-word count of a node's GPUs free over
// a window against the count one GPU at a time.
func TestWindowGPUFree64(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	for round := range 300 {
		node := &model.Node{Name: "n1", CPUs: 8, Memory: 1000, State: model.NodeUp, Responding: true}
		for k := range 1 + rng.Intn(64) {
			node.GPUs = append(node.GPUs, model.GPU{Index: k, Type: []string{"a", "b"}[rng.Intn(2)]})
		}
		ids := func() model.Bitmap {
			var out []int
			for k := range node.GPUs {
				if rng.Intn(3) == 0 {
					out = append(out, k)
				}
			}
			return model.BitmapOf(out...)
		}
		node.AllocGPUs = ids()
		part := &model.Partition{Name: "p", Nodes: []string{"n1"}, State: model.PartUp}
		c := newCluster([]*model.Node{node}, map[string]*model.Partition{"p": part}, true)
		c.bf = newProfile(1)
		c.gpus[0] = ids()
		now := int64(100)
		for range rng.Intn(4) {
			c.bf.addRelease(0, release{t: now + int64(rng.Intn(60)), gpus: ids()})
		}
		for range rng.Intn(6) {
			from := now + int64(rng.Intn(80))
			c.bf.res[0] = append(c.bf.res[0], reserve{from: from, to: from + 1 + int64(rng.Intn(40)), gpus: ids()})
		}
		a := now + int64(rng.Intn(100))
		b := a + 1 + int64(rng.Intn(50))
		for _, typ := range []string{"", "a", "b"} {
			if got, want := c.windowGPUFree64(0, a, b, typ), c.windowGPUFreeEach(0, a, b, typ); got != want {
				t.Fatalf("round %d type %q: %d free, want %d", round, typ, got, want)
			}
		}
	}
}

// TestLowerBound compares the branch-free searches with slices'.
func TestLowerBound(t *testing.T) {
	rng := rand.New(rand.NewSource(13))
	for range 2000 {
		a := make([]int64, rng.Intn(70))
		for k := range a {
			a[k] = int64(rng.Intn(100))
		}
		slices.Sort(a)
		c := make([]delta, len(a))
		for k := range a {
			c[k].t = a[k]
		}
		v := int64(rng.Intn(110)) - 5
		want, _ := slices.BinarySearch(a, v)
		if got := lowerBound(a, v); got != want {
			t.Fatalf("lowerBound(%v, %d) = %d, want %d", a, v, got, want)
		}
		if got := firstDelta(c, v); got != want {
			t.Fatalf("firstDelta(%v, %d) = %d, want %d", a, v, got, want)
		}
	}
}

// TestHoldNeed compares holdNeed's thresholds with the tests they stand
// for (fits for unit tasks; capTasksOn for one task of a packed job) on
// random requests, node sizes and offers around the thresholds.
func TestHoldNeed(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	kinds := []memKind{memNone, memPerCPU, memPerGPU, memFixed, memWholeNode}
	for round := range 20000 {
		r := request{pack: rng.Intn(2) == 0, cpt: 1 + rng.Intn(6), exclusive: rng.Intn(6) == 0,
			mem: kinds[rng.Intn(len(kinds))], memVal: int64(rng.Intn(3000)), minCPN: rng.Intn(3) * rng.Intn(20)}
		switch rng.Intn(3) {
		case 0:
			r.gpuNode = 1 + rng.Intn(4)
		case 1:
			r.gpuTask = 1 + rng.Intn(2)
		}
		if r.gpuNode+r.gpuTask > 0 && rng.Intn(2) == 0 {
			r.cpg = 1 + rng.Intn(8)
		}
		unit := 1 + rng.Intn(4)
		if r.pack {
			unit = 1
		}
		nodeCPUs, nodeMem := 1+rng.Intn(64), int64(1+rng.Intn(64000))
		hc, hm, hg, ok := r.holdNeed(unit, nodeCPUs, nodeMem)
		for range 30 {
			cpu, mem, gpu := rng.Intn(nodeCPUs+2)-1, int64(rng.Intn(int(nodeMem)+2)), rng.Intn(10)
			switch rng.Intn(4) { // offers at the thresholds and just below
			case 0:
				cpu, mem, gpu = hc, hm, hg
			case 1:
				cpu, mem, gpu = hc-rng.Intn(2), hm-int64(rng.Intn(2)), hg-rng.Intn(2)
			}
			mem, gpu = max(0, mem), max(0, gpu) // the search never offers less
			var want bool
			if r.pack {
				want = r.capTasksOn(1, cpu, mem, gpu, nodeCPUs, nodeMem) > 0
			} else {
				_, _, want = r.fits(unit, cpu, mem, gpu, nodeCPUs, nodeMem)
			}
			got := ok && cpu >= hc && mem >= hm && gpu >= hg
			if got != want {
				t.Fatalf("round %d: %+v unit %d on %d CPUs %d MiB, offer %d CPUs %d MiB %d GPUs: thresholds (%d, %d, %d, %v) say %v, want %v",
					round, r, unit, nodeCPUs, nodeMem, cpu, mem, gpu, hc, hm, hg, ok, got, want)
			}
		}
	}
}
