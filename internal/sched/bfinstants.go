package sched

import (
	"cmp"
	"slices"
)

// The backfill profile's cluster-wide instants (when something is
// released) and free-CPU deltas, as sorted lists in chunks: a deep queue
// gathers tens of thousands of each, and inserting into one array moved
// its whole tail per insert (a sixth of an unbounded pass). A chunk holds
// at most chunkMax entries and splits in two past it; the delta chunks
// keep their sums, so the CPUs free at an instant are added up a chunk at
// a time.
const chunkMax = 256

// instants is a sorted set of instants.
type instants struct {
	ch   [][]int64 // in order, none empty
	last []int64   // each chunk's last instant (chunkOf)
}

// cursor is a position in a chunked list: entry k of chunk b.
type cursor struct{ b, k int }

// chunkOf is the chunk where v belongs: the first whose last entry is at
// least v, else the last one. It searches the chunks' last keys, kept in
// an array of their own: a probe into the chunks themselves read a slice
// header and an entry, two cache misses (settling instants and deltas
// was a twelfth of the unbounded 10k x 50k pass).
func chunkOf(last []int64, v int64) int {
	b, _ := slices.BinarySearch(last, v)
	return min(b, len(last)-1)
}

func (s *instants) insert(t int64) {
	if len(s.ch) == 0 {
		s.ch, s.last = append(s.ch, []int64{t}), append(s.last, t)
		return
	}
	b := chunkOf(s.last, t)
	c := s.ch[b]
	k, found := slices.BinarySearch(c, t)
	if found {
		return
	}
	s.ch[b] = slices.Insert(c, k, t)
	s.last[b] = max(s.last[b], t)
	if len(s.ch[b]) > chunkMax {
		s.ch, s.last = splitChunk(s.ch, s.last, b, instantKey)
	}
}

func instantKey(t int64) int64 { return t }

// splitChunk halves chunk b; the upper half gets an array of its own.
func splitChunk[E any](ch [][]E, last []int64, b int, key func(E) int64) ([][]E, []int64) {
	c := ch[b]
	h := len(c) / 2
	ch[b] = c[:h:h]
	last = slices.Insert(last, b, key(c[h-1]))
	return slices.Insert(ch, b+1, slices.Clone(c[h:])), last
}

// from is the cursor of the first instant at or after t (at the end when
// none is).
func (s *instants) from(t int64) cursor {
	if len(s.ch) == 0 {
		return cursor{}
	}
	b := chunkOf(s.last, t)
	k, _ := slices.BinarySearch(s.ch[b], t)
	if k == len(s.ch[b]) {
		return cursor{b + 1, 0}
	}
	return cursor{b, k}
}

func (s *instants) ok(c cursor) bool  { return c.b < len(s.ch) }
func (s *instants) at(c cursor) int64 { return s.ch[c.b][c.k] }
func (s *instants) next(c cursor) cursor {
	if c.k++; c.k == len(s.ch[c.b]) {
		return cursor{c.b + 1, 0}
	}
	return c
}

// deltaList is the cluster's free-CPU deltas, one entry per instant, with
// each chunk's sum, and the sum of each run of superFan chunks: every
// reservation search adds up the deltas from the first one to its first
// start, and a chunk at a time that was hundreds of steps per job.
type deltaList struct {
	ch    [][]delta
	sum   []int64
	last  []int64 // each chunk's last instant (chunkOf)
	super []int64 // super[s]: the sum of chunks [s*superFan, (s+1)*superFan)
}

const superFan = 8

func deltaKey(d delta) int64 { return d.t }

func (l *deltaList) add(d delta) {
	if len(l.ch) == 0 {
		l.ch, l.sum, l.last = append(l.ch, []delta{d}), append(l.sum, d.cpu), append(l.last, d.t)
		l.super = append(l.super, d.cpu)
		return
	}
	b := chunkOf(l.last, d.t)
	c := l.ch[b]
	l.sum[b] += d.cpu
	l.super[b/superFan] += d.cpu
	k, found := slices.BinarySearchFunc(c, d.t, func(x delta, t int64) int { return cmp.Compare(x.t, t) })
	if found {
		c[k].cpu += d.cpu
		return
	}
	l.ch[b] = slices.Insert(c, k, d)
	l.last[b] = max(l.last[b], d.t)
	if len(l.ch[b]) > chunkMax {
		l.ch, l.last = splitChunk(l.ch, l.last, b, deltaKey)
		l.sum = slices.Insert(l.sum, b+1, 0)
		for _, x := range l.ch[b+1] {
			l.sum[b+1] += x.cpu
		}
		l.sum[b] -= l.sum[b+1]
		// Chunks after b moved up one: their runs are summed again (one
		// split per chunkMax/2 inserts).
		l.super = l.super[:0]
		for k, s := range l.sum {
			if k%superFan == 0 {
				l.super = append(l.super, 0)
			}
			l.super[k/superFan] += s
		}
	}
}

// upTo adds to free the deltas from cursor c on whose instant is at most
// t, a whole chunk at a time where it can, and returns the sum and the
// cursor of the first delta after t.
func (l *deltaList) upTo(free int64, c cursor, t int64) (int64, cursor) {
	for c.b < len(l.ch) {
		if c.k == 0 && c.b%superFan == 0 {
			if e := min(c.b+superFan, len(l.ch)) - 1; l.last[e] <= t {
				free += l.super[c.b/superFan]
				c = cursor{e + 1, 0}
				continue
			}
		}
		// A whole chunk at once, judged by its last instant kept apart:
		// reading it from the chunk was a cache miss per chunk, and
		// every reservation search sums the deltas from the start.
		if c.k == 0 && l.last[c.b] <= t {
			free += l.sum[c.b]
			c = cursor{c.b + 1, 0}
			continue
		}
		ch := l.ch[c.b]
		for ; c.k < len(ch) && ch[c.k].t <= t; c.k++ {
			free += ch[c.k].cpu
		}
		if c.k < len(ch) {
			return free, c
		}
		c = cursor{c.b + 1, 0}
	}
	return free, c
}
