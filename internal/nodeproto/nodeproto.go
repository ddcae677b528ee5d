package nodeproto

import (
	"fmt"

	pb "github.com/drover-hpc/drover/api/drover/v1"
	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/nodemsg"
	"github.com/drover-hpc/drover/internal/wire"
)

// Controller runs one agent's session over typed messages (the
// controller's ServeAgent). certNode, when not empty, is the node the
// caller's certificate names, the only one it may register as.
type Controller interface {
	ServeAgent(stream nodemsg.Stream, peerAddr, certNode string) error
}

// Conn is the server side of an agent's Connect stream.
type Conn interface {
	Send(*pb.ControllerMessage) error
	Recv() (*pb.AgentMessage, error)
}

// Serve runs an agent's stream through ctl until it ends. The caller has
// already checked the cluster token or the node certificate.
func Serve(ctl Controller, c Conn, peerAddr, certNode string) error {
	return ctl.ServeAgent(stream{c}, peerAddr, certNode)
}

// stream turns the wire stream into a nodemsg.Stream.
type stream struct{ c Conn }

func (s stream) Send(m nodemsg.ToNode) error {
	pm := Encode(m)
	if pm == nil {
		return fmt.Errorf("nodeproto: no wire form for %T", m)
	}
	return s.c.Send(pm)
}

// Recv skips messages this controller does not know (a newer agent's).
func (s stream) Recv() (nodemsg.FromNode, error) {
	for {
		m, err := s.c.Recv()
		if err != nil {
			return nil, err
		}
		if d := Decode(m); d != nil {
			return d, nil
		}
	}
}

func runsFromPB(ids []uint32, runs []*pb.JobRun) nodemsg.Runs {
	out := make(nodemsg.Runs, len(ids))
	for _, id := range ids {
		out[model.JobID(id)] = 0
	}
	for _, r := range runs {
		out[model.JobID(r.JobId)] = r.Run
	}
	return out
}

func jobIDs(ids []uint32) []model.JobID {
	out := make([]model.JobID, len(ids))
	for i, v := range ids {
		out[i] = model.JobID(v)
	}
	return out
}

// Decode converts an agent's message; nil for one it does not know.
func Decode(m *pb.AgentMessage) nodemsg.FromNode {
	switch m := m.Msg.(type) {
	case *pb.AgentMessage_Register:
		r := m.Register
		return &nodemsg.Register{
			Node: r.Node, CPUs: int(r.Cpus), Sockets: int(r.Sockets), Cores: int(r.Cores), Threads: int(r.Threads),
			Memory: r.Memory, Hostname: r.Hostname, Version: r.Version, BootTime: r.BootTime,
			GPUs: wire.GPUsFromPB(r.Gpus), Running: jobIDs(r.Running), Runs: runsFromPB(r.Running, r.Runs),
			Ended: jobIDs(r.Ended), RunningSteps: r.RunningSteps,
		}
	case *pb.AgentMessage_Heartbeat:
		return &nodemsg.Heartbeat{Runs: runsFromPB(m.Heartbeat.Running, m.Heartbeat.Runs)}
	case *pb.AgentMessage_JobStarted:
		return &nodemsg.JobStarted{Job: model.JobID(m.JobStarted.JobId), Run: m.JobStarted.Run}
	case *pb.AgentMessage_JobEnded:
		e := m.JobEnded
		return &nodemsg.JobEnded{Job: model.JobID(e.JobId), ExitCode: e.ExitCode, Signal: e.Signal,
			State: model.JobState(e.State), Reason: e.Reason, EndTime: e.EndTime, StartTime: e.StartTime,
			Usage: wire.UsageFromPB(e.Usage), Requeue: e.Requeue, Run: e.Run}
	case *pb.AgentMessage_StepEnded:
		e := m.StepEnded
		return &nodemsg.StepEnded{Job: model.JobID(e.JobId), Step: model.StepID(e.StepId), ExitCode: e.ExitCode,
			Signal: e.Signal, State: model.JobState(e.State), EndTime: e.EndTime, Usage: wire.UsageFromPB(e.Usage), Run: e.Run}
	case *pb.AgentMessage_StatReply:
		r := m.StatReply
		out := &nodemsg.StatReply{RequestID: r.RequestId}
		for _, s := range r.Steps {
			st := nodemsg.StepStat{Job: model.JobID(s.JobId), Step: model.StepID(s.StepId), Node: s.Node, NTasks: int(s.Ntasks),
				Usage: wire.UsageFromPB(s.Usage)}
			for _, p := range s.Pids {
				st.Pids = append(st.Pids, int(p))
			}
			out.Steps = append(out.Steps, st)
		}
		return out
	case *pb.AgentMessage_Health:
		return &nodemsg.NodeHealth{Healthy: m.Health.Healthy, Reason: m.Health.Reason, Sticky: m.Health.Sticky}
	}
	return nil
}

