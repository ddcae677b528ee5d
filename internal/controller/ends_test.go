package controller

import (
	"testing"
	"time"

	"github.com/drover-hpc/drover/internal/fsm"
	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/nodemsg"
	"github.com/drover-hpc/drover/internal/state"
)

// TestEndsCommittedTogether: ends that arrive back to back (one of them
// repeated) are each committed once and acknowledged, and the message
// after them is handled too.
func TestEndsCommittedTogether(t *testing.T) {
	st := state.New(1)
	d := &direct{f: fsm.New(st, nil)}
	c, run := oneJobFixture(t, st, d, 1)
	now := time.Now().Unix()
	spec := &model.JobSpec{Name: "j2", Script: "#!/bin/sh\n", TimeLimit: model.Unset, MinNodes: model.Unset,
		NTasks: model.Unset, CPUsPerTask: model.Unset, MemPerNode: model.Unset}
	if _, err := d.Apply(fsm.TypeSubmit, &fsm.Submit{Spec: spec, Partition: "p", User: "u", Now: now}); err != nil {
		t.Fatal(err)
	}
	start := fsm.StartEntry{Job: 2, Alloc: []model.NodeAlloc{{Node: "n1", CPUs: 1}}}
	if _, err := d.Apply(fsm.TypeSchedule, &fsm.Schedule{Now: now, Starts: []fsm.StartEntry{start}}); err != nil {
		t.Fatal(err)
	}
	run2 := st.Snapshot().Job(2).Run()
	s := &ackScript{want: 4, acks: make(chan struct{}, 16), in: []nodemsg.FromNode{
		&nodemsg.Register{Node: "n1", CPUs: 2, Memory: 1000, Ended: []model.JobID{1, 2}},
		&nodemsg.JobEnded{Job: 1, Run: run, ExitCode: 0},
		&nodemsg.JobEnded{Job: 2, Run: run2, ExitCode: 3},
		&nodemsg.JobEnded{Job: 1, Run: run, ExitCode: 0}, // a resend
		&nodemsg.StepEnded{Job: 2, Step: 0, Run: run2},
	}}
	if err := c.ServeAgent(s, "127.0.0.1", "n1"); err != nil {
		t.Fatal(err)
	}
	snap := st.Snapshot()
	if j := snap.Job(1); j == nil || j.State != model.JobCompleted {
		t.Errorf("job 1: %+v, want COMPLETED", j)
	}
	if j := snap.Job(2); j == nil || j.State != model.JobFailed || j.ExitCode != 3 {
		t.Errorf("job 2: %+v, want FAILED with exit code 3", j)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var ends []model.JobID
	reportAcks := 0
	for _, m := range s.out {
		switch m := m.(type) {
		case *nodemsg.EndAck:
			ends = append(ends, m.Job)
		case *nodemsg.ReportAck:
			reportAcks++
		}
	}
	if len(ends) != 3 || ends[0] != 1 || ends[1] != 2 || ends[2] != 1 {
		t.Errorf("EndAcks for %v, want [1 2 1] (in the order received)", ends)
	}
	if reportAcks != 1 {
		t.Errorf("%d ReportAcks, want 1 (the step end after the ends)", reportAcks)
	}
}
