package sched

import (
	"github.com/drover-hpc/drover/internal/model"
)

// Backfill plans around reservations. Placement now keeps a job off the
// nodes reservations deny it over [now, now+limit) (reservations.go); the
// backfill search for a later start instead sees each reservation as
// blocks in time on its nodes: a node is unavailable to a job over [a, b)
// when a block the job may not use meets it. So a job whose limit reaches
// into a maintenance window is planned after the window ends (or on other
// nodes), and lower-ordered jobs are planned around the window rather
// than onto it.
//
// The blocks are an input of the search, read in two places: window (what
// a node offers over [a, b)) and nodeEarliest (a node's first possible
// start). Which blocks apply depends on the job (c.resvUse, set for every
// job in resvExclude), so the request carries the reservation too and the
// per-shape bounds of bfbounds.go are kept per reservation: a bound found
// for a job outside a reservation is not one for a job in it.
//
// Each block's end (and the start of a reservation its jobs wait for) is
// added to the node's instants as a release of nothing, so the search
// tries a start there. Recurring reservations (HOURLY, DAILY, WEEKLY,
// WEEKDAY, WEEKEND) block each repeat of their window up to bf_window
// (at most maxResvRepeats when bf_window is unbounded); WEEKDAY and
// WEEKEND block every day, since the days they skip depend on the
// controller's time zone, which the scheduler does not know: a plan may
// then wait for a window that will not come, never start into one.

// resvBlock is one window of a reservation on one node.
type resvBlock struct {
	from, to int64
	resv     int32 // index in Input.Reservations
	// members: the block holds only the reservation's own jobs off (the
	// time before its window opens); otherwise it holds everyone else off.
	members bool
}

// maxResvRepeats bounds the windows of one recurring reservation the
// search blocks: with no bf_window, and as a cap on HOURLY ones within it.
const maxResvRepeats = 512

// initResvBlocks turns the reservations into blocks on their nodes, and
// their ends into instants of the backfill profile.
func (s *scheduler) initResvBlocks() {
	c := s.c
	c.resvUse = -1
	if len(s.in.Reservations) == 0 || c.bf == nil {
		return
	}
	horizon := never
	if s.cfg.BfWindow > 0 {
		horizon = s.now + s.cfg.BfWindow
	}
	c.resvBlk = make([][]resvBlock, len(c.nodes))
	s.resvID = make(map[string]int32, len(s.in.Reservations))
	for k, r := range s.in.Reservations {
		if r == nil {
			continue
		}
		id := int32(k)
		if _, dup := s.resvID[r.Name]; !dup {
			s.resvID[r.Name] = id
		}
		var nodes []int32
		for _, name := range r.Nodes {
			if i, ok := c.index[name]; ok {
				nodes = append(nodes, i)
			}
		}
		block := func(b resvBlock) {
			for _, i := range nodes {
				c.resvBlk[i] = append(c.resvBlk[i], b)
				if b.to < never {
					c.bf.addRelease(i, release{t: b.to})
				}
			}
		}
		if r.Start > s.now && r.Flags&model.ResvFlex == 0 {
			block(resvBlock{from: s.now, to: r.Start, resv: id, members: true})
		}
		// A job planned by the horizon runs past it: a window up to a
		// period later still meets any job that fits between two.
		period, last := r.Period(), horizon
		if period > 0 && horizon < never {
			last = horizon + period
		}
		for w := int64(0); w < maxResvRepeats; w++ {
			from, to := r.Start+w*period, r.End+w*period
			if from >= last {
				break
			}
			if to > s.now {
				block(resvBlock{from: from, to: to, resv: id})
			}
			if period <= 0 {
				break
			}
		}
	}
}

// resvBlocked reports whether a block the job being placed may not use
// holds node i during [a, b).
func (c *cluster) resvBlocked(i int32, a, b int64) bool {
	for _, k := range c.resvBlk[i] {
		if k.from < b && a < k.to && k.members == (k.resv == c.resvUse) &&
			(k.members || c.resvShadow == nil || !c.resvShadow[k.resv]) {
			return true
		}
	}
	return false
}

// shadowed is, per reservation index, whether a job of reservation own
// may use its nodes anyway (model.Reservation.Shadows); nil for none.
func (s *scheduler) shadowed(own int32) []bool {
	if own < 0 {
		return nil
	}
	if v, ok := s.resvShadow[own]; ok {
		return v
	}
	mine := s.in.Reservations[own]
	v := make([]bool, len(s.in.Reservations))
	for k, r := range s.in.Reservations {
		v[k] = r != nil && int32(k) != own && mine.Shadows(r)
	}
	if s.resvShadow == nil {
		s.resvShadow = map[int32][]bool{}
	}
	s.resvShadow[own] = v
	return v
}

// resvSearch is where considerBackfill looks for a later start: the
// partition and exclusions before reservations narrowed them for a start
// now (the blocks say when reserved nodes are free again), with a job of
// a reservation kept to its nodes and its window's start times (Slurm
// starts such a job no later than the window's end). The cheap exits'
// free counts must not leave out the denied nodes there either.
func (s *scheduler) resvSearch(ps *partState, exc []int32, horizon int64) (*partState, []int32, int64) {
	if s.bfPS == nil {
		return ps, exc, horizon
	}
	s.excFree, s.excFreePart = 0, 0
	return s.bfPS, s.bfExc, min(horizon, s.bfUntil)
}

// resvEnd is when a job started now gives its nodes back: its limit's
// end, or its reservation's when that comes first (the window's end
// times out the jobs of a reservation without FLEX). Lower-ordered jobs
// and planned starts then count on those nodes from the window's end.
func (s *scheduler) resvEnd(end int64) int64 {
	if s.bfUntil < never {
		return min(end, s.bfUntil+1)
	}
	return end
}
