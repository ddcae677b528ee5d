package controller

import (
	"io"
	"log/slog"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/drover-hpc/drover/internal/clock"
	"github.com/drover-hpc/drover/internal/fsm"
	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/service"
	"github.com/drover-hpc/drover/internal/state"
)

// inMemory commits as the leader's raftnode does a command it holds the
// body of (a Group, and a Schedule riding in one): the FSM applies the
// very structure the controller built, never a decoded copy, so whatever
// of a plan the command points into ends up in the state.
type inMemory struct {
	f     *fsm.FSM
	index uint64
}

func (m *inMemory) Apply(t fsm.Type, body any) (any, error) {
	if _, err := fsm.Encode(t, body); err != nil {
		return nil, err
	}
	m.index++
	res := m.f.ApplyDecoded(m.index, t, body)
	if err, ok := res.(error); ok {
		return nil, err
	}
	return res, nil
}

// TestPassesKeepNoPlanMemory: the controller lends every pass the last
// one's memory (sched.Scratch), and the plan a pass returns is
// overwritten by the next. Two passes with different starts and planned
// nodes: what the first published (the started job's allocation in the
// state, the PLANNED nodes sinfo reads) must be as the first pass left it.
func TestPassesKeepNoPlanMemory(t *testing.T) {
	st := state.New(1)
	m := &inMemory{f: fsm.New(st, nil)}
	clk := clock.NewFake(time.Unix(1_000_000, 0))
	c := New(slog.New(slog.NewTextHandler(io.Discard, nil)), st, m, clk)
	settings := &service.Settings{
		ClusterName: "c", MaxArraySize: 1001, FirstJobID: 1, KillWait: 30, SlurmdTimeout: 300, MinJobAge: 300,
		Nodes: []*model.Node{{Name: "n1", CPUs: 2, Memory: 1000}, {Name: "n2", CPUs: 2, Memory: 1000},
			{Name: "n3", CPUs: 2, Memory: 1000}},
		Partitions: []*model.Partition{{Name: "p", Nodes: []string{"n1", "n2", "n3"}, Default: true,
			MaxTime: model.Unlimited, DefaultTime: model.Unset, MaxNodes: model.Unlimited}},
		Scheduler: service.SchedulerSettings{Backfill: true, BfWindow: 86400, BfResolution: 60},
	}
	svc := service.New(nil, st, m, clk, c, settings)
	if err := svc.InstallConfig(settings); err != nil {
		t.Fatal(err)
	}
	c.SetService(svc)
	now := clk.Now().Unix()
	for _, n := range []string{"n1", "n2", "n3"} {
		if _, err := m.Apply(fsm.TypeNodeRegister, &fsm.NodeRegister{Node: n, CPUs: 2, Memory: 1000, Now: now}); err != nil {
			t.Fatal(err)
		}
	}
	submit := func(cpus, nodes int, limit int64, on ...string) {
		t.Helper()
		spec := &model.JobSpec{Name: "j", Script: "#!/bin/sh\n", TimeLimit: limit, MinNodes: nodes,
			NTasks: model.Unset, CPUsPerTask: cpus, MemPerNode: model.Unset, ReqNodes: on}
		sub := &fsm.Submit{Spec: spec, Partition: "p", User: "u", Now: now, TimeLimit: limit}
		if _, err := m.Apply(fsm.TypeSubmit, sub); err != nil {
			t.Fatal(err)
		}
	}

	// Pass 1: job 1 takes n1 for an hour; job 2, which needs all three
	// nodes, is planned on them at its end.
	submit(2, 1, 3600)
	submit(2, 3, 3600)
	c.cycle()
	j1 := st.Snapshot().Job(1)
	if j1.State != model.JobRunning || len(j1.Alloc) != 1 || j1.Alloc[0].Node != "n1" {
		t.Fatalf("pass 1: job 1 %v on %+v, want running on n1", j1.State, j1.Alloc)
	}
	published := c.PlannedNodes()
	want := map[string]bool{"n1": true, "n2": true, "n3": true}
	if !maps.Equal(published, want) {
		t.Fatalf("pass 1 planned %v, want %v", published, want)
	}

	// Pass 2: job 2 gone; job 3 (n1 only) is planned on n1 alone, and
	// job 4 starts now on n2.
	if _, err := m.Apply(fsm.TypeCancel, &fsm.Cancel{Jobs: []model.JobID{2}, Now: now}); err != nil {
		t.Fatal(err)
	}
	submit(2, 1, 3600, "n1")
	submit(2, 1, 600)
	c.cycle()
	snap := st.Snapshot()
	if j4 := snap.Job(4); j4.State != model.JobRunning || len(j4.Alloc) != 1 || j4.Alloc[0].Node != "n2" {
		t.Fatalf("pass 2: job 4 %v on %+v, want running on n2", j4.State, j4.Alloc)
	}
	if got := c.PlannedNodes(); !maps.Equal(got, map[string]bool{"n1": true}) {
		t.Fatalf("pass 2 planned %v, want n1 alone", got)
	}

	// What pass 1 published is still pass 1's.
	if j1 := snap.Job(1); !slices.Equal(nodeNames(j1.Alloc), []string{"n1"}) {
		t.Errorf("job 1's allocation became %+v after the next pass", j1.Alloc)
	}
	if !maps.Equal(published, want) {
		t.Errorf("pass 1's PLANNED nodes became %v after the next pass", published)
	}
}

func nodeNames(alloc []model.NodeAlloc) []string {
	var out []string
	for _, a := range alloc {
		out = append(out, a.Node)
	}
	return out
}
