package sched

import (
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
	st := c.stepsOf(i)
	k := st.find(a)
	if k >= 0 {
		used &^= st.e[k].relGPU
	}
	for k = max(k, 0); k < len(st.e) && st.e[k].t < b; k++ {
		used |= st.e[k].resGPU
	}
	free := 0
	for k, g := range n.GPUs {
		if (typ == "" || g.Type == typ) && used&(1<<uint(k)) == 0 {
			free++
		}
	}
	return free
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
type nodeSteps struct {
	e []stepEntry
	// ts is each entry's t on its own: find's binary search reads 8
	// instants per cache line instead of one entry (56 bytes) per probe,
	// each a cache miss; it was a tenth of the unbounded 10k x 50k pass.
	ts []int64
	// The node's size, beside the arrays: the earliest-start search
	// reads it for every node it visits, and the node's own struct is
	// two more cache misses away.
	cpus  int
	mem   int64
	built bool
}

// stepEntry is the node at instant t: rel* what releases at or before t
// gave back (GPUs as a word: the node's first 64), res* what reservations
// hold over [t, the next entry's t) (GPUs: those of every reservation
// overlapping it). cand marks a release or a reservation's end: the
// instants where the node's offer can grow, so the only starts worth
// trying besides now+1.
type stepEntry struct {
	t      int64
	relMem int64
	resMem int64
	relGPU uint64
	resGPU uint64
	relCPU int32
	resCPU int32
	cand   bool
}

func (st *nodeSteps) build(rel []release, res []reserve) {
	// At most one entry per release and two per reservation: sized once,
	// where growing by inserts reallocated the array at every doubling.
	if n := len(rel) + 2*len(res); cap(st.e) < n {
		st.e = make([]stepEntry, 0, n)
		st.ts = make([]int64, 0, n)
	}
	st.e, st.ts = st.e[:0], st.ts[:0]
	for _, r := range rel {
		st.addRelease(r)
	}
	for _, r := range res {
		st.addReserve(r)
	}
}

// find is the index of the last entry at or before t, or -1.
func (st *nodeSteps) find(t int64) int {
	ts := st.ts
	lo, hi := 0, len(ts)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if ts[m] <= t {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo - 1
}

// breakAt returns the index of the entry at t, adding one (the state of
// the entry before it, not a candidate) when there is none.
func (st *nodeSteps) breakAt(t int64) int {
	k := st.find(t)
	if k >= 0 && st.e[k].t == t {
		return k
	}
	e := stepEntry{t: t}
	if k >= 0 {
		e = st.e[k]
		e.t, e.cand = t, false
	}
	st.e = slices.Insert(st.e, k+1, e)
	st.ts = slices.Insert(st.ts, k+1, t)
	return k + 1
}

// addRelease records that r's resources come back at r.t.
func (st *nodeSteps) addRelease(r release) {
	k := st.breakAt(r.t)
	st.e[k].cand = true
	w := word0(r.gpus)
	for j := k; j < len(st.e); j++ {
		e := &st.e[j]
		e.relCPU += r.cpu
		e.relMem += r.mem
		e.relGPU |= w
	}
}

// addReserve adds a reservation in place: O(k), where rebuilding would
// sort every instant of the node again.
func (st *nodeSteps) addReserve(rv reserve) {
	lo := st.breakAt(rv.from)
	hi := st.breakAt(rv.to)
	st.e[hi].cand = true
	w := word0(rv.gpus)
	for j := lo; j < hi; j++ {
		e := &st.e[j]
		e.resCPU += rv.cpu
		e.resMem += rv.mem
		e.resGPU |= w
	}
}

// stepsOf returns node i's steps, built if its profile changed since
// they were last built.
func (c *cluster) stepsOf(i int32) *nodeSteps {
	p := c.bf
	st := &p.steps[i]
	if !st.built {
		st.build(p.rel[i], p.res[i])
		st.built = true
		n := c.nodes[i]
		st.cpus, st.mem = n.CPUs, n.Memory
	}
	return st
}

// peakOver is the most CPUs and the most memory (each on its own) the
// node's reservations hold at one instant of [a, b).
func (st *nodeSteps) peakOver(a, b int64) (cpu int32, mem int64) {
	for k := max(0, st.find(a)); k < len(st.e) && st.e[k].t < b; k++ {
		cpu, mem = max(cpu, st.e[k].resCPU), max(mem, st.e[k].resMem)
	}
	return cpu, mem
}
