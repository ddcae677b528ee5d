package sched

import (
	"math"
	"slices"
)

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

// boundLevel is one limit level's bounds, as a tree of fan-out 16 over
// the partition's placement order: t[pos] is the bound of node
// ps.order[pos] (no start before it), and each depth above holds the
// least bound of each group of 16 slots below it, up to the root, alone
// at the top. Padding slots are never. A group is one cache line: a
// query or an update reads one line per depth, 4 for 10,000 nodes, where
// a binary tree read 14, most of them cache misses (the levels of a pass
// are MBs): least and set were a sixth of the unbounded 10k x 50k pass.
//
// Bounds are kept as seconds from the pass's now in an int32 (boundVal),
// half the bytes of an instant: a level of 10,000 nodes is 42 KB, and a
// pass's 35 levels stay in the core's L2 cache beside the node profiles.
//
// Each slot above the leaves also knows which of its 16 children holds
// its least bound (arg, the leftmost such): least follows them down, one
// byte per depth, where it searched each group for the least value (a
// loop whose exit the branch predictor missed at every depth: least was
// a fifteenth of the unbounded 10k x 50k pass).
type boundLevel struct {
	limit int64 // valid for jobs whose limit is at least this
	t     []boundVal
	arg   []uint8 // arg[k-off[1]]: the child of slot k (above the leaves) holding its least
	off   []int   // off[d]: where depth d starts in t (0: the leaves); the last holds the root
	now   int64   // what t counts from
	id    int32   // the level's number in the pass (seenBound)
}

// seenBound is a node's bound for one job limit of one level: no job of
// the level's shape with a limit of at least lim seenUnits starts on the
// node before t (a boundVal of the level). A node's start only moves later
// within a pass, and a longer limit starts no earlier, so it holds for
// every later job of the level whose limit is that long.
//
// A level's bound is for its own limit, and a job's may be up to 4 times
// as long: a node that starts in time at the level's limit but not at the
// job's was searched again by every job of the level whose cap passed the
// level's bound (77 k of the 719 k node searches of the unbounded 10k x
// 50k pass, two searches each). The job-limit bound the last such search
// found rules most of them out without a look. One per node, for the
// level that found it last, kept in the node's mask entry, which the visit
// reads anyway: one per node and level (2.8 MB in that pass) cost more
// cache misses than the searches it spared.
type seenBound struct {
	t     boundVal
	level uint16 // the level's id plus one; 0: none
	lim   uint16 // the job's limit in seenUnits, rounded up
}

// seenUnit is the seconds of a unit of seenBound.lim: limits up to 45
// days fit 16 bits; rounding up only makes a bound hold for fewer jobs.
const seenUnit = 64

// seenFor is node i's job-limit bound for a job of limit limit reading
// level l, as an instant (0 when none holds, or under plainSearch).
func (c *cluster) seenFor(i int32, l *boundLevel, limit int64) int64 {
	s := c.mask[i].seen
	if s.level == 0 || int64(s.level) != int64(l.id)+1 || limit < int64(s.lim)*seenUnit || plainSearch {
		return 0
	}
	return l.dec(s.t)
}

// see records t as node i's bound at level l for job limit limit, unless
// the bound kept is of the same level and rules out more (a later instant,
// or the same for a limit no longer). Limits or level numbers past 16 bits
// are not kept.
func (c *cluster) see(i int32, l *boundLevel, limit, t int64) {
	lim := (limit + seenUnit - 1) / seenUnit
	if limit <= 0 || lim > math.MaxUint16 || l.id+1 > math.MaxUint16 || t >= never {
		return
	}
	s, v, id := &c.mask[i].seen, l.enc(t), uint16(l.id+1)
	if s.level != id || v > s.t || (v == s.t && uint16(lim) <= s.lim) {
		*s = seenBound{t: v, level: id, lim: uint16(lim)}
	}
}

// boundVal is a bound as stored: seconds from now, boundNever for never.
// Instants too far from now to fit are stored nearer now, which keeps
// them lower bounds: before now (no start is earlier than now+1 anyway)
// or a bound further ahead than 68 years.
type boundVal = int32

const boundNever = boundVal(math.MaxInt32)

func (l *boundLevel) enc(v int64) boundVal {
	if v >= never {
		return boundNever
	}
	return boundVal(min(max(v-l.now, math.MinInt32), math.MaxInt32-1))
}

func (l *boundLevel) dec(b boundVal) int64 {
	if b == boundNever {
		return never
	}
	return l.now + int64(b)
}

// boundFan is the tree's fan-out: 16 boundVal fill a cache line.
const boundFan = 16

