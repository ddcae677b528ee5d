package sim

import (
	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/sched"
)

// gate skips scheduling passes that are sure to start nothing. A trace
// replay spends its time in passes over deep queues, and most instants
// (a job arrives or ends) change nothing any pending job could use. The
// skipped passes' pending reasons and planned starts are not recorded;
// the starts, which are all the figures measure, are those of a pass at
// every instant (TestGateExact replays traces both ways).
//
// It works only in the trace model Run builds (every node one CPU, one
// partition, no preemption): there a job needs exactly its processors'
// worth of free CPUs, wherever they are. Scenarios run every pass.
type gate struct {
	need []int // CPUs job k+1 needs
	// count[n] is how many pending jobs need n CPUs.
	count []int
	// settled: no pending job can start until a CPU is freed, because a
	// pass saw none start or a rule below proved it. Time passing alone
	// does not undo that (see skip).
	settled bool
	// timeFree: a pass's outcome does not depend on now while nothing
	// ends: priorities are fixed and the backfill window is unbounded.
	timeFree bool
	// strict: sched/builtin with the trace model's equal fixed
	// priorities, so the queue in ID order is the scheduling order.
	strict bool
}

func newGate(need []int, procs int, cfg sched.Config, fixedPrio bool) *gate {
	if need == nil || cfg.Preempt.Enabled() || cfg.MaxJobsPerCycle > 0 {
		return nil
	}
	return &gate{need: need, count: make([]int, procs+1),
		timeFree: fixedPrio && cfg.BfWindow == 0, strict: !cfg.Backfill && fixedPrio}
}

func (g *gate) add(j *model.Job)    { g.count[g.need[j.ID-1]]++ }
func (g *gate) remove(j *model.Job) { g.count[g.need[j.ID-1]]-- }

// skip reports whether the pass at now starts nothing: pending is the
// queue in ID order (submission order, which is scheduling order when
// priorities are fixed and equal), arrived the index of this instant's
// arrivals in it, ended whether a job ended at now, free the free CPUs.
//
// Three rules, each exact in the trace model:
//   - no pending job needs at most free CPUs: nothing can be placed;
//   - sched/builtin, equal fixed priorities: the head of the queue does
//     not fit, and it blocks the partition for every job behind it
//     (see take);
//   - the queue was settled and nothing ended since: resources are as
//     they were, and with fixed priorities and no bf_window the backfill
//     plan of the older jobs is too: their reservations start at release
//     instants that are all still ahead (no running job has passed its
//     time limit, whose release would move with now), and a later now
//     only shortens the hole each could have used. So only arrivals can
//     start, and none fits.
func (g *gate) skip(pending []*model.Job, arrived int, ended bool, free int, running []*model.Job, now int64) bool {
	if free <= 0 || !g.fits(free) {
		return true
	}
	if g.strict && g.take(pending, free) == 0 {
		return true
	}
	if !g.settled || ended || !g.timeFree {
		return false
	}
	for _, j := range pending[arrived:] {
		if g.need[j.ID-1] <= free {
			return false
		}
	}
	for _, j := range running {
		if j.StartTime+j.TimeLimit <= now {
			return false
		}
	}
	return true
}

// fits reports whether some pending job needs at most free CPUs.
func (g *gate) fits(free int) bool {
	for n := 1; n <= free && n < len(g.count); n++ {
		if g.count[n] > 0 {
			return true
		}
	}
	return false
}

// take returns how many jobs at the head of pending (in ID order) the
// pass needs to see. Under sched/builtin with equal fixed priorities jobs
// start strictly in that order and the first that does not fit blocks
// the rest, so the pass starts exactly the longest head whose needs add
// up to at most free CPUs: the jobs behind it need not be looked at, and
// a queue tens of thousands deep costs a pass of a few jobs. Otherwise
// (backfill, moving priorities) the whole queue.
func (g *gate) take(pending []*model.Job, free int) int {
	if !g.strict {
		return len(pending)
	}
	for k, j := range pending {
		if free -= g.need[j.ID-1]; free < 0 {
			return k
		}
	}
	return len(pending)
}
