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
	interval := c.svc.Settings().Scheduler.BfInterval
	moveOK := interval <= 0 || c.clock.Now().Sub(c.lastMoved) >= interval
	var out map[model.JobID]int64
	var nodes map[model.JobID]string
	moved := false
	for _, j := range pending {
		if j == nil {
			continue
		}
		id := j.ID
		if _, waits := plan.Reasons[id]; !waits || j.State != model.JobPending {
			continue
		}
		want, have := plan.StartTimes[id], j.PlannedStart
		if have != 0 && want != 0 && have > now && !moveOK {
			continue // paced: no node list to build for it this pass
		}
		wantNodes := ""
		if want != 0 {
			wantNodes = hostlist.Compress(plan.StartNodes[id])
		}
		if want == have && wantNodes == j.SchedNodes {
			continue
		}
		if out == nil {
			out = map[model.JobID]int64{}
		}
		out[id] = want
		if wantNodes != "" {
			if nodes == nil {
				nodes = map[model.JobID]string{}
			}
			nodes[id] = wantNodes
		}
		moved = moved || (have != 0 && want != 0)
	}
	if moved {
		c.lastMoved = c.clock.Now()
	}
	return out, nodes
}
