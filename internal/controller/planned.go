package controller

import (
	"github.com/drover-hpc/drover/internal/hostlist"
	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/sched"
)

// plannedChanges is what to commit of the plan's start times: a job
// newly planned (or no longer planned) at once, so squeue --start shows
// it after the pass that found it; a planned start that merely moved at
// most every bf_interval, so a large queue does not rewrite thousands of
// job records every cycle.
// The planned nodes go with the start (a start whose nodes changed
// counts as moved). pending are the pass's input jobs (Plan.Reasons
// covers only those).
func (c *Controller) plannedChanges(pending []*model.Job, plan *sched.Plan, now int64) (map[model.JobID]int64, map[model.JobID]string) {
	pp := c.plannedPass(plan, now)
	for _, j := range pending {
		if j == nil {
			continue
		}
		if _, waits := plan.Reasons[j.ID]; waits {
			pp.job(j)
		}
	}
	return pp.done()
}

// plannedPass gathers plannedChanges job by job, so that the cycle's walk
// over the pending jobs for their reasons serves both (a second walk, and
// a second lookup of each reason, cost as much as the first).
type plannedPass struct {
	c      *Controller
	plan   *sched.Plan
	now    int64
	moveOK bool
	moved  bool
	out    map[model.JobID]int64
	nodes  map[model.JobID]string
}

func (c *Controller) plannedPass(plan *sched.Plan, now int64) *plannedPass {
	interval := c.svc.Settings().Scheduler.BfInterval
	return &plannedPass{c: c, plan: plan, now: now,
		moveOK: interval <= 0 || c.clock.Now().Sub(c.lastMoved) >= interval}
}

// job takes j, a job of the pass's input that the plan leaves waiting.
func (p *plannedPass) job(j *model.Job) {
	if j.State != model.JobPending {
		return
	}
	id := j.ID
	want, have := p.plan.StartTimes[id], j.PlannedStart
	if have != 0 && want != 0 && have > p.now && !p.moveOK {
		return // paced: no node list to build for it this pass
	}
	wantNodes := ""
	if want != 0 {
		wantNodes = hostlist.Compress(p.plan.StartNodes[id])
	}
	if want == have && wantNodes == j.SchedNodes {
		return
	}
	if p.out == nil {
		p.out = map[model.JobID]int64{}
	}
	p.out[id] = want
	if wantNodes != "" {
		if p.nodes == nil {
			p.nodes = map[model.JobID]string{}
		}
		p.nodes[id] = wantNodes
	}
	p.moved = p.moved || (have != 0 && want != 0)
}

// done returns the changes and, when a planned start moved, starts the
// next bf_interval.
func (p *plannedPass) done() (map[model.JobID]int64, map[model.JobID]string) {
	if p.moved {
		p.c.lastMoved = p.c.clock.Now()
	}
	return p.out, p.nodes
}
