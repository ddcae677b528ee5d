package sched

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
	size int     // leaves, a power of two
	cpu  []int32 // max free CPUs; -1 for padding and unusable nodes
	idle []int32 // max CPUs of a node nobody uses; 0 when none is idle
	gpu  []int32 // max free GPUs of any type
	mem  []int64 // max free memory, MiB
}

// leafVal is one node's entry; also the thresholds of a query.
type leafVal struct {
	cpu, idle, gpu int32
	mem            int64
}

func newSegTree(n int) *segTree {
	size := 1
	for size < n {
		size <<= 1
	}
	t := &segTree{size: size, cpu: make([]int32, 2*size), idle: make([]int32, 2*size),
		gpu: make([]int32, 2*size), mem: make([]int64, 2*size)}
	for i := range t.cpu {
		t.cpu[i] = -1
	}
	return t
}

// setLeaf stores a leaf without fixing its ancestors; call build after.
func (t *segTree) setLeaf(pos int, v leafVal) {
	i := t.size + pos
	t.cpu[i], t.idle[i], t.gpu[i], t.mem[i] = v.cpu, v.idle, v.gpu, v.mem
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
	l, r := 2*i, 2*i+1
	cpu, idle := max(t.cpu[l], t.cpu[r]), max(t.idle[l], t.idle[r])
	gpu, mem := max(t.gpu[l], t.gpu[r]), max(t.mem[l], t.mem[r])
	if cpu == t.cpu[i] && idle == t.idle[i] && gpu == t.gpu[i] && mem == t.mem[i] {
		return false
	}
	t.cpu[i], t.idle[i], t.gpu[i], t.mem[i] = cpu, idle, gpu, mem
	return true
}

// first returns the lowest position >= from whose leaf meets all the
// thresholds, or -1.
func (t *segTree) first(from int, min leafVal) int {
	if from >= t.size {
		return -1
	}
	return t.find(1, 0, t.size, from, &min)
}

func (t *segTree) find(i, lo, hi, from int, m *leafVal) int {
	if hi <= from || t.cpu[i] < m.cpu || t.idle[i] < m.idle || t.gpu[i] < m.gpu || t.mem[i] < m.mem {
		return -1
	}
	if hi-lo == 1 {
		return lo
	}
	mid := (lo + hi) >> 1
	if p := t.find(2*i, lo, mid, from, m); p >= 0 {
		return p
	}
	return t.find(2*i+1, mid, hi, from, m)
}
