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
	var nodes map[model.JobID]string
	commit := func(m map[model.JobID]int64) {
		if _, err := d.Apply(fsm.TypeSchedule, &fsm.Schedule{Now: 1000, Planned: m, PlannedNodes: nodes}); err != nil {
			t.Fatal(err)
		}
	}
	plan := &sched.Plan{Reasons: map[model.JobID]string{1: "Resources", 2: "Priority"},
		StartTimes: map[model.JobID]int64{1: 2000, 2: 3000}, StartNodes: map[model.JobID][]string{1: {"n2", "n1"}, 2: {"n3"}}}
	got, nodes := c.plannedChanges(queued(st.Snapshot()), plan, 1000)
	if len(got) != 2 || got[1] != 2000 || got[2] != 3000 || nodes[1] != "n[1-2]" || nodes[2] != "n3" {
		t.Fatalf("first plan: %v on %v", got, nodes)
	}
	commit(got)
	if j := st.Snapshot().Job(1); j.SchedNodes != "n[1-2]" || j.PlannedStart != 2000 {
		t.Fatalf("job 1 planned at %d on %q", j.PlannedStart, j.SchedNodes)
	}
	plan.StartTimes = map[model.JobID]int64{1: 2100} // 1 moved, 2 no longer planned
	got, nodes = c.plannedChanges(queued(st.Snapshot()), plan, 1000)
	if len(got) != 2 || got[1] != 2100 || got[2] != 0 {
		t.Fatalf("moved + cleared: %v", got)
	}
	commit(got)
	if j := st.Snapshot().Job(2); j.SchedNodes != "" || j.PlannedStart != 0 {
		t.Fatalf("job 2 no longer planned, still at %d on %q", j.PlannedStart, j.SchedNodes)
	}
	plan.StartTimes = map[model.JobID]int64{1: 2200, 2: 3100}
	got, nodes = c.plannedChanges(queued(st.Snapshot()), plan, 1000)
	if len(got) != 1 || got[2] != 3100 {
		t.Fatalf("within bf_interval only the new plan goes out: %v", got)
	}
	commit(got)
	clk.Advance(31 * time.Second)
	got, nodes = c.plannedChanges(queued(st.Snapshot()), plan, 1031)
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
