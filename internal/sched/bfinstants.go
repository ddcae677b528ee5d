package sched

import (
	"slices"
)

// The backfill profile's cluster-wide events in time order, in chunks: at
// each instant, the change of the free CPU count (+CPUs at releases and
// reservation ends, -CPUs at reservation starts), and whether something
// is released then (the instants the reservation search tries). A deep
// queue gathers tens of thousands of them, and inserting into one array
// moved its whole tail per insert (a sixth of an unbounded pass). A chunk
// holds at most chunkMax entries and splits in two past it; chunks keep
// their sums, so the CPUs free at an instant are added up a chunk at a
// time. Chunks are small: an insert's binary search in a chunk of 256
// touched a dozen cache lines, most of them misses; the search over the
// chunks' last instants is in one small array. Instants and deltas were
// two lists, an insert into each for most events (settling them was 7%
// of the unbounded 10k x 50k pass).
const chunkMax = 64

// cursor is a position in a chunked list: entry k of chunk b.
type cursor struct{ b, k int }

// chunkOf is the chunk where v belongs: the first whose last entry is at
// least v, else the last one. It searches the chunks' last keys, kept in
// an array of their own: a probe into the chunks themselves read a slice
// header and an entry, two cache misses.
func chunkOf(last []int64, v int64) int {
	return min(lowerBound(last, v), len(last)-1)
}

// lowerBound is the first k whose a[k] is at least v, or len(a); a
// ascends. The range halves by the sign of a[mid]-v, not by a branch
// (half the probes of a branching search were mispredicted); entries and
// v are instants, far from overflowing a difference.
func lowerBound(a []int64, v int64) int {
	n := len(a)
	if n == 0 {
		return 0
	}
	base := 0 // the answer is in [base, base+n]
	for n > 1 {
		half := n >> 1
		// a[base+half] < v: the answer is past base+half.
		base += half & int((a[base+half]-v)>>63)
		n -= half
	}
	return base + int(uint64(a[base]-v)>>63)
}

// firstDelta is lowerBound over the instants of a chunk of deltas.
func firstDelta(c []delta, t int64) int {
	n := len(c)
	if n == 0 {
		return 0
	}
	base := 0
	for n > 1 {
		half := n >> 1
		base += half & int((c[base+half].t-t)>>63)
		n -= half
	}
	return base + int(uint64(c[base].t-t)>>63)
}

// splitChunk halves chunk b; the upper half gets an array of its own,
// with room for a whole chunk (as every chunk has: a chunk grown by
// doubling, and a half that had to grow again at its next insert, were
// half the profile's allocations), and the lower half keeps its array.
func splitChunk[E any](ch [][]E, last []int64, b int, key func(E) int64) ([][]E, []int64) {
	c := ch[b]
	h := len(c) / 2
	up := append(make([]E, 0, chunkMax+1), c[h:]...)
	ch[b] = c[:h]
	last = slices.Insert(last, b, key(c[h-1]))
	return slices.Insert(ch, b+1, up), last
}

// deltaList is the cluster's events, one entry per instant, with each
// chunk's sum of deltas, and the sum of each run of superFan chunks:
// every reservation search adds up the deltas from the first one to its
// first start, and a chunk at a time that was hundreds of steps per job.
type deltaList struct {
	ch    [][]delta
	sum   []int64
	last  []int64 // each chunk's last instant (chunkOf)
	super []int64 // super[s]: the sum of chunks [s*superFan, (s+1)*superFan)
}

const superFan = 16

func deltaKey(d delta) int64 { return d.t }

func (l *deltaList) add(d delta) {
	if len(l.ch) == 0 {
		l.ch, l.sum, l.last = append(l.ch, append(make([]delta, 0, chunkMax+1), d)), append(l.sum, d.cpu), append(l.last, d.t)
		l.super = append(l.super, d.cpu)
		return
	}
	b := chunkOf(l.last, d.t)
	c := l.ch[b]
	l.sum[b] += d.cpu
	l.super[b/superFan] += d.cpu
	k := firstDelta(c, d.t)
	if k < len(c) && c[k].t == d.t {
		c[k].cpu += d.cpu
		c[k].release = c[k].release || d.release
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
		from := b / superFan
		l.super = l.super[:from]
		for k := from * superFan; k < len(l.sum); k++ {
			if k%superFan == 0 {
				l.super = append(l.super, 0)
			}
			l.super[k/superFan] += l.sum[k]
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

// from is the cursor of the first release instant at or after t (at the
// end when none is).
func (l *deltaList) from(t int64) cursor {
	if len(l.ch) == 0 {
		return cursor{}
	}
	b := chunkOf(l.last, t)
	c := l.ch[b]
	return l.release(cursor{b, firstDelta(c, t)})
}

// release is c if it is at a release instant, else the cursor of the next
// one (at the end when none is).
func (l *deltaList) release(c cursor) cursor {
	for ; c.b < len(l.ch); c = (cursor{c.b + 1, 0}) {
		for ch := l.ch[c.b]; c.k < len(ch); c.k++ {
			if ch[c.k].release {
				return c
			}
		}
	}
	return c
}

func (l *deltaList) ok(c cursor) bool  { return c.b < len(l.ch) }
func (l *deltaList) at(c cursor) int64 { return l.ch[c.b][c.k].t }

// next is the cursor of the release instant after c's.
func (l *deltaList) next(c cursor) cursor { return l.release(cursor{c.b, c.k + 1}) }
