package sched

import "slices"

// Lower bounds on each node's earliest start, kept across the jobs of one
// backfill pass (used by earliestBound, bfsearch.go).
//
// Within a pass what a node offers at any future instant only shrinks:
// jobs started now take live resources and give them back at their end
// (what is free from then on is what was free before), and reservations
// only add use. So a node's earliest start for one job shape, found for an
// earlier job, is a lower bound for a later job of that shape; and since
// a longer time limit only makes the window harder to fit, a bound found
// for a limit is also one for every longer limit. A deep queue reserves
// tens of thousands of jobs of a handful of shapes, and most nodes were
// ruled out by an earlier job's search.
//
// The bounds are kept per shape and partition, and per limit level (a
// ladder of limits, each 4 times the last). A job reads the level at or
// below its limit; its search finds each node's earliest start at that
// level's limit, which the level keeps, and then at the job's own limit,
// which the levels above keep. Every level's bound on a node is searched
// once at least (and again when a reservation lands on the node), so a
// finer ladder costs a search per node and level; a coarser one lets
// more nodes that start in time at the level's limit start too late at
// the job's. On the 10k-node benchmark 4 searched the fewest nodes (1.25:
// 1.0 M searches per pass, 2: 760 k, 4: 657 k, 16: 912 k). Each level is a min segment tree over the
// partition's placement order, so a job visits only the nodes whose bound
// is below its cap, least bound first, and placement walks only the nodes
// whose mask (bfsearch.go) admits the tried start: both were a pass over
// every node per job, 10,000 nodes times 30,000 reserved jobs.

// boundKey is a job shape as nodeEarliest sees one node (the request
// without its totals, and the tasks of the smallest share) in one
// partition, whose placement order the levels' trees follow.
type boundKey struct {
	r    request
	unit int
	ps   *partState
}

func newBoundKey(r *request, unit int, ps *partState) boundKey {
	k := boundKey{r: *r, unit: unit, ps: ps}
	k.r.tasks, k.r.nodes, k.r.big, k.r.nBig, k.r.maxNodes = 0, 0, 0, 0, 0
	return k
}

// boundLevel is one limit level's bounds: t[size+pos] is the bound of
// node ps.order[pos] (no start before it), t[k] for 0 < k < size the least
// bound under slot k. Padding leaves are never.
type boundLevel struct {
	limit int64 // valid for jobs whose limit is at least this
	t     []int64
}

// boundSet is one shape's levels, by limit ascending.
type boundSet struct {
	size   int
	levels []*boundLevel
}

// boundLadder rounds a limit down to its level (0, no limit, is never).
func boundLadder(limit int64) int64 {
	if limit <= 0 || limit >= never {
		return never
	}
	l := int64(1)
	for {
		n := 4 * l
		if n > limit {
			return l
		}
		l = n
	}
}

// boundsFor returns the bounds of job shape k and the index of the level
// a job with time limit limit reads, creating the level from the level
// below (a valid bound for it) when it is new.
func (c *cluster) boundsFor(k boundKey, limit int64) (*boundSet, int) {
	if c.bounds == nil {
		c.bounds = map[boundKey]*boundSet{}
	}
	bs := c.bounds[k]
	if bs == nil {
		bs = &boundSet{size: 1}
		for bs.size < len(k.ps.order) {
			bs.size <<= 1
		}
		c.bounds[k] = bs
	}
	lv := boundLadder(limit)
	pos, found := slices.BinarySearchFunc(bs.levels, lv, func(b *boundLevel, t int64) int {
		switch {
		case b.limit < t:
			return -1
		case b.limit > t:
			return 1
		}
		return 0
	})
	if found {
		return bs, pos
	}
	var t []int64
	if pos > 0 {
		t = slices.Clone(bs.levels[pos-1].t)
	} else {
		t = c.baseBounds(&k, bs.size)
	}
	bs.levels = slices.Insert(bs.levels, pos, &boundLevel{limit: lv, t: t})
	return bs, pos
}

// baseBounds is a shape's first level: never on nodes that can never take
// it in this pass (taking no new work, or too few GPUs of the type), 0
// elsewhere.
func (c *cluster) baseBounds(k *boundKey, size int) []int64 {
	t := make([]int64, 2*size)
	need := 0
	if k.r.hasGPU() {
		u := k.unit
		if k.r.pack {
			u = 1
		}
		need = k.r.gpusOn(u)
	}
	for pos := range t[size:] {
		if pos >= len(k.ps.order) {
			t[size+pos] = never
			continue
		}
		i := k.ps.order[pos]
		if c.cpu[i] < 0 || (need > 0 && c.countFree(i, nil, k.r.gpuType) < need) {
			t[size+pos] = never
		}
	}
	for s := size - 1; s >= 1; s-- {
		t[s] = min(t[2*s], t[2*s+1])
	}
	return t
}

func (l *boundLevel) at(size, pos int) int64 { return l.t[size+pos] }

// set stores a leaf and fixes its ancestors, stopping at the first one
// whose least bound does not change.
func (l *boundLevel) set(size, pos int, v int64) {
	k := size + pos
	l.t[k] = v
	for k >>= 1; k >= 1; k >>= 1 {
		m := min(l.t[2*k], l.t[2*k+1])
		if l.t[k] == m {
			return
		}
		l.t[k] = m
	}
}

// raise lifts a leaf to v; it never lowers one.
func (l *boundLevel) raise(size, pos int, v int64) {
	if l.t[size+pos] < v {
		l.set(size, pos, v)
	}
}

// least is the position of a leaf holding the least bound (the leftmost).
func (l *boundLevel) least(size int) int {
	k := 1
	for k < size {
		if l.t[2*k] == l.t[k] {
			k = 2 * k
		} else {
			k = 2*k + 1
		}
	}
	return k - size
}

// firstAtMost is the first position at or after from whose bound is at
// most x, or -1.
func (l *boundLevel) firstAtMost(size, from int, x int64) int {
	if from >= size {
		return -1
	}
	k := size + from
	// Climb to the first slot, left to right from from, holding a bound
	// at most x: a right child's right neighbour is its parent's.
	for l.t[k] > x {
		for k&1 == 1 {
			if k == 1 {
				return -1
			}
			k >>= 1
		}
		k++
	}
	for k < size {
		if l.t[2*k] <= x {
			k = 2 * k
		} else {
			k = 2*k + 1
		}
	}
	return k - size
}

// raiseAbove records that node ps.order[pos] cannot start a job of the
// set's shape with a limit above level lv's before t: every level above
// lv learns it. A node's bounds never fall from one level to the next (a
// new level starts as the one below, and what raises a level raises
// those above at least as high), so the first level that already knows
// ends the walk: most visits teach nothing to most levels.
func (bs *boundSet) raiseAbove(lv, pos int, t int64) {
	for _, l := range bs.levels[lv+1:] {
		if l.at(bs.size, pos) >= t {
			return
		}
		l.set(bs.size, pos, t)
	}
}

// bfJob is what the mask (bfsearch.go) needs of the job being reserved.
// r is a copy: keeping the caller's pointer would move every job's
// request to the heap, backfill or not.
type bfJob struct {
	r                   request
	unit                int
	limit, now, horizon int64
	ps                  *partState
	bs                  *boundSet
	lv                  int // the level read: bs.levels[lv]
}
