package controller

import (
	"testing"
	"time"

	"github.com/drover-hpc/drover/internal/fsm"
	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/nodemsg"
	"github.com/drover-hpc/drover/internal/state"
)

// TestNoWorkForUnregisteredNode: a controller that begins leading gives
// no new job to a node its state shows up and responding until the node's
// agent registers with it (a launch there would reach nobody, and the
// registration would requeue the job); then it does.
func TestNoWorkForUnregisteredNode(t *testing.T) {
	st := state.New(1)
	d := &direct{f: fsm.New(st, nil)}
	c, _ := oneJobFixture(t, st, d, 1)
	spec := &model.JobSpec{Name: "j2", Script: "#!/bin/sh\n", TimeLimit: model.Unset, MinNodes: model.Unset,
		NTasks: model.Unset, CPUsPerTask: model.Unset, MemPerNode: model.Unset}
	if _, err := d.Apply(fsm.TypeSubmit, &fsm.Submit{Spec: spec, Partition: "p", User: "u", Now: time.Now().Unix()}); err != nil {
		t.Fatal(err)
	}
	c.mu.Lock()
	c.unregistered = map[string]bool{"n1": true} // as startTerm leaves it
	c.mu.Unlock()
	c.cycle()
	if j := st.Snapshot().Job(2); j.State != model.JobPending {
		t.Fatalf("job 2 is %v on a node whose agent has not registered", j.State)
	}
	if n := st.Snapshot().Node("n1"); !n.Responding {
		t.Fatal("the pass changed the state's node")
	}
	c.installAgent(&agentConn{node: "n1", out: make(chan nodemsg.ToNode, 16), done: make(chan struct{})}, nil)
	c.cycle()
	if j := st.Snapshot().Job(2); j.State != model.JobRunning {
		t.Fatalf("job 2 is %v once the node's agent registered", j.State)
	}
}
