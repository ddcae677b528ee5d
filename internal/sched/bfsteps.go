package sched

import (
	"math"
	"slices"

	"github.com/drover-hpc/drover/internal/model"
)

// The backfill profile's per-node structures (see profile in backfill.go):
// each node's releases and reservations as one array in time order, read
// by window and by nodeEarliest (one scan per candidate start), and the
// helpers of earliestBound.

// windowGPUFree64 is windowGPUFree for a node of at most 64 GPUs: its
// GPUs in use over [a, b) as one word, from the node's steps.
func (c *cluster) windowGPUFree64(i int32, a, b int64, typ string) int {
	n := c.nodes[i]
	used := word0(n.AllocGPUs) | word0(c.gpus[i])
	used = c.stepsOf(i).gpuWindow(used, a, b)
	free := 0
	for k, g := range n.GPUs {
		if (typ == "" || g.Type == typ) && used&(1<<uint(k)) == 0 {
			free++
		}
	}
	return free
}

// gpuWindow is used (the node's first 64 GPUs in use now) less those
// released by a, plus those reserved at some point of [a, b).
func (st *nodeSteps) gpuWindow(used uint64, a, b int64) uint64 {
	g := st.gpu()
	if g == nil {
		return used
	}
	k := st.find(a)
	if k >= 0 {
		used &^= g[k].rel
	}
	for k = max(k, 0); k < len(g) && st.at(k) < b; k++ {
		used |= g[k].res
	}
	return used
}

func word0(b model.Bitmap) uint64 {
	if len(b) == 0 {
		return 0
	}
	return b[0]
}

// heapPush and heapPop keep a max-heap of avail by time.
func heapPush(h []avail, a avail) []avail {
	h = append(h, a)
	for k := len(h) - 1; k > 0; {
		up := (k - 1) / 2
		if h[up].t >= h[k].t {
			break
		}
		h[up], h[k] = h[k], h[up]
		k = up
	}
	return h
}

func heapPop(h []avail) []avail {
	last := len(h) - 1
	h[0] = h[last]
	h = h[:last]
	for k := 0; ; {
		l, r, big := 2*k+1, 2*k+2, k
		if l < len(h) && h[l].t > h[big].t {
			big = l
		}
		if r < len(h) && h[r].t > h[big].t {
			big = r
		}
		if big == k {
			return h
		}
		h[k], h[big] = h[big], h[k]
		k = big
	}
}

// nodeSteps is one node's future as one array in time order: an entry at
// each instant where something changes (a release, a reservation's start
// or end), holding what the node's releases have given back by then and
// what its reservations hold until the next entry. The earliest-start
// search reads a node as one binary search and one sequential scan of
// this array; it used to read a sorted list of instants, a step function
// of reserved use in three arrays and the release list, each a cache
// miss of its own, for the 1 M node searches of a deep pass. Built when
// the node is first looked at (stepsOf), then grown in place by
// addRelease and reserve.
//
// An entry is split in three arrays by who reads it: ts (instants, and
// which are candidates), e (CPUs and memory) and g (GPU words, only on a
// node with GPUs: most nodes have none). The search skips the entries
// that are no candidates on ts alone, and a pass's entries (hundreds of
// thousands) take 32 bytes each on a node without GPUs, where one struct
// of everything took 64: the whole profile of a deep pass now stays in
// the core's caches far more often.
//
// The struct itself is one cache line (64 bytes; the profile's array of
// them is large, so page-aligned): every node search starts by reading
// it, and at 96 bytes each read took two lines (the second one cost the
// unbounded 10k x 50k pass 4% of its L2 misses). So the GPU words sit
// behind a pointer (read only by GPU jobs on GPU nodes), the node's size
// is kept in 32 bits, and whether the steps are built is whether that
// size is set (cpus1: the CPUs plus one, so a node of no CPUs counts).
type nodeSteps struct {
	// ts is each entry's instant t as t<<1, its low bit set when the
	// entry is a candidate (a release or a reservation's end: the
	// instants where the node's offer can grow, so the only starts worth
	// trying besides now+1). Keys keep the instants' order, so find's
	// binary search reads 8 of them per cache line.
	ts []int64
	e  []stepEntry
	g  *gpuSide // nil on a node without GPUs
	// The node's size, beside the arrays: the earliest-start search
	// reads it for every node it visits, and the node's own struct is
	// two more cache misses away. cpus1 is its CPUs plus one, 0 until
	// built; mem is memBig on a node of more MiB than an int32 holds
	// (nodeMem then reads the node's).
	cpus1, mem int32
}

const memBig = -1

// gpuSide is a GPU node's steps in GPU words, and what a GPU job's search
// reads of the node itself beside them: its GPU count and the GPUs
// running jobs hold (fixed for the pass). Reading them from the node
// took two more cache misses per visit (its struct and the bitmap).
type gpuSide struct {
	s     []gpuStep
	alloc uint64 // the node's first 64 GPUs held by running jobs
	n     int    // the node's GPUs
}

// gpu is the GPU words, nil on a node without GPUs.
func (st *nodeSteps) gpu() []gpuStep {
	if st.g == nil {
		return nil
	}
	return st.g.s
}

// nodeCPUs is the node's CPUs.
func (st *nodeSteps) nodeCPUs() int { return int(st.cpus1) - 1 }

// nodeMem is node i's memory (MiB), from its steps st.
func (c *cluster) nodeMem(st *nodeSteps, i int32) int64 {
	if st.mem == memBig {
		return c.nodes[i].Memory
	}
	return int64(st.mem)
}

// stepEntry is the node at its entry's instant t: rel* what releases at
// or before t gave back, res* what reservations hold over [t, the next
// entry's t).
type stepEntry struct {
	relMem, resMem int64
	relCPU, resCPU int32
}

