package controller

import (
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/drover-hpc/drover/internal/clock"
	"github.com/drover-hpc/drover/internal/fsm"
	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/sched"
	"github.com/drover-hpc/drover/internal/service"
	"github.com/drover-hpc/drover/internal/state"
)

// New planned starts and cleared ones are committed at once; a planned
// start that moved waits for bf_interval.
func TestPlannedChangesPacing(t *testing.T) {
	st := state.New(1)
	d := &direct{f: fsm.New(st, nil)}
	clk := clock.NewFake(time.Unix(1000, 0))
	c := New(slog.New(slog.NewTextHandler(io.Discard, nil)), st, d, clk)
	c.SetService(service.New(slog.New(slog.NewTextHandler(io.Discard, nil)), st, d, clk, nil,
		&service.Settings{Scheduler: service.SchedulerSettings{Backfill: true, BfInterval: 30 * time.Second}}))
	spec := &model.JobSpec{Name: "j", Script: "#!/bin/sh\n", TimeLimit: model.Unset, MinNodes: model.Unset,
		NTasks: model.Unset, CPUsPerTask: model.Unset, MemPerNode: model.Unset}
	for range 2 {
		if _, err := d.Apply(fsm.TypeSubmit, &fsm.Submit{Spec: spec, Partition: "p", User: "u", Now: 1}); err != nil {
			t.Fatal(err)
		}
	}
	commit := func(m map[model.JobID]int64) {
		if _, err := d.Apply(fsm.TypeSchedule, &fsm.Schedule{Now: 1000, Planned: m}); err != nil {
			t.Fatal(err)
		}
	}
	plan := &sched.Plan{Reasons: map[model.JobID]string{1: "Resources", 2: "Priority"},
		StartTimes: map[model.JobID]int64{1: 2000, 2: 3000}}
	got := c.plannedChanges(queued(st.Snapshot()), plan, 1000)
	if len(got) != 2 || got[1] != 2000 || got[2] != 3000 {
		t.Fatalf("first plan: %v", got)
	}
	commit(got)
	plan.StartTimes = map[model.JobID]int64{1: 2100} // 1 moved, 2 no longer planned
	got = c.plannedChanges(queued(st.Snapshot()), plan, 1000)
	if len(got) != 2 || got[1] != 2100 || got[2] != 0 {
		t.Fatalf("moved + cleared: %v", got)
	}
	commit(got)
	plan.StartTimes = map[model.JobID]int64{1: 2200, 2: 3100}
	got = c.plannedChanges(queued(st.Snapshot()), plan, 1000)
	if len(got) != 1 || got[2] != 3100 {
		t.Fatalf("within bf_interval only the new plan goes out: %v", got)
	}
	commit(got)
	clk.Advance(31 * time.Second)
	got = c.plannedChanges(queued(st.Snapshot()), plan, 1031)
	if len(got) != 1 || got[1] != 2200 {
		t.Fatalf("after bf_interval the moved one goes out: %v", got)
	}
}

// queued is what cycle hands the pass: the snapshot's queued jobs.
func queued(snap *state.Snapshot) []*model.Job {
	var out []*model.Job
	snap.EachQueued(func(j *model.Job) bool {
		out = append(out, j)
		return true
	})
	return out
}
