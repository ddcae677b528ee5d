package controller

import (
	"context"
	"errors"
	"time"

	"github.com/drover-hpc/drover/internal/fsm"
	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/nodemsg"
	"github.com/drover-hpc/drover/internal/raftnode"
	"github.com/drover-hpc/drover/internal/sched"
	"github.com/drover-hpc/drover/internal/sched/gang"
	"github.com/drover-hpc/drover/internal/state"
)

// sliceLoop applies the gang slicer (package sched/gang): every half
// second it decides which scheduler-suspended jobs resume (preemption
// victims whose CPUs are free again, the next gang slice) and which gang
// jobs whose slice is over give way, commits that as one Slice command
// and freezes or thaws the processes. It needs nothing but the store,
// the clock and the committer, so it can be started wherever the leader's
// loops are.
func (c *Controller) sliceLoop(ctx context.Context) {
	tick := c.clock.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		c.sliceOnce(c.clock.Now().Unix())
	}
}

// sliceOnce makes one slicing decision at now and applies it.
func (c *Controller) sliceOnce(now int64) {
	snap := c.store.Snapshot()
	in, ok := sliceInput(snap, c.svc.SchedConfig().Preempt, now)
	if !ok {
		return
	}
	d := gang.Decide(in)
	if len(d.Suspend) == 0 && len(d.Resume) == 0 {
		return
	}
	res, err := c.raft.Apply(fsm.TypeSlice, &fsm.Slice{Suspend: d.Suspend, Resume: d.Resume, Now: now})
	if err != nil {
		if !errors.Is(err, raftnode.ErrNoSpace) {
			c.log.Error("commit time slice", "err", err)
		}
		return
	}
	r := res.(fsm.SliceResult)
	c.Suspend(r.Suspended, true)
	c.Suspend(r.Resumed, false)
	if len(r.Suspended)+len(r.Resumed) > 0 {
		c.log.Debug("time slice", "suspended", r.Suspended, "resumed", r.Resumed)
	}
}

// sliceInput describes the jobs the slicer may move; false when none is
// suspended by the scheduler (then there is nothing to resume and no gang
// job waits for its turn).
func sliceInput(snap *state.Snapshot, pc sched.Preempt, now int64) (gang.Input, bool) {
	in := gang.Input{Busy: map[string]model.Bitmap{}, Used: map[string]int{}, Size: map[string]int{},
		Now: now, Slice: pc.TimeSlice}
	if in.Slice <= 0 {
		in.Slice = 30
	}
	var jobs []*model.Job
	waiting := false
	snap.EachAllocated(func(j *model.Job) bool {
		if j.State == model.JobRunning && !j.Completing && (j.SchedSuspended || !j.Suspended) {
			jobs = append(jobs, j)
			waiting = waiting || j.SchedSuspended
		}
		return true
	})
	if !waiting {
		return in, false
	}
	for _, n := range snap.Nodes() {
		in.Busy[n.Name], in.Used[n.Name], in.Size[n.Name] = n.AllocCores, n.AllocCPUs, n.CPUs
	}
	for _, j := range jobs {
		part := snap.Partition(j.Partition)
		sliced := pc.Gang && part != nil && part.GangShare() >= 2
		if !j.SchedSuspended && !sliced {
			continue // holds its CPUs: part of Busy
		}
		g := gang.Job{ID: j.ID, Alloc: j.Alloc, Running: !j.SchedSuspended, Sliced: sliced, Since: max(j.StartTime, j.SliceTime)}
		if part != nil {
			g.Rank = part.PriorityTier
		}
		if j.SchedSuspended {
			if p := snap.Job(j.PreemptedFor); p != nil && p.State == model.JobPending {
				g.Blocked = true
			}
		} else {
			for _, a := range j.Alloc {
				in.Busy[a.Node] = in.Busy[a.Node].AndNot(a.CPUIDs)
				in.Used[a.Node] -= a.CPUs
			}
		}
		in.Jobs = append(in.Jobs, g)
	}
	return in, true
}

// suspended freezes the victims a schedule suspended (PreemptMode=SUSPEND
// or a gang job's turn); the preemptor starts on their CPUs next cycle.
func (c *Controller) suspended(ids []model.JobID) {
	if len(ids) == 0 {
		return
	}
	c.Suspend(ids, true)
	c.log.Info("suspended for preemption", "jobs", ids)
	c.Kick()
}

// resumed thaws the jobs a preemptor's end resumed.
func (c *Controller) resumed(res any) {
	if r, ok := res.(fsm.JobEndedResult); ok && len(r.Resumed) > 0 {
		c.Suspend(r.Resumed, false)
	}
}

// qosTable is the QOS table preempt/qos reads (nil otherwise).
func qosTable(snap *state.Snapshot, pc sched.Preempt) map[string]*model.QOS {
	if pc.Type != "qos" {
		return nil
	}
	if db, _ := snap.AcctDB(); db != nil {
		return db.QOS
	}
	return nil
}

// TimeLimitChanged tells running jobs' nodes their new time limit
// (scontrol update TimeLimit=), which the agents enforce.
func (c *Controller) TimeLimitChanged(jobs []model.JobID) {
	snap := c.store.Snapshot()
	var running []model.JobID
	for _, id := range jobs {
		if j := snap.Job(id); j != nil && j.State == model.JobRunning && !j.Completing {
			running = append(running, id)
		}
	}
	c.toJobNodes(running, func(j *model.Job) nodemsg.ToNode {
		return &nodemsg.TimeLimit{Job: j.ID, Run: j.Run(), Limit: j.TimeLimit}
	})
}
