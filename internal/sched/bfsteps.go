package sched

import (
	"cmp"
	"slices"

	"github.com/drover-hpc/drover/internal/model"
)

// The backfill profile's per-node structures (see profile in backfill.go):
// each node's instants and reserved use as a cached step function, read
// by window (peakOver) and by nodeEarliest (one scan per candidate start),
// and the helpers of earliestBound.

// resEvent is a reservation's start (+) or end (-) for peakReserved.
type resEvent struct {
	t   int64
	end bool
	cpu int32
	mem int64
}

// windowGPUFree64 is windowGPUFree for a node of at most 64 GPUs: its
// GPUs in use over [a, b) as one word, built in one pass over the node's
// releases and reservations rather than one per GPU (the earliest-start
// search asks this at every instant it tries on a GPU node).
func (c *cluster) windowGPUFree64(i int32, a, b int64, typ string) int {
	n := c.nodes[i]
	p := c.bf
	used := word0(n.AllocGPUs) | word0(c.gpus[i])
	for _, r := range p.rel[i] {
		if r.t > a {
			break
		}
		used &^= word0(r.gpus)
	}
	for _, r := range p.res[i] {
		if r.from < b && r.to > a {
			used |= word0(r.gpus)
		}
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

// nodeSteps is one node's instants (release times and reservation ends,
// sorted, unique) and its reserved use as a step function: on
// [at[k], at[k+1]) its reservations hold cpu[k] CPUs and mem[k] MiB (0
// before at[0] and from the last instant on), and gpu[k] the GPUs (as a
// word: the node's first 64) of the reservations that overlap it, so the
// earliest-start search learns a window's reserved GPUs from the same
// scan as its CPUs instead of a pass over the reservations per instant. Built when the node's
// profile changed since the last look, so a pass that reserves on a few
// nodes per job does not re-sort every node's reservations per job.
type nodeSteps struct {
	ts  []int64
	at  []int64
	cpu []int32
	mem []int64
	gpu []uint64
}

func (st *nodeSteps) build(rel []release, res []reserve, buf *[]resEvent) {
	st.ts, st.at, st.cpu, st.mem, st.gpu = st.ts[:0], st.at[:0], st.cpu[:0], st.mem[:0], st.gpu[:0]
	for _, rl := range rel {
		st.ts = append(st.ts, rl.t)
	}
	for _, rv := range res {
		st.ts = append(st.ts, rv.to)
	}
	slices.Sort(st.ts)
	st.ts = slices.Compact(st.ts)
	ev := (*buf)[:0]
	for _, r := range res {
		ev = append(ev, resEvent{t: r.from, cpu: r.cpu, mem: r.mem}, resEvent{t: r.to, end: true, cpu: -r.cpu, mem: -r.mem})
	}
	slices.SortFunc(ev, func(x, y resEvent) int { return cmp.Compare(x.t, y.t) })
	var sc int32
	var sm int64
	for k := 0; k < len(ev); {
		t := ev[k].t
		for ; k < len(ev) && ev[k].t == t; k++ {
			sc += ev[k].cpu
			sm += ev[k].mem
		}
		st.at, st.cpu, st.mem, st.gpu = append(st.at, t), append(st.cpu, sc), append(st.mem, sm), append(st.gpu, 0)
	}
	*buf = ev
	for _, r := range res {
		if w := word0(r.gpus); w != 0 {
			k, _ := slices.BinarySearch(st.at, r.from)
			for ; k < len(st.at) && st.at[k] < r.to; k++ {
				st.gpu[k] |= w
			}
		}
	}
}

// stepsOf returns node i's step function, built if its profile changed
// since it was last built.
func (c *cluster) stepsOf(i int32) *nodeSteps {
	p := c.bf
	st := &p.steps[i]
	if p.stale[i] {
		st.build(p.rel[i], p.res[i], &c.ebuf)
		p.stale[i] = false
	}
	return st
}

// peakOver is the most CPUs and the most memory (each on its own) the
// node's reservations hold at one instant of [a, b): the largest values
// of the intervals that meet the window, found by binary search.
func (st *nodeSteps) peakOver(a, b int64) (cpu int32, mem int64) {
	k, found := slices.BinarySearch(st.at, a)
	if !found && k > 0 {
		k-- // the interval holding a
	}
	for ; k < len(st.at) && st.at[k] < b; k++ {
		cpu, mem = max(cpu, st.cpu[k]), max(mem, st.mem[k])
	}
	return cpu, mem
}

// addInstant adds t to the node's instants.
func (st *nodeSteps) addInstant(t int64) {
	if k, found := slices.BinarySearch(st.ts, t); !found {
		st.ts = slices.Insert(st.ts, k, t)
	}
}

// addReserve adds a reservation to a built step function in place: O(k),
// where rebuilding would sort every reservation of the node again.
func (st *nodeSteps) addReserve(rv reserve) {
	st.addInstant(rv.to)
	lo := st.breakAt(rv.from)
	hi := st.breakAt(rv.to)
	w := word0(rv.gpus)
	for k := lo; k < hi; k++ {
		st.cpu[k] += rv.cpu
		st.mem[k] += rv.mem
		st.gpu[k] |= w
	}
}

// breakAt returns the index of the interval starting at t, splitting the
// one that holds t (or adding one that holds nothing) when needed.
func (st *nodeSteps) breakAt(t int64) int {
	k, found := slices.BinarySearch(st.at, t)
	if found {
		return k
	}
	var cpu int32
	var mem int64
	var gpu uint64
	if k > 0 {
		cpu, mem, gpu = st.cpu[k-1], st.mem[k-1], st.gpu[k-1]
	}
	st.at = slices.Insert(st.at, k, t)
	st.cpu = slices.Insert(st.cpu, k, cpu)
	st.mem = slices.Insert(st.mem, k, mem)
	st.gpu = slices.Insert(st.gpu, k, gpu)
	return k
}