// boundSet is one shape's levels, by limit ascending.
type boundSet struct {
	off    []int // the levels' layout (boundLevel.off)
	now    int64
	levels []*boundLevel
	// base is the shape's first level as baseBounds made it (tree and
	// args), kept for the levels made below every other: a queue reaches
	// a shape's long limits first, so most levels start there, and
	// baseBounds reads every node's GPUs for a GPU shape (a node struct
	// and its GPU list, out of cache: a twelfth of the L2 misses of the
	// unbounded 10k x 50k pass, for 31 levels of 7 shapes). What it
	// reads does not change within a pass in a way that matters: the
	// GPUs a node has, and whether it takes new work, which no start or
	// reservation gives back.
	base    []boundVal
	baseArg []uint8
}

// boundLayout is where each depth of a tree over n leaves starts, and the
// slots it takes in all. Every depth is padded to whole groups (so groups
// stay aligned to cache lines) but the root's.
func boundLayout(n int) (off []int, size int) {
	for w := max(1, n); ; w = (w + boundFan - 1) / boundFan {
		off = append(off, size)
		if w == 1 {
			return off, size + 1
		}
		size += (w + boundFan - 1) / boundFan * boundFan
	}
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
// below (a valid bound for it) when it is new; fresh reports a new level
// below every other, whose bounds are the shape's base (and seeds).
func (c *cluster) boundsFor(k boundKey, limit, now int64) (bs *boundSet, lvl int, fresh bool) {
	if c.bounds == nil {
		c.bounds = map[boundKey]*boundSet{}
	}
	bs = c.bounds[k]
	if bs == nil {
		bs = &boundSet{now: now}
		bs.off, _ = boundLayout(len(k.ps.order))
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
		return bs, pos, false
	}
	l := &boundLevel{limit: lv, off: bs.off, now: bs.now, id: c.levelIDs}
	c.levelIDs++
	if pos > 0 {
		l.t, l.arg = slices.Clone(bs.levels[pos-1].t), slices.Clone(bs.levels[pos-1].arg)
	} else {
		if bs.base == nil {
			bs.base = c.baseBounds(&k, bs.off, bs.now)
			bs.baseArg = buildAbove(bs.base, nil, bs.off)
		}
		l.t, l.arg = slices.Clone(bs.base), slices.Clone(bs.baseArg)
	}
	if c.seedBounds(&k, lv, l.t) { // bfseed.go
		buildAbove(l.t, l.arg, bs.off)
	}
	bs.levels = slices.Insert(bs.levels, pos, l)
	return bs, pos, pos == 0
}

// searchFresh replaces the base bounds of a fresh level (boundsFor) with
// each node's earliest start at the level's limit, for the job masked
// (c.job), in one sweep over the partition. The first job reading such a
// level visited every node still at the base (its bound is below any
// cap), one at a time, least bound first, through the tree: 10 k node
// visits for each of the levels a deep queue makes below the others (125
// k of the 452 k visits of the unbounded 10k x 50k pass). The same
// searches in placement order, and the tree built once, cost less; the
// job then visits only the nodes that may start it in time.
func (c *cluster) searchFresh(l *boundLevel) {
	j := &c.job
	zero := l.enc(0)
	changed := false
	for pos, i := range j.ps.order {
		if l.t[pos] != zero {
			continue // a seed, or never
		}
		t, next := c.nodeEarliest(i, &j.r, j.unit, l.limit, j.now, j.horizon, 0)
		if v := l.enc(max(0, min(t, next))); v != zero {
			l.t[pos], changed = v, true
		}
	}
	if changed {
		buildAbove(l.t, l.arg, l.off)
	}
}

// baseBounds is a shape's first level: never on nodes that can never take
// it in this pass (taking no new work, or too few GPUs of the type), 0
// elsewhere.
func (c *cluster) baseBounds(k *boundKey, off []int, now int64) []boundVal {
	_, size := boundLayout(len(k.ps.order))
	t := make([]boundVal, size)
	zero := (&boundLevel{now: now}).enc(0)
	need := 0
	if k.r.hasGPU() {
		u := k.unit
		if k.r.pack {
			u = 1
		}
		need = k.r.gpusOn(u)
	}
	leaves := size
	if len(off) > 1 {
		leaves = off[1]
	}
	for pos := range leaves {
		t[pos] = zero
		if pos >= len(k.ps.order) {
			t[pos] = boundNever
			continue
		}
		i := k.ps.order[pos]
		if c.cpu[i] < 0 || (need > 0 && c.countFree(i, nil, k.r.gpuType) < need) {
			t[pos] = boundNever
		}
	}
	return t
}

// buildAbove fills every depth of a level's tree above its leaves, and
// arg (made when nil), which it returns.
func buildAbove(t []boundVal, arg []uint8, off []int) []uint8 {
	if len(off) == 1 {
		return nil // the root is the only leaf
	}
	if arg == nil {
		arg = make([]uint8, len(t)-off[1])
	}
	for d := 1; d < len(off); d++ {
		end := len(t)
		if d+1 < len(off) {
			end = off[d+1]
		}
		for s := off[d]; s < end; s++ {
			t[s], arg[s-off[1]] = boundNever, 0
			if g := off[d-1] + (s-off[d])*boundFan; g < off[d] {
				m, j := minArg(t[g : g+boundFan])
				t[s], arg[s-off[1]] = m, uint8(j)
			}
		}
	}
	return arg
}

// minArg is the least of a group's 16 bounds and the first child holding
// it: the least of the bounds each with its child's index in the low 4
// bits (which orders ties by index), as a tree of mins without branches.
// A loop that kept the least so far cost three times as much (a branch
// the predictor misses).
func minArg(g []boundVal) (boundVal, int) {
	g = g[:boundFan]
	a := min(min(min(argKey(g[0], 0), argKey(g[1], 1)), min(argKey(g[2], 2), argKey(g[3], 3))),
		min(min(argKey(g[4], 4), argKey(g[5], 5)), min(argKey(g[6], 6), argKey(g[7], 7))))
	b := min(min(min(argKey(g[8], 8), argKey(g[9], 9)), min(argKey(g[10], 10), argKey(g[11], 11))),
		min(min(argKey(g[12], 12), argKey(g[13], 13)), min(argKey(g[14], 14), argKey(g[15], 15))))
	k := min(a, b)
	return boundVal(k >> 4), int(k & (boundFan - 1))
}

func argKey(v boundVal, j int64) int64 { return int64(v)<<4 | j }

func (l *boundLevel) at(pos int) int64 { return l.dec(l.t[pos]) }

// root is the least bound of the level.
func (l *boundLevel) root() int64 { return l.dec(l.t[len(l.t)-1]) }

// set stores a leaf and fixes its ancestors, stopping at the first one
// whose least bound does not change. A slot's group is read again only
// when the slot held its parent's least bound and rose: a value that
// falls sets the parent's least bound without a look, and one that was
// not the least changes nothing above it.
func (l *boundLevel) set(pos int, v int64) {
	old, nv := l.t[pos], l.enc(v)
	l.t[pos] = nv
	for d := 1; d < len(l.off); d++ {
		child := uint8(pos % boundFan)
		pos /= boundFan
		k := l.off[d] + pos
		pv, a := l.t[k], &l.arg[k-l.off[1]]
		switch {
		case nv < pv:
			l.t[k], *a = nv, child
		case nv == pv:
			*a = min(*a, child) // the leftmost
			return
		case old > pv:
			return
		default: // the least rose
			g := l.off[d-1] + pos*boundFan
			m, j := minArg(l.t[g : g+boundFan])
			*a = uint8(j)
			if m == pv {
				return
			}
			l.t[k], nv = m, m
		}
		old = pv
	}
}

// raise lifts a leaf to v; it never lowers one.
func (l *boundLevel) raise(pos int, v int64) {
	if l.at(pos) < v {
		l.set(pos, v)
	}
}

// least is the position of a leaf holding the least bound (the leftmost).
func (l *boundLevel) least() int {
	k := 0
	for d := len(l.off) - 1; d > 0; d-- {
		k = k*boundFan + int(l.arg[l.off[d]+k-l.off[1]])
	}
	return k
}

// firstAtMost is the first position at or after from whose bound is at
// most x, or -1. (An x too far ahead to store admits every bound stored
// as far: a looser test, which the callers' exact checks follow.)
func (l *boundLevel) firstAtMost(from int, at int64) int {
	if from >= l.end(0) {
		return -1
	}
	x := l.enc(at)
	// Up: the rest of from's group, then the groups to its right one
	// depth higher, until a slot holds a bound at most x.
	k, d := from, 0
	for {
		end := l.off[d] + (k/boundFan+1)*boundFan
		if d == len(l.off)-1 {
			end = len(l.t) // the root alone
		}
		j := l.off[d] + k
		for j < end && l.t[j] > x {
			j++
		}
		if j < end {
			k = j - l.off[d]
			break
		}
		if d == len(l.off)-1 {
			return -1
		}
		k, d = k/boundFan+1, d+1
		if l.off[d]+k >= l.end(d) {
			return -1
		}
	}
	// Down: the leftmost child at most x, to a leaf.
	for d > 0 {
		d--
		g := l.off[d] + k*boundFan
		j := 0
		for l.t[g+j] > x {
			j++
		}
		k = k*boundFan + j
	}
	return k
}

// end is where depth d ends in t.
func (l *boundLevel) end(d int) int {
	if d+1 < len(l.off) {
		return l.off[d+1]
	}
	return len(l.t)
}

// raiseAbove records that node ps.order[pos] cannot start a job of the
// set's shape with a limit above level lv's before t: every level above
// lv learns it. A node's bounds never fall from one level to the next (a
// new level starts as the one below, and what raises a level raises
// those above at least as high), so the first level that already knows
// ends the walk: most visits teach nothing to most levels.
func (bs *boundSet) raiseAbove(lv, pos int, t int64) {
	for _, l := range bs.levels[lv+1:] {
		if l.at(pos) >= t {
			return
		}
		l.set(pos, t)
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
