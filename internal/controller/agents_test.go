package controller

import (
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/drover-hpc/drover/internal/clock"
	"github.com/drover-hpc/drover/internal/fsm"
	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/nodemsg"
	"github.com/drover-hpc/drover/internal/service"
	"github.com/drover-hpc/drover/internal/state"
)

// script is an agent's side of a stream: what it sends, then EOF; what
// the controller sends back is collected.
type script struct {
	in  []nodemsg.FromNode
	out []nodemsg.ToNode
}

func (s *script) Send(m nodemsg.ToNode) error { s.out = append(s.out, m); return nil }
func (s *script) Recv() (nodemsg.FromNode, error) {
	if len(s.in) == 0 {
		return nil, io.EOF
	}
	m := s.in[0]
	s.in = s.in[1:]
	return m, nil
}

// A node speaks only for itself: the start or end it reports of a job
// that runs on another node changes nothing, and sstat answers it gives
// for another node are dropped.
func TestAgentActsOnlyAsItsNode(t *testing.T) {
	st := state.New(1)
	d := &direct{f: fsm.New(st, nil)}
	c := New(slog.New(slog.NewTextHandler(io.Discard, nil)), st, d, clock.Real{})
	settings := &service.Settings{
		ClusterName: "c", MaxArraySize: 1001, FirstJobID: 1, KillWait: 30, SlurmdTimeout: 300, MinJobAge: 300,
		Nodes: []*model.Node{{Name: "n1", CPUs: 2, Memory: 1000}, {Name: "n2", CPUs: 2, Memory: 1000}},
		Partitions: []*model.Partition{{Name: "p", Nodes: []string{"n1", "n2"}, Default: true, MaxTime: model.Unlimited,
			DefaultTime: model.Unset, MaxNodes: model.Unlimited}},
	}
	svc := service.New(nil, st, d, clock.Real{}, c, settings)
	if err := svc.InstallConfig(settings); err != nil {
		t.Fatal(err)
	}
	c.SetService(svc)
	now := time.Now().Unix()
	for _, n := range []string{"n1", "n2"} {
		if _, err := d.Apply(fsm.TypeNodeRegister, &fsm.NodeRegister{Node: n, CPUs: 2, Memory: 1000, Now: now}); err != nil {
			t.Fatal(err)
		}
	}
	spec := &model.JobSpec{Name: "j", Script: "#!/bin/sh\n", TimeLimit: model.Unset, MinNodes: model.Unset,
		NTasks: model.Unset, CPUsPerTask: model.Unset, MemPerNode: model.Unset}
	if _, err := d.Apply(fsm.TypeSubmit, &fsm.Submit{Spec: spec, Partition: "p", User: "u", Now: now}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Apply(fsm.TypeSchedule, &fsm.Schedule{Now: now, Starts: []fsm.StartEntry{{Job: 1, Alloc: []model.NodeAlloc{{Node: "n1", CPUs: 1}}}}}); err != nil {
		t.Fatal(err)
	}
	if j := st.Snapshot().Job(1); j == nil || j.State != model.JobRunning {
		t.Fatalf("job 1 not running on n1: %+v", j)
	}
	id, replies := c.stats.open()
	defer c.stats.close(id)
	s := &script{in: []nodemsg.FromNode{
		&nodemsg.Register{Node: "n2", CPUs: 2, Memory: 1000},
		&nodemsg.JobStarted{Job: 1},
		&nodemsg.JobEnded{Job: 1, State: model.JobCompleted, EndTime: now},
		&nodemsg.StatReply{RequestID: id, Steps: []nodemsg.StepStat{{Job: 1, Node: "n1", NTasks: 1}, {Job: 1, Node: "n2", NTasks: 1}}},
	}}
	if err := c.ServeAgent(s, "127.0.0.1", "n2"); err != nil {
		t.Fatal(err)
	}
	if j := st.Snapshot().Job(1); j.State != model.JobRunning {
		t.Errorf("n2 ended n1's job: %s", j.State)
	}
	c.mu.Lock()
	_, acked := c.acked[1]
	c.mu.Unlock()
	if acked {
		t.Error("n2 confirmed the launch of n1's job")
	}
	select {
	case r := <-replies:
		if len(r.Steps) != 1 || r.Steps[0].Node != "n2" {
			t.Errorf("n2 answered for other nodes: %+v", r.Steps)
		}
	default:
		t.Error("n2's own answer was lost")
	}
	// The registration as another node than the certificate's is refused.
	other := &script{in: []nodemsg.FromNode{&nodemsg.Register{Node: "n1", CPUs: 2, Memory: 1000}}}
	if err := c.ServeAgent(other, "127.0.0.1", "n2"); err == nil {
		t.Error("n2's certificate registered as n1")
	}
}
