// Package resv is the scheduler's reservation policy: for one job, which
// nodes advance reservations take away from it, which nodes its own
// reservation confines it to, and when it must wait for its reservation.
//
// It is pure like the rest of internal/sched: a list of reservations and
// the cycle's clock value in, verdicts out. It knows nothing of node
// indices or placement; sched turns a verdict into the excluded-node set
// its placement already honours (-x), so a reservation never needs its
// own path through first-fit or backfill.
//
// Rules (Slurm 22.05's): a job that did not ask for a reservation may not
// use a reserved node during the window, even when its user is allowed
// in: it avoids every reservation whose window meets [now, now+limit),
// so a job that ends before a reservation starts still runs there
// (backfill around it). A job that asked for one runs only once it is
// active, only on its nodes (FLEX: also elsewhere), and still avoids
// other reservations it would overlap, unless its own is MAINT (it avoids
// none) or OVERLAP (it avoids only MAINT ones).
package resv

import (
	"math"
	"slices"

	"github.com/drover-hpc/drover/internal/model"
)

// Never is the end of a job without a time limit.
const Never = int64(math.MaxInt64 / 4)

// Verdict is what reservations mean for one job this cycle.
type Verdict struct {
	// Wait, when set, is the job's pending reason: its reservation is
	// not active yet (or is gone). Nothing else applies.
	Wait string
	// Only, when non-nil, lists the only nodes the job may use: its
	// reservation's.
	Only []string
	// Deny lists nodes the job may not use: other reservations' nodes
	// whose windows meet the job's [now, end). Sorted, unique.
	Deny []string
	// Maint: a MAINT reservation is among those denying nodes; a job
	// that then cannot start waits "ReqNodeNotAvail, Reserved for
	// maintenance".
	Maint bool
}

// Set is the cycle's reservations, by name.
type Set struct {
	list   []*model.Reservation
	byName map[string]*model.Reservation
	now    int64
	// Verdicts depend only on the job's own reservation and on which
	// reservations its [now, end) meets, not on end itself: jobs with
	// thousands of different limits share a handful of verdicts.
	memo map[memoKey]Verdict
}

type memoKey struct {
	own  string
	meet string // one byte per reservation of list: 1 when met
}

// New indexes the reservations for a cycle at now. A nil or empty list
// gives a Set whose verdicts are all empty.
func New(list []*model.Reservation, now int64) *Set {
	s := &Set{byName: make(map[string]*model.Reservation, len(list)), now: now, memo: map[memoKey]Verdict{}}
	for _, r := range list {
		if r != nil {
			s.list = append(s.list, r)
			s.byName[r.Name] = r
		}
	}
	return s
}

// Empty reports whether there is nothing to apply.
func (s *Set) Empty() bool { return s == nil || len(s.byName) == 0 }

// For is the verdict for a job that asked for reservation own ("" none)
// and, started now, would hold its nodes until end (Never: no limit).
// Verdicts are shared between jobs: callers must not modify them.
func (s *Set) For(own string, end int64) Verdict {
	if s.Empty() && own == "" {
		return Verdict{}
	}
	var buf [64]byte
	meet := buf[:0]
	for _, r := range s.list {
		if r.Overlaps(s.now, end) {
			meet = append(meet, 1)
		} else {
			meet = append(meet, 0)
		}
	}
	if v, ok := s.memo[memoKey{own, string(meet)}]; ok { // no allocation: the compiler sees the lookup
		return v
	}
	v := s.verdict(own, end)
	s.memo[memoKey{own, string(meet)}] = v
	return v
}

func (s *Set) verdict(own string, end int64) Verdict {
	var v Verdict
	mine := s.byName[own]
	if own != "" {
		if mine == nil || !mine.Active(s.now) {
			return Verdict{Wait: model.ReasonReservation}
		}
		if mine.Flags&model.ResvFlex == 0 {
			v.Only = append([]string{}, mine.Nodes...) // non-nil even when empty
		}
	}
	for _, r := range s.list {
		if r.Name == own || !r.Overlaps(s.now, end) || (mine != nil && mine.Shadows(r)) {
			continue
		}
		v.Deny = append(v.Deny, r.Nodes...)
		if r.Flags&model.ResvMaint != 0 {
			v.Maint = true
		}
	}
	slices.Sort(v.Deny)
	v.Deny = slices.Compact(v.Deny)
	return v
}

// Allowed reports whether a job that asked for own and holds its nodes
// over [start, end) may hold node there: the check a plan's start must
// pass (and the invariant tests assert).
func (s *Set) Allowed(own, node string, start, end int64) bool {
	mine := s.byName[own]
	if own != "" {
		if mine == nil || !mine.Overlaps(start, start+1) {
			return false
		}
		if mine.Flags&model.ResvFlex == 0 && !mine.HasNode(node) {
			return false
		}
	}
	for _, r := range s.list {
		if r.Name != own && r.Overlaps(start, end) && r.HasNode(node) && (mine == nil || !mine.Shadows(r)) {
			return false
		}
	}
	return true
}
