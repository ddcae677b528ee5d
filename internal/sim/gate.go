package sim

import (
	"slices"

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
	// fixedPrio: priorities are equal and fixed, so the queue in ID order
	// is the scheduling order at every instant and arrivals join its end.
	fixedPrio bool
	// strict: sched/builtin with the trace model's equal fixed
	// priorities, so the queue in ID order is the scheduling order.
	strict bool
	// moving: backfill with priorities that move (set at each instant):
	// only the shadow rule applies, with the head found by priority.
	moving bool
	// window and res are bf_window and bf_resolution (seconds; window 0:
	// no horizon), which the plan's horizon check reads.
	window, res int64
	// plan is what the last pass run planned, while nothing has ended
	// since (planned.go).
	plan planned
	// planSkips counts the passes the plan rule skipped (tests).
	planSkips int
	// shadowSkips counts the passes the shadow rule skipped (tests).
	shadowSkips int
	buf         []*model.Job // cut's result under moving priorities
	rel         []step       // shadowed's running jobs' releases
	pos         []int        // ran's node index → place in plan.first, or -1
}

func newGate(need []int, procs int, cfg sched.Config, fixedPrio bool) *gate {
	if need == nil || cfg.Preempt.Enabled() || cfg.MaxJobsPerCycle > 0 {
		return nil
	}
	return &gate{need: need, count: make([]int, procs+1), fixedPrio: fixedPrio,
		strict: !cfg.Backfill && fixedPrio, moving: cfg.Backfill && !fixedPrio, window: cfg.BfWindow, res: max(1, cfg.BfResolution)}
}

func (g *gate) add(j *model.Job)    { g.count[g.need[j.ID-1]]++ }
func (g *gate) remove(j *model.Job) { g.count[g.need[j.ID-1]]-- }

// skip reports whether the pass at now starts nothing: pending is the
// queue in ID order (submission order, which is scheduling order when
// priorities are fixed and equal), ended whether a job ended at now, free
// the free CPUs.
//
// Four rules, each exact in the trace model:
//   - no pending job needs at most free CPUs: nothing can be placed;
//   - sched/builtin, equal fixed priorities: the head of the queue does
//     not fit, and it blocks the partition for every job behind it
//     (see take);
//   - backfill, equal fixed priorities: the head of the queue does not
//     fit, and its reservation keeps every job that fits off the free
//     CPUs (shadowed);
//   - nothing ended since the last pass run, priorities are fixed and no
//     running job is past its time limit: the jobs that pass left
//     waiting get the same reservations now, and none can start; only
//     the jobs queued since could, behind those reservations, and none
//     can (planned). (When a job ended since at an instant the first
//     rule skipped, no job older than the arrivals since fits the free
//     CPUs, so the first rule decides.)
func (g *gate) skip(pending []*model.Job, ended bool, free int, running []*model.Job, now int64) bool {
	if free <= 0 || !g.fits(free) {
		return true
	}
	if g.strict && g.take(pending, free) == 0 {
		return true
	}
	if !g.fixedPrio {
		return false
	}
	if !ended && g.planSkip(pending, free, running, now) {
		return true
	}
	return !g.strict && g.shadowed(pending, free, running, now)
}

// planSkip is skip's plan rule: nothing ended since the last pass run.
func (g *gate) planSkip(pending []*model.Job, free int, running []*model.Job, now int64) bool {
	for _, j := range running {
		if j.StartTime+j.TimeLimit <= now {
			return false
		}
	}
	if p := &g.plan; p.ok {
		if !p.still(now, g.window, g.res) {
			return false
		}
		for _, j := range pending[p.queued:] {
			if !p.blocked(g.need[j.ID-1], j.TimeLimit, now) {
				return false
			}
		}
		g.planSkips++
		return true
	}
	return false
}

// ran records a pass run at now, after its starts were applied: queued
// jobs are left pending, running are the jobs running now (those it
// started included), plan is the pass's outcome (StartTimes and
// StartNodes: each reservation's start and nodes), nodes the cluster
// (index: by name) with the pass's starts taken. skip's third rule reads
// the plan.
func (g *gate) ran(now int64, queued int, running []*model.Job, plan *sched.Plan, jobs []*model.Job, nodes []*model.Node, index *nodeIndex) {
	g.plan.ok = g.fixedPrio
	if !g.plan.ok {
		return
	}
	p := &g.plan
	p.at, p.queued, p.firstRes = now, queued, never
	p.instants, p.first = p.instants[:0], p.first[:0]
	for _, j := range running {
		p.instants = append(p.instants, j.StartTime+j.TimeLimit)
	}
	if len(g.pos) != len(nodes) {
		g.pos = make([]int, len(nodes))
	}
	for i, n := range nodes {
		g.pos[i] = -1
		if n.Usable() && n.AllocCPUs == 0 {
			g.pos[i] = len(p.first)
			p.first = append(p.first, never)
		}
	}
	for id, t := range plan.StartTimes {
		p.firstRes = min(p.firstRes, t)
		p.instants = append(p.instants, t+jobs[id-1].TimeLimit)
		for _, name := range plan.StartNodes[id] {
			if k := g.pos[index.of(name)]; k >= 0 {
				p.first[k] = min(p.first[k], t)
			}
		}
	}
	slices.Sort(p.instants)
	slices.Sort(p.first)
}

// changed forgets the last pass's plan: a job ended, so the instants and
// reservations it saw are no longer those of the queue.
func (g *gate) changed() { g.plan.ok = false }

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
// the whole queue (see cut).
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

// cut returns the jobs of pending (priorities set) the pass needs to
// see: those the scheduler orders up to the last one that fits the free
// CPUs. A pass only takes CPUs, so a job that needs more than are free
// at its start cannot start in it; and what a job that does not start
// leaves behind (its reservation, its reason) only bears on the jobs
// ordered after it. So the jobs after the last that fits change no start
// of the pass. Backfill passes over deep queues mostly reserve: the
// reservations the tail of the queue would make are never looked at.
// With fixed priorities the head's reservation proves more of the tail
// idle (shadowCut).
// With moving priorities the result is in a buffer reused by the next
// call.
func (g *gate) cut(pending []*model.Job, free int, running []*model.Job, now int64) []*model.Job {
	if g.strict {
		return pending[:g.take(pending, free)]
	}
	if g.fixedPrio { // ID order is the scheduler's
		return pending[:g.shadowCut(pending, free, running, now)]
	}
	// The scheduler's order in one partition: priority down, then ID.
	var last *model.Job
	for _, j := range pending {
		if g.need[j.ID-1] <= free && (last == nil || j.Priority < last.Priority || (j.Priority == last.Priority && j.ID > last.ID)) {
			last = j
		}
	}
	g.buf = g.buf[:0]
	for _, j := range pending {
		if last != nil && (j.Priority > last.Priority || (j.Priority == last.Priority && j.ID <= last.ID)) {
			g.buf = append(g.buf, j)
		}
	}
	return g.buf
}
