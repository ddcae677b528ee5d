package nodeproto

import (
	"io"
	"reflect"
	"testing"

	pb "github.com/drover-hpc/drover/api/drover/v1"
	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/nodemsg"
)

// Every message the controller sends has a wire form, and the job goes
// with the detail its kind needs: all of it to launch a batch script,
// without environment or steps with a step.
func TestEncodeEveryControllerMessage(t *testing.T) {
	j := &model.Job{ID: 7, Spec: &model.JobSpec{Script: "#!/bin/sh\n", Env: []string{"A=1"}, WorkDir: "/w"},
		Steps: []*model.Step{{ID: 0}}}
	msgs := []nodemsg.ToNode{
		&nodemsg.Registered{Cluster: "c", Expected: []nodemsg.JobRun{{Job: 7, Run: 2}}},
		&nodemsg.Launch{Job: j}, &nodemsg.SignalJob{Job: 7, Suspend: true}, &nodemsg.EndAck{Job: 7, Run: 2},
		&nodemsg.LaunchStep{Job: j, Step: &model.Step{ID: 1}}, &nodemsg.SignalStep{Job: 7, Step: 1},
		&nodemsg.AttachIO{Job: 7, Step: 1, Addr: "a"}, &nodemsg.FetchFile{Job: j, Dest: "/d"},
		&nodemsg.StatRequest{RequestID: 3, Job: 7}, &nodemsg.ReportAck{Job: 7, Step: 1, Run: 2},
		&nodemsg.TimeLimit{Job: 7, Run: 2, Limit: 60}, &nodemsg.Reconfigure{},
	}
	seen := map[reflect.Type]bool{}
	for _, m := range msgs {
		pm := Encode(m)
		if pm == nil || pm.Msg == nil {
			t.Fatalf("%T has no wire form", m)
		}
		seen[reflect.TypeOf(pm.Msg)] = true
	}
	if n := (&pb.ControllerMessage{}).ProtoReflect().Descriptor().Oneofs().Get(0).Fields().Len(); len(seen) != n {
		t.Errorf("%d kinds of controller message encoded, the wire has %d", len(seen), n)
	}
	launch := Encode(&nodemsg.Launch{Job: j}).GetLaunch()
	if launch.Job.Spec.Script == "" || len(launch.Job.Spec.Env) != 1 {
		t.Errorf("a launch lost the script or environment: %+v", launch.Job.Spec)
	}
	step := Encode(&nodemsg.LaunchStep{Job: j, Step: &model.Step{ID: 1}}).GetLaunchStep()
	if step.Job.Spec.Script != "" || step.Job.Spec.Env != nil || step.Job.Steps != nil || step.Job.Spec.WorkDir != "/w" {
		t.Errorf("a step launch carries the wrong part of its job: %+v steps %v", step.Job.Spec, step.Job.Steps)
	}
	reg := Encode(&nodemsg.Registered{Expected: []nodemsg.JobRun{{Job: 7, Run: 2}}}).GetRegistered()
	if len(reg.Expected) != 1 || reg.Expected[0] != 7 || reg.ExpectedRuns[0].Run != 2 {
		t.Errorf("registered: %+v", reg)
	}
}

// wireAgent is an agent's side of the stream: scripted messages, then EOF.
type wireAgent struct {
	in  []*pb.AgentMessage
	out []*pb.ControllerMessage
}

func (a *wireAgent) Send(m *pb.ControllerMessage) error { a.out = append(a.out, m); return nil }
func (a *wireAgent) Recv() (*pb.AgentMessage, error) {
	if len(a.in) == 0 {
		return nil, io.EOF
	}
	m := a.in[0]
	a.in = a.in[1:]
	return m, nil
}

// recorder is a controller that keeps what it is told and answers a
// registration.
type recorder struct{ got []nodemsg.FromNode }

func (r *recorder) ServeAgent(s nodemsg.Stream, _, _ string) error {
	for {
		m, err := s.Recv()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		r.got = append(r.got, m)
		if _, ok := m.(*nodemsg.Register); ok {
			if err := s.Send(&nodemsg.Registered{Cluster: "c"}); err != nil {
				return err
			}
		}
	}
}

// Each agent message reaches the controller typed, with its fields; one
// this controller does not know is skipped.
func TestServeDecodesAgentMessages(t *testing.T) {
	a := &wireAgent{in: []*pb.AgentMessage{
		{Msg: &pb.AgentMessage_Register{Register: &pb.Register{Node: "n1", Cpus: 4, Memory: 1000, Running: []uint32{5, 6},
			Runs: []*pb.JobRun{{JobId: 6, Run: 3}}, Ended: []uint32{9}, RunningSteps: []string{"5.0"}}}},
		{}, // a newer agent's message
		{Msg: &pb.AgentMessage_Heartbeat{Heartbeat: &pb.Heartbeat{Running: []uint32{5}}}},
		{Msg: &pb.AgentMessage_JobStarted{JobStarted: &pb.JobStarted{JobId: 5, Run: 1}}},
		{Msg: &pb.AgentMessage_JobEnded{JobEnded: &pb.JobEnded{JobId: 5, ExitCode: 2, State: uint32(model.JobFailed), Run: 1,
			Usage: &pb.Usage{}}}},
		{Msg: &pb.AgentMessage_StepEnded{StepEnded: &pb.StepEnded{JobId: 5, StepId: 1, Signal: 9}}},
		{Msg: &pb.AgentMessage_StatReply{StatReply: &pb.StatReply{RequestId: 4, Steps: []*pb.StepStat{{JobId: 5, Node: "n1", Ntasks: 2, Pids: []int32{10}}}}}},
		{Msg: &pb.AgentMessage_Health{Health: &pb.NodeHealth{Reason: "disk", Sticky: true}}},
	}}
	r := &recorder{}
	if err := Serve(r, a, "10.0.0.1", ""); err != nil {
		t.Fatal(err)
	}
	want := []nodemsg.FromNode{
		&nodemsg.Register{Node: "n1", CPUs: 4, Memory: 1000, Running: []model.JobID{5, 6}, Runs: nodemsg.Runs{5: 0, 6: 3},
			Ended: []model.JobID{9}, RunningSteps: []string{"5.0"}},
		&nodemsg.Heartbeat{Runs: nodemsg.Runs{5: 0}},
		&nodemsg.JobStarted{Job: 5, Run: 1},
		&nodemsg.JobEnded{Job: 5, ExitCode: 2, State: model.JobFailed, Run: 1, Usage: &model.Usage{}},
		&nodemsg.StepEnded{Job: 5, Step: 1, Signal: 9},
		&nodemsg.StatReply{RequestID: 4, Steps: []nodemsg.StepStat{{Job: 5, Node: "n1", NTasks: 2, Pids: []int{10}}}},
		&nodemsg.NodeHealth{Reason: "disk", Sticky: true},
	}
	if len(r.got) != len(want) {
		t.Fatalf("got %d messages, want %d: %+v", len(r.got), len(want), r.got)
	}
	for i := range want {
		if !reflect.DeepEqual(r.got[i], want[i]) {
			t.Errorf("message %d: got %+v, want %+v", i, r.got[i], want[i])
		}
	}
	if len(a.out) != 1 || a.out[0].GetRegistered().GetCluster() != "c" {
		t.Errorf("the registration's answer did not reach the agent: %+v", a.out)
	}
}
