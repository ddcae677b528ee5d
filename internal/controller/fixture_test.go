package controller

import (
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/drover-hpc/drover/internal/clock"
	"github.com/drover-hpc/drover/internal/fsm"
	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/service"
	"github.com/drover-hpc/drover/internal/state"
)

// oneJobFixture is a controller over st with one 2-CPU node n1 in
// partition p and job 1 running on it with cpus CPUs, committing through
// commit. It returns the controller and the job's run.
func oneJobFixture(t *testing.T, st *state.Store, commit service.Committer, cpus int) (*Controller, uint32) {
	t.Helper()
	c := New(slog.New(slog.NewTextHandler(io.Discard, nil)), st, commit, clock.Real{})
	settings := &service.Settings{
		ClusterName: "c", MaxArraySize: 1001, FirstJobID: 1, KillWait: 30, SlurmdTimeout: 300, MinJobAge: 300,
		Nodes: []*model.Node{{Name: "n1", CPUs: 2, Memory: 1000}},
		Partitions: []*model.Partition{{Name: "p", Nodes: []string{"n1"}, Default: true, MaxTime: model.Unlimited,
			DefaultTime: model.Unset, MaxNodes: model.Unlimited}},
	}
	svc := service.New(nil, st, commit, clock.Real{}, c, settings)
	if err := svc.InstallConfig(settings); err != nil {
		t.Fatal(err)
	}
	c.SetService(svc)
	now := time.Now().Unix()
	if _, err := commit.Apply(fsm.TypeNodeRegister, &fsm.NodeRegister{Node: "n1", CPUs: 2, Memory: 1000, Now: now}); err != nil {
		t.Fatal(err)
	}
	spec := &model.JobSpec{Name: "j", Script: "#!/bin/sh\n", TimeLimit: model.Unset, MinNodes: model.Unset,
		NTasks: model.Unset, CPUsPerTask: model.Unset, MemPerNode: model.Unset}
	if _, err := commit.Apply(fsm.TypeSubmit, &fsm.Submit{Spec: spec, Partition: "p", User: "u", Now: now}); err != nil {
		t.Fatal(err)
	}
	start := fsm.StartEntry{Job: 1, Alloc: []model.NodeAlloc{{Node: "n1", CPUs: cpus}}}
	if _, err := commit.Apply(fsm.TypeSchedule, &fsm.Schedule{Now: now, Starts: []fsm.StartEntry{start}}); err != nil {
		t.Fatal(err)
	}
	return c, st.Snapshot().Job(1).Run()
}
