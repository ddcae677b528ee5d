package sched

import "slices"

// Lower bounds on each node's earliest start, kept across the jobs of one
// backfill pass (used by earliestBound).
//
// Within a pass what a node offers at any future instant only shrinks:
// jobs started now take live resources and give them back at their end
// (what is free from then on is what was free before), and reservations
// only add use. So a node's earliest start for one job shape, found for an
// earlier job, is a lower bound for a later job of that shape; and since
// a longer time limit only makes the window harder to fit, a bound found
// for a limit is also one for every longer limit. earliestBound skips the
// search on a node whose bound already exceeds its cap, and starts the
// search of the others at their bound: a deep queue reserves tens of
// thousands of jobs of a handful of shapes, and most nodes were ruled out
// by an earlier job's search.
//
// The bounds are kept per shape and per limit level (a ladder of limits,
// each 1.25 times the last): the level a job reads is the highest at or
// below its limit, and what its search finds is folded into every level
// at or above its limit.

// boundKey is a job shape as nodeEarliest sees one node: the request
// without its totals, and the tasks of the smallest share.
type boundKey struct {
	r    request
	unit int
}

func newBoundKey(r *request, unit int) boundKey {
	k := boundKey{r: *r, unit: unit}
	k.r.tasks, k.r.nodes, k.r.big, k.r.nBig, k.r.maxNodes = 0, 0, 0, 0, 0
	return k
}

type boundLevel struct {
	limit int64   // valid for jobs whose limit is at least this
	lb    []int64 // per node: no start before this
}

// boundSet is one shape's levels, by limit ascending.
type boundSet struct {
	levels []*boundLevel
}

// boundLadder rounds a limit down to its level (0, no limit, is never).
func boundLadder(limit int64) int64 {
	if limit <= 0 || limit >= never {
		return never
	}
	l := int64(1)
	for {
		n := l + max(1, l/4)
		if n > limit {
			return l
		}
		l = n
	}
}

// boundsFor returns the bounds job shape k with time limit limit may read,
// creating its level from the level below (a valid bound for it) when it
// is new.
func (c *cluster) boundsFor(k boundKey, limit int64) (*boundSet, []int64) {
	if c.bounds == nil {
		c.bounds = map[boundKey]*boundSet{}
	}
	bs := c.bounds[k]
	if bs == nil {
		bs = &boundSet{}
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
		return bs, bs.levels[pos].lb
	}
	var lb []int64
	if pos > 0 {
		lb = slices.Clone(bs.levels[pos-1].lb)
	} else {
		lb = make([]int64, len(c.nodes))
	}
	bs.levels = slices.Insert(bs.levels, pos, &boundLevel{limit: lv, lb: lb})
	return bs, lb
}

// raise records that node i cannot start a job of the set's shape with
// time limit limit before t: every level at or above limit learns it.
func (bs *boundSet) raise(i int32, limit, t int64) {
	if limit <= 0 {
		limit = never
	}
	for k := len(bs.levels) - 1; k >= 0 && bs.levels[k].limit >= limit; k-- {
		if lb := bs.levels[k].lb; lb[i] < t {
			lb[i] = t
		}
	}
}

// bfJob is what refine needs of the job being reserved.
// r is a copy: keeping the caller's pointer would move every job's
// request to the heap, backfill or not.
type bfJob struct {
	r                   request
	unit                int
	limit, now, horizon int64
	bs                  *boundSet
}
