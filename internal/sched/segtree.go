package sched

// segTree answers "first node at or after position p whose free CPUs, free
// memory and idle CPUs reach these thresholds" in O(log n) per answer, over
// one partition's nodes in placement order. Without it first-fit rescans the
// full nodes at the head of a big partition for every job: 50,000 jobs over
// 10,000 nodes would cost billions of steps.
//
// Each inner slot holds the maxima of its subtree. Maxima of different
// fields may come from different nodes, so a subtree that passes the test
// can still hold no match; find then backtracks. Candidates it returns are
// only likely fits — callers make the exact check.
type segTree struct {
	size int     // leaves, a power of two
	cpu  []int32 // max free CPUs; -1 for padding and unusable nodes
	idle []int32 // max CPUs of a node nobody uses; 0 when none is idle
	mem  []int64 // max free memory, MiB
}

func newSegTree(n int) *segTree {
	size := 1
	for size < n {
		size <<= 1
	}
	t := &segTree{size: size, cpu: make([]int32, 2*size), idle: make([]int32, 2*size), mem: make([]int64, 2*size)}
	for i := range t.cpu {
		t.cpu[i] = -1
	}
	return t
}

// setLeaf stores a leaf without fixing its ancestors; call build after.
func (t *segTree) setLeaf(pos int, cpu, idle int32, mem int64) {
	i := t.size + pos
	t.cpu[i], t.idle[i], t.mem[i] = cpu, idle, mem
}

// build recomputes every inner slot from the leaves, in O(n).
func (t *segTree) build() {
	for i := t.size - 1; i >= 1; i-- {
		t.pull(i)
	}
}

// update stores a leaf and fixes its ancestors.
func (t *segTree) update(pos int, cpu, idle int32, mem int64) {
	t.setLeaf(pos, cpu, idle, mem)
	for i := (t.size + pos) >> 1; i >= 1; i >>= 1 {
		t.pull(i)
	}
}

func (t *segTree) pull(i int) {
	l, r := 2*i, 2*i+1
	t.cpu[i] = max(t.cpu[l], t.cpu[r])
	t.idle[i] = max(t.idle[l], t.idle[r])
	t.mem[i] = max(t.mem[l], t.mem[r])
}

// first returns the lowest position >= from whose leaf meets all three
// thresholds, or -1.
func (t *segTree) first(from int, minCPU, minIdle int32, minMem int64) int {
	if from >= t.size {
		return -1
	}
	return t.find(1, 0, t.size, from, minCPU, minIdle, minMem)
}

func (t *segTree) find(i, lo, hi, from int, minCPU, minIdle int32, minMem int64) int {
	if hi <= from || t.cpu[i] < minCPU || t.idle[i] < minIdle || t.mem[i] < minMem {
		return -1
	}
	if hi-lo == 1 {
		return lo
	}
	mid := (lo + hi) >> 1
	if p := t.find(2*i, lo, mid, from, minCPU, minIdle, minMem); p >= 0 {
		return p
	}
	return t.find(2*i+1, mid, hi, from, minCPU, minIdle, minMem)
}
