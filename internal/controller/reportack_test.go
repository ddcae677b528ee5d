package controller

import (
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	pb "github.com/drover-hpc/drover/api/drover/v1"
	"github.com/drover-hpc/drover/internal/auth"
	"github.com/drover-hpc/drover/internal/clock"
	"github.com/drover-hpc/drover/internal/fsm"
	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/service"
	"github.com/drover-hpc/drover/internal/state"
)

// ackScript sends its messages, then waits (bounded) until the controller
// has sent want ReportAcks before ending the stream.
type ackScript struct {
	in   []*pb.AgentMessage
	want int

	mu   sync.Mutex
	out  []*pb.ControllerMessage
	acks chan struct{}
}

func (s *ackScript) Send(m *pb.ControllerMessage) error {
	s.mu.Lock()
	s.out = append(s.out, m)
	s.mu.Unlock()
	if m.GetReportAck() != nil {
		s.acks <- struct{}{}
	}
	return nil
}

func (s *ackScript) Recv() (*pb.AgentMessage, error) {
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
	svc := service.New(nil, st, d, auth.NewVerifier("tok"), clock.Real{}, c, settings)
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
	s := &ackScript{want: 2, acks: make(chan struct{}, 8), in: []*pb.AgentMessage{
		{Msg: &pb.AgentMessage_Register{Register: &pb.Register{Node: "n1", Cpus: 2, Memory: 1000, Running: []uint32{1}}}},
		{Msg: &pb.AgentMessage_JobStarted{JobStarted: &pb.JobStarted{JobId: 1, Run: run}}},
		{Msg: &pb.AgentMessage_StepEnded{StepEnded: &pb.StepEnded{JobId: 1, StepId: 4, Node: "n1", Run: run}}},
	}}
	if err := c.ServeAgent(s, "127.0.0.1", "n1"); err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var got []*pb.ReportAck
	regAcks := false
	for _, m := range s.out {
		if a := m.GetReportAck(); a != nil {
			got = append(got, a)
		}
		if r := m.GetRegistered(); r != nil {
			regAcks = r.AcksReports
		}
	}
	if !regAcks {
		t.Error("Registered does not say the controller confirms reports")
	}
	if len(got) != 2 || !got[0].Started || got[0].JobId != 1 || got[0].Run != run ||
		got[1].Started || got[1].JobId != 1 || got[1].StepId != 4 || got[1].Run != run {
		t.Errorf("acks %v", got)
	}
}