// Encode converts a message to an agent, choosing how much of a job each
// kind carries: all of it to launch the batch script; no script,
// environment or other steps with a step; the summary with a file fetch.
// It returns nil for a message it has no wire form for.
func Encode(m nodemsg.ToNode) *pb.ControllerMessage {
	switch m := m.(type) {
	case *nodemsg.Registered:
		r := &pb.Registered{Cluster: m.Cluster, KillWait: m.KillWait, AcksReports: m.AcksReports, HasSuspended: true, HasLimits: true}
		for _, id := range m.Suspended {
			r.Suspended = append(r.Suspended, uint32(id))
		}
		for _, e := range m.Expected {
			r.Expected = append(r.Expected, uint32(e.Job))
			r.ExpectedRuns = append(r.ExpectedRuns, &pb.JobRun{JobId: uint32(e.Job), Run: e.Run, TimeLimit: e.Limit})
		}
		return &pb.ControllerMessage{Msg: &pb.ControllerMessage_Registered{Registered: r}}
	case *nodemsg.Launch:
		return &pb.ControllerMessage{Msg: &pb.ControllerMessage_Launch{Launch: &pb.Launch{
			Job: wire.JobToPB(m.Job, wire.Full), Cluster: m.Cluster, KillWait: m.KillWait,
		}}}
	case *nodemsg.SignalJob:
		return &pb.ControllerMessage{Msg: &pb.ControllerMessage_Signal{Signal: &pb.SignalJob{
			JobId: uint32(m.Job), Signal: int32(m.Signal), Terminate: m.Terminate, BatchOnly: m.BatchOnly,
			StepsOnly: m.StepsOnly, Message: m.Message, Run: m.Run, Suspend: m.Suspend, Resume: m.Resume,
		}}}
	case *nodemsg.TimeLimit:
		return &pb.ControllerMessage{Msg: &pb.ControllerMessage_Signal{Signal: wire.TimeLimitMsg(uint32(m.Job), m.Run, m.Limit)}}
	case *nodemsg.EndAck:
		return &pb.ControllerMessage{Msg: &pb.ControllerMessage_EndAck{EndAck: &pb.EndAck{JobId: uint32(m.Job), Run: m.Run}}}
	case *nodemsg.LaunchStep:
		pj := wire.JobToPB(m.Job, wire.Listing)
		pj.Steps = nil
		if pj.Spec != nil {
			// Tasks take their environment from the step; the job's own (a
			// batch script's) is not needed on the nodes.
			pj.Spec.Env = nil
		}
		return &pb.ControllerMessage{Msg: &pb.ControllerMessage_LaunchStep{LaunchStep: &pb.LaunchStep{
			Job: pj, Step: wire.StepToPB(m.Step, true), Cluster: m.Cluster, KillWait: m.KillWait,
		}}}
	case *nodemsg.SignalStep:
		return &pb.ControllerMessage{Msg: &pb.ControllerMessage_SignalStep{SignalStep: &pb.SignalStep{
			JobId: uint32(m.Job), StepId: int32(m.Step), Signal: int32(m.Signal), Terminate: m.Terminate,
		}}}
	case *nodemsg.AttachIO:
		return &pb.ControllerMessage{Msg: &pb.ControllerMessage_Attach{Attach: &pb.AttachIO{
			JobId: uint32(m.Job), StepId: int32(m.Step), IoAddr: m.Addr, IoKey: m.Key,
		}}}
	case *nodemsg.FetchFile:
		return &pb.ControllerMessage{Msg: &pb.ControllerMessage_Fetch{Fetch: &pb.FetchFile{
			JobId: uint32(m.Job.ID), IoAddr: m.Addr, IoKey: m.Key, Dest: m.Dest, Mode: m.Mode,
			Force: m.Force, Mtime: m.MTime, Job: wire.JobToPB(m.Job, wire.Summary),
		}}}
	case *nodemsg.ReportAck:
		return &pb.ControllerMessage{Msg: &pb.ControllerMessage_ReportAck{ReportAck: &pb.ReportAck{
			JobId: uint32(m.Job), StepId: int32(m.Step), Run: m.Run, Started: m.Started,
		}}}
	case *nodemsg.StatRequest:
		return &pb.ControllerMessage{Msg: &pb.ControllerMessage_Stat{Stat: &pb.StatRequest{
			RequestId: m.RequestID, JobId: uint32(m.Job), StepId: int32(m.Step), HasStep: m.HasStep,
		}}}
	case *nodemsg.Reconfigure:
		return &pb.ControllerMessage{Msg: &pb.ControllerMessage_Reconfigure{Reconfigure: &pb.Reconfigure{SlurmConf: m.SlurmConf}}}
	}
	return nil
}
