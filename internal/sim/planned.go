package sim

import (
	"math"
	"slices"
)

// planned is what the last pass run planned, kept while no job ends, so
// that later instants at which only jobs arrive can be proved to start
// nothing without a pass (the gate's third rule). It holds for the
// trace model with equal fixed priorities: jobs are considered in ID
// order, arrivals join the end of the queue, nodes are one CPU each.
//
// Why the jobs that pass (at p.at) left pending get the same outcome at
// a later now, while nothing ended, no running job is past its time
// limit, and still holds:
//
//   - the backfill search of a job tries the instants at which running
//     jobs reach their limits and earlier reservations end, rounded up to
//     bf_resolution, after now and up to now+bf_window, and takes the
//     first at which its window [t, t+limit) fits. Those instants are all
//     after now (still), so moving now on drops none that a reservation
//     sits on, and the horizon brings in none (still). The jobs the pass
//     started now run, holding their nodes until their limit: a node one
//     of them took was outside every reservation made before it over its
//     limit, so a reservation found then is found again, on the same
//     nodes (first fit over fewer nodes that still hold the chosen ones),
//     and an instant one of them adds (its end) offers no more than the
//     instant tried before it, where the job did not fit.
//   - a job starts now only on free nodes that no reservation holds over
//     [now, now+limit): with the same reservations, fewer free nodes and
//     a window that meets every reservation it met at p.at (they all
//     start after now), a job that could not start then cannot now.
//
// So only the jobs queued since (pending[queued:]) could start, and
// blocked counts what the older jobs' reservations leave them.
// TestGateExact replays traces with every pass run and checks that each
// pass this skips starts nothing.
type planned struct {
	ok       bool
	at       int64
	queued   int     // jobs left pending by the pass: the head of the queue
	instants []int64 // running jobs' ends and reservation ends, sorted
	firstRes int64   // the earliest planned start (never: none)
	// first holds, for each node left free, the earliest start of a
	// reservation on it (never: none), sorted (blocked).
	first []int64
}

type step struct {
	t    int64
	cpus int
}

// never is later than any instant a trace reaches.
const never = int64(math.MaxInt64 / 4)

// still reports whether the plan made at p.at holds at now for the jobs
// it saw: its reservations are all after now, and with a window, no
// instant it knew of comes into the horizon between p.at+window and
// now+window. An instant x is tried as x rounded up to res, so any x
// within res of the old horizon might; the node-level search
// (sched's bfsearch.go) compares x itself with the horizon, and tries
// now+1, which must stay inside the old one.
func (p *planned) still(now, window, res int64) bool {
	if p.firstRes <= now {
		return false
	}
	if window <= 0 {
		return true
	}
	if now+1 > p.at+window-res {
		return false
	}
	k, _ := slices.BinarySearch(p.instants, p.at+window-res+1)
	return k == len(p.instants) || p.instants[k] > now+window
}

// blocked reports whether a job queued after the plan was made, needing
// need CPUs for limit seconds, cannot start at now. It would need need
// free nodes on which no reservation overlaps [now, now+limit): the
// older jobs' reservations sit where they did (see above), and those of
// the other new jobs, unknown, only hold more.
func (p *planned) blocked(need int, limit int64, now int64) bool {
	if need > len(p.first) {
		return true
	}
	end := never
	if limit > 0 {
		end = now + limit
	}
	k, _ := slices.BinarySearch(p.first, end)
	return need > len(p.first)-k
}