// gpuStep is stepEntry's GPUs as words (the node's first 64): those given
// back by t, and those of every reservation overlapping [t, next).
type gpuStep struct {
	rel, res uint64
}

// built reports whether the steps were built (stepsOf).
func (st *nodeSteps) built() bool { return st.cpus1 != 0 }

// unbuild marks the steps as not built, keeping the entries' memory
// (instants, CPU and memory entries, GPU words) for the next build (a
// Scratch lends it to the next pass).
func (st *nodeSteps) unbuild() { st.cpus1 = 0 }

// at is entry k's instant; cand reports whether it is a candidate.
func (st *nodeSteps) at(k int) int64  { return st.ts[k] >> 1 }
func (st *nodeSteps) cand(k int) bool { return st.ts[k]&1 != 0 }

// build makes the steps from scratch; gpu keeps GPU words (the node has
// GPUs).
func (st *nodeSteps) build(rel []release, res []reserve, gpu bool) {
	// At most one entry per release and two per reservation: sized once,
	// where growing by inserts reallocated the arrays at every doubling;
	// with room for as many again, as the reservations that land on the
	// node later in the pass add theirs (a node is built when first
	// searched, and grew 15 MB of arrays per unbounded 10k x 50k pass).
	n := 2*(len(rel)+2*len(res)) + 8
	if cap(st.e) < n {
		st.e = make([]stepEntry, 0, n)
	}
	if cap(st.ts) < n {
		st.ts = make([]int64, 0, n)
	}
	st.e, st.ts = st.e[:0], st.ts[:0]
	g := st.g
	if !gpu {
		g = nil
	} else if g == nil || cap(g.s) < n {
		g = &gpuSide{s: make([]gpuStep, 0, n)}
	}
	if g != nil {
		g.s = g.s[:0]
	}
	st.g = g
	for _, r := range rel {
		st.addRelease(r)
	}
	for _, r := range res {
		st.addReserve(r)
	}
}

// find is the index of the last entry at or before t, or -1. The search
// halves the range without branching on the comparison (the sign of
// key-ts[mid] picks the half): the earliest-start search runs one per
// node it visits, and half the probes of a branching search were
// mispredicted. Keys are instants from now on, doubled: the difference
// cannot overflow.
func (st *nodeSteps) find(t int64) int {
	ts, key := st.ts, t<<1|1 // the greatest key of an entry at t
	if len(ts) == 0 || ts[0] > key {
		return -1
	}
	base, n := 0, len(ts) // ts[base] <= key; the answer is in [base, base+n)
	for n > 1 {
		half := n >> 1
		mid := base + half
		// ts[mid] > key: keep base; else move to mid.
		base = mid + int((key-ts[mid])>>63)&(base-mid)
		n -= half
	}
	return base
}

// breakAt returns the index of the entry at t, adding one (the state of
// the entry before it, not a candidate) when there is none.
func (st *nodeSteps) breakAt(t int64) int {
	k := st.find(t)
	if k >= 0 && st.at(k) == t {
		return k
	}
	var e stepEntry
	var g gpuStep
	if k >= 0 {
		e = st.e[k]
		if st.g != nil {
			g = st.g.s[k]
		}
	}
	st.e = slices.Insert(st.e, k+1, e)
	st.ts = slices.Insert(st.ts, k+1, t<<1)
	if st.g != nil {
		st.g.s = slices.Insert(st.g.s, k+1, g)
	}
	return k + 1
}

// addRelease records that r's resources come back at r.t.
func (st *nodeSteps) addRelease(r release) {
	k := st.breakAt(r.t)
	st.ts[k] |= 1
	for j := k; j < len(st.e); j++ {
		e := &st.e[j]
		e.relCPU += r.cpu
		e.relMem += r.mem
	}
	if w := word0(r.gpus); st.g != nil && w != 0 {
		g := st.g.s
		for j := k; j < len(g); j++ {
			g[j].rel |= w
		}
	}
}

// addReserve adds a reservation in place: O(k), where rebuilding would
// sort every instant of the node again.
func (st *nodeSteps) addReserve(rv reserve) {
	lo := st.breakAt(rv.from)
	hi := st.breakAt(rv.to)
	st.ts[hi] |= 1
	for j := lo; j < hi; j++ {
		e := &st.e[j]
		e.resCPU += rv.cpu
		e.resMem += rv.mem
	}
	if w := word0(rv.gpus); st.g != nil && w != 0 {
		g := st.g.s
		for j := lo; j < hi; j++ {
			g[j].res |= w
		}
	}
}

// stepsOf returns node i's steps, built if its profile changed since
// they were last built.
func (c *cluster) stepsOf(i int32) *nodeSteps {
	p := c.bf
	st := &p.steps[i]
	if !st.built() {
		n := c.nodes[i]
		st.build(p.rel[i], p.res[i], len(n.GPUs) > 0)
		if st.g != nil {
			st.g.alloc, st.g.n = word0(n.AllocGPUs), len(n.GPUs)
		}
		st.cpus1, st.mem = int32(n.CPUs)+1, memBig
		if n.Memory <= math.MaxInt32 {
			st.mem = int32(n.Memory)
		}
	}
	return st
}

// peakOver is the most CPUs and the most memory (each on its own) the
// node's reservations hold at one instant of [a, b).
func (st *nodeSteps) peakOver(a, b int64) (cpu int32, mem int64) {
	for k := max(0, st.find(a)); k < len(st.e) && st.at(k) < b; k++ {
		cpu, mem = max(cpu, st.e[k].resCPU), max(mem, st.e[k].resMem)
	}
	return cpu, mem
}
