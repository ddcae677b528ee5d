package controller

import (
	"context"
	"time"

	"github.com/drover-hpc/drover/internal/fsm"
	"github.com/drover-hpc/drover/internal/model"
)

// priorityLoop recalculates multifactor priorities every
// PriorityCalcPeriod, not on every read: age and fair-share change with
// time, and the scheduler orders by the committed values. With
// priority/basic it only sleeps.
func (c *Controller) priorityLoop(ctx context.Context) {
	for {
		period := time.Duration(c.svc.Settings().Priority.CalcPeriod) * time.Second
		if period <= 0 {
			period = 5 * time.Minute
		}
		t := c.clock.NewTimer(period)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		if c.svc.Settings().Priority.Multifactor {
			c.recalcPriorities()
		}
	}
}

// recalcPriorities brings fair-share usage up to now and commits the new
// priorities of pending jobs that changed, as one command.
func (c *Controller) recalcPriorities() {
	snap := c.store.Snapshot()
	now := c.clock.Now().Unix()
	usage := c.svc.AccrueUsage(snap, now)
	p := c.svc.NewPrioritizer(snap, usage)
	cmd := &fsm.Priorities{Jobs: map[model.JobID]uint32{}, Usage: usage, UsageAt: now}
	snap.EachActive(func(j *model.Job) bool {
		if j.State != model.JobPending || j.Priority == 0 || j.PrioritySet {
			return true
		}
		if pr := p.Factors(j, now).Priority; pr != j.Priority {
			cmd.Jobs[j.ID] = pr
		}
		return true
	})
	if _, err := c.raft.Apply(fsm.TypePriorities, cmd); err != nil {
		c.log.Error("commit priorities", "err", err)
		return
	}
	if len(cmd.Jobs) > 0 {
		c.Kick()
	}
}
