package sched

import "math"

// segTree answers "first node at or after position p whose free CPUs, free
// memory, idle CPUs and free GPUs reach these thresholds" in O(log n) per
// answer, over one partition's nodes in placement order. Without it
// first-fit rescans the full nodes at the head of a big partition for every
// job: 50,000 jobs over 10,000 nodes would cost billions of steps. GPUs are
// a dimension of their own because a GPU job would otherwise step through
// every CPU-only node with spare CPUs (four in five nodes of a typical
// cluster) one lookup at a time.
//
// Each inner slot holds the maxima of its subtree. Maxima of different
// fields may come from different nodes, so a subtree that passes the test
// can still hold no match; find then backtracks. Candidates it returns are
// only likely fits — callers make the exact check.
type segTree struct {
	size int       // leaves, a power of two
	v    []leafVal // slot 1 is the root; leaves from size on
}

// leafVal is one node's entry (an inner slot: the maxima of its subtree);
// also the thresholds of a query. One slot is one struct, so a step of a
// search reads one cache line, not one per field. cpu is -1 for padding
// and unusable nodes; idle is the CPUs of a node nobody uses (0 when
// someone does); gpu counts free GPUs of any type; mem is MiB, clamped
// to 32 bits (treeMem).
//
// 16 bytes: a slot and its sibling share half a cache line, where 24
// bytes (mem in 64 bits) split some pairs across two lines and made the
// tree of 10,000 nodes half as large again (768 KB): its walks missed
// the L1 cache 2.2 M times in the unbounded 10k x 50k backfill pass.
type leafVal struct {
	cpu, idle, gpu, mem int32
}

// treeMem is MiB as a leaf or a threshold holds them: clamped to 32 bits
// (2 PiB), which only makes the test looser for a node and a request
// both past it; callers check every candidate exactly anyway.
func treeMem(mem int64) int32 {
	return int32(min(max(mem, math.MinInt32), math.MaxInt32))
}

func newSegTree(n int) *segTree {
	size := 1
	for size < n {
		size <<= 1
	}
	t := &segTree{size: size, v: make([]leafVal, 2*size)}
	for i := range t.v {
		t.v[i].cpu = -1
	}
	return t
}

// reset is newSegTree(n) in t's array when it is the size needed, else
// a new tree.
func (t *segTree) reset(n int) *segTree {
	size := 1
	for size < n {
		size <<= 1
	}
	if size != t.size {
		return newSegTree(n)
	}
	clear(t.v)
	for i := range t.v {
		t.v[i].cpu = -1
	}
	return t
}

// setLeaf stores a leaf without fixing its ancestors; call build after.
func (t *segTree) setLeaf(pos int, v leafVal) {
	t.v[t.size+pos] = v
}

// build recomputes every inner slot from the leaves, in O(n).
func (t *segTree) build() {
	for i := t.size - 1; i >= 1; i-- {
		t.pull(i)
	}
}

// update stores a leaf and fixes its ancestors, stopping early once an
// ancestor's maxima do not change (the common case: a node that was not
// its subtree's best).
func (t *segTree) update(pos int, v leafVal) {
	t.setLeaf(pos, v)
	for i := (t.size + pos) >> 1; i >= 1; i >>= 1 {
		if !t.pull(i) {
			return
		}
	}
}

// pull recomputes slot i from its children and reports whether it changed.
func (t *segTree) pull(i int) bool {
	l, r := &t.v[2*i], &t.v[2*i+1]
	m := leafVal{cpu: max(l.cpu, r.cpu), idle: max(l.idle, r.idle), gpu: max(l.gpu, r.gpu), mem: max(l.mem, r.mem)}
	if m == t.v[i] {
		return false
	}
	t.v[i] = m
	return true
}

// meets reports whether slot k's maxima reach every threshold of m.
func (t *segTree) meets(k int, m *leafVal) bool {
	v := &t.v[k]
	return v.cpu >= m.cpu && v.idle >= m.idle && v.gpu >= m.gpu && v.mem >= m.mem
}

// first returns the lowest position >= from whose leaf meets all the
// thresholds, or -1.
//
// It walks in order from the leaf at from: up while the slot is a right
// child, then to the right neighbour; into a neighbour whose maxima meet
// the thresholds, down its leftmost child that meets them. A slot whose
// maxima meet them while none of its children does (maxima of different
// fields from different nodes) is left like one that does not. Placement
// asks again from the next position after each refused candidate, so a
// search from the root, which walks down to from first, cost twice the
// steps; backfill's window views refuse many live candidates.
func (t *segTree) first(from int, m leafVal) int {
	if from >= t.size {
		return -1
	}
	k := t.size + from
	if t.meets(k, &m) {
		return from
	}
	for {
		// To the next slot to the right at this height or above.
		for k&1 == 1 {
			if k == 1 {
				return -1
			}
			k >>= 1
		}
		k++
		if !t.meets(k, &m) {
			continue
		}
		for k < t.size {
			if t.meets(2*k, &m) {
				k = 2 * k
			} else if t.meets(2*k+1, &m) {
				k = 2*k + 1
			} else {
				break // no child meets them: leave this slot
			}
		}
		if k >= t.size {
			return k - t.size
		}
	}
}
