package controller

import (
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/drover-hpc/drover/internal/clock"
	"github.com/drover-hpc/drover/internal/fsm"
	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/nodemsg"
	"github.com/drover-hpc/drover/internal/service"
	"github.com/drover-hpc/drover/internal/state"
)

// ackScript sends its messages, then waits (bounded) until the controller
// has sent want ReportAcks before ending the stream.
type ackScript struct {
	in   []nodemsg.FromNode
	want int

	mu   sync.Mutex
	out  []nodemsg.ToNode
	acks chan struct{}
}

func (s *ackScript) Send(m nodemsg.ToNode) error {
	s.mu.Lock()
	s.out = append(s.out, m)
	s.mu.Unlock()
	if _, ok := m.(*nodemsg.ReportAck); ok {
		s.acks <- struct{}{}
	}
	return nil
}

func (s *ackScript) Recv() (nodemsg.FromNode, error) {
	if len(s.in) > 0 {
		m := s.in[0]
		s.in = s.in[1:]
		return m, nil
	}
	for range s.want {
		select {
		case <-s.acks:
		case <-time.After(10 * time.Second):
			return nil, io.EOF // the test reports what is missing
		}
	}
	s.want = 0
	return nil, io.EOF
}

// TestReportsAcked: the controller confirms a JobStarted and a committed
// StepEnded with ReportAck (the agent resends them until then), and says
// so at registration.
func TestReportsAcked(t *testing.T) {
	st := state.New(1)
	d := &direct{f: fsm.New(st, nil)}
	c := New(slog.New(slog.NewTextHandler(io.Discard, nil)), st, d, clock.Real{})
	settings := &service.Settings{
		ClusterName: "c", MaxArraySize: 1001, FirstJobID: 1, KillWait: 30, SlurmdTimeout: 300, MinJobAge: 300,
		Nodes: []*model.Node{{Name: "n1", CPUs: 2, Memory: 1000}},
		Partitions: []*model.Partition{{Name: "p", Nodes: []string{"n1"}, Default: true, MaxTime: model.Unlimited,
			DefaultTime: model.Unset, MaxNodes: model.Unlimited}},
	}
	svc := service.New(nil, st, d, clock.Real{}, c, settings)
	if err := svc.InstallConfig(settings); err != nil {
		t.Fatal(err)
	}
	c.SetService(svc)
	now := time.Now().Unix()
	if _, err := d.Apply(fsm.TypeNodeRegister, &fsm.NodeRegister{Node: "n1", CPUs: 2, Memory: 1000, Now: now}); err != nil {
		t.Fatal(err)
	}
	spec := &model.JobSpec{Name: "j", Script: "#!/bin/sh\n", TimeLimit: model.Unset, MinNodes: model.Unset,
		NTasks: model.Unset, CPUsPerTask: model.Unset, MemPerNode: model.Unset}
	if _, err := d.Apply(fsm.TypeSubmit, &fsm.Submit{Spec: spec, Partition: "p", User: "u", Now: now}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Apply(fsm.TypeSchedule, &fsm.Schedule{Now: now, Starts: []fsm.StartEntry{{Job: 1, Alloc: []model.NodeAlloc{{Node: "n1", CPUs: 1}}}}}); err != nil {
		t.Fatal(err)
	}
	run := st.Snapshot().Job(1).Run()
	s := &ackScript{want: 2, acks: make(chan struct{}, 8), in: []nodemsg.FromNode{
		&nodemsg.Register{Node: "n1", CPUs: 2, Memory: 1000, Running: []model.JobID{1}},
		&nodemsg.JobStarted{Job: 1, Run: run},
		&nodemsg.StepEnded{Job: 1, Step: 4, Run: run},
	}}
	if err := c.ServeAgent(s, "127.0.0.1", "n1"); err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var got []*nodemsg.ReportAck
	regAcks := false
	for _, m := range s.out {
		switch m := m.(type) {
		case *nodemsg.ReportAck:
			got = append(got, m)
		case *nodemsg.Registered:
			regAcks = m.AcksReports
		}
	}
	if !regAcks {
		t.Error("Registered does not say the controller confirms reports")
	}
	if len(got) != 2 || !got[0].Started || got[0].Job != 1 || got[0].Run != run ||
		got[1].Started || got[1].Job != 1 || got[1].Step != 4 || got[1].Run != run {
		t.Errorf("acks %v", got)
	}
}
