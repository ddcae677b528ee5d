package wire

import (
	pb "github.com/drover-hpc/drover/api/drover/v1"
	"github.com/drover-hpc/drover/internal/model"
)

// StepSpecToPB converts a step request for the wire.
func StepSpecToPB(s *model.StepSpec) *pb.StepSpec {
	if s == nil {
		return nil
	}
	out := &pb.StepSpec{
		Name: s.Name, Argv: s.Argv, Env: s.Env, WorkDir: s.WorkDir, Ntasks: int32(s.NTasks),
		MinNodes: int32(s.MinNodes), MaxNodes: int32(s.MaxNodes), NtasksPerNode: int32(s.TasksPerNode),
		CpusPerTask: int32(s.CPUsPerTask), Distribution: string(s.Distribution), NodeList: s.NodeList,
		ExcNodes: s.ExcNodes, Exact: s.Exact, Overlap: s.Overlap, TimeLimit: s.TimeLimit,
		IoAddr: s.IOAddr, IoKey: s.IOKey, Stdout: s.StdOut, Stderr: s.StdErr, Stdin: s.StdIn,
		Input: s.Input, Pty: s.Pty, Label: s.Label, SrunPid: int32(s.SrunPID), SrunHost: s.SrunHost,
		SubmitLine: s.SubmitLine, Gpus: GPUReqToPB(s.GPUs),
	}
	for _, a := range s.TaskArgv {
		out.TaskArgv = append(out.TaskArgv, &pb.StringList{Items: a})
	}
	return out
}

// StepSpecFromPB converts a wire step request.
func StepSpecFromPB(s *pb.StepSpec) *model.StepSpec {
	if s == nil {
		return nil
	}
	out := &model.StepSpec{
		Name: s.Name, Argv: s.Argv, Env: s.Env, WorkDir: s.WorkDir, NTasks: int(s.Ntasks),
		MinNodes: int(s.MinNodes), MaxNodes: int(s.MaxNodes), TasksPerNode: int(s.NtasksPerNode),
		CPUsPerTask: int(s.CpusPerTask), Distribution: model.Distribution(s.Distribution), NodeList: s.NodeList,
		ExcNodes: s.ExcNodes, Exact: s.Exact, Overlap: s.Overlap, TimeLimit: s.TimeLimit,
		IOAddr: s.IoAddr, IOKey: s.IoKey, StdOut: s.Stdout, StdErr: s.Stderr, StdIn: s.Stdin,
		Input: s.Input, Pty: s.Pty, Label: s.Label, SrunPID: int(s.SrunPid), SrunHost: s.SrunHost,
		SubmitLine: s.SubmitLine, GPUs: GPUReqFromPB(s.Gpus),
	}
	for _, a := range s.TaskArgv {
		out.TaskArgv = append(out.TaskArgv, a.GetItems())
	}
	return out
}

// StepToPB converts a step; full keeps its environment and I/O key.
func StepToPB(s *model.Step, full bool) *pb.Step {
	out := &pb.Step{
		Id: int32(s.ID), Name: s.Name, State: uint32(s.State), Ntasks: int32(s.NTasks),
		StartTime: s.StartTime, EndTime: s.EndTime, ExitCode: s.ExitCode, Signal: s.Signal,
		NodesDone: s.NodesDone, Ending: s.Ending, EndState: uint32(s.EndState), TimeLimit: s.TimeLimit,
		Usage: UsageToPB(s.Usage),
	}
	for _, n := range s.Layout {
		tasks := make([]int32, len(n.Tasks))
		for i, t := range n.Tasks {
			tasks[i] = int32(t)
		}
		out.Layout = append(out.Layout, &pb.StepNode{Node: n.Node, Cpus: int32(n.CPUs), Tasks: tasks, Gpus: bitmapToPB(n.GPUs), CpuIds: bitmapToPB(n.CPUIDs)})
	}
	if s.Spec != nil {
		sp := s.Spec
		if !full {
			sp = UserStepSpec(sp)
		}
		out.Spec = StepSpecToPB(sp)
	}
	return out
}

// UserStepSpec is the copy of a step's spec that users are shown,
// whatever the transport: without what only its nodes may see, the tasks'
// environment and arguments and the I/O key.
func UserStepSpec(sp *model.StepSpec) *model.StepSpec {
	v := *sp
	v.Env, v.IOKey, v.TaskArgv = nil, "", nil
	return &v
}

// StepFromPB converts a wire step.
func StepFromPB(s *pb.Step) *model.Step {
	out := &model.Step{
		ID: model.StepID(s.Id), Name: s.Name, State: model.JobState(s.State), NTasks: int(s.Ntasks),
		StartTime: s.StartTime, EndTime: s.EndTime, ExitCode: s.ExitCode, Signal: s.Signal,
		NodesDone: s.NodesDone, Ending: s.Ending, EndState: model.JobState(s.EndState), TimeLimit: s.TimeLimit,
		Spec: StepSpecFromPB(s.Spec), Usage: UsageFromPB(s.Usage),
	}
	for _, n := range s.Layout {
		tasks := make([]int, len(n.Tasks))
		for i, t := range n.Tasks {
			tasks[i] = int(t)
		}
		out.Layout = append(out.Layout, model.StepNode{Node: n.Node, CPUs: int(n.Cpus), Tasks: tasks, GPUs: bitmapFromPB(n.Gpus), CPUIDs: bitmapFromPB(n.CpuIds)})
	}
	return out
}

func stepsToPB(steps []*model.Step, full bool) []*pb.Step {
	if len(steps) == 0 {
		return nil
	}
	out := make([]*pb.Step, len(steps))
	for i, s := range steps {
		out[i] = StepToPB(s, full)
	}
	return out
}

func stepsFromPB(steps []*pb.Step) []*model.Step {
	if len(steps) == 0 {
		return nil
	}
	out := make([]*model.Step, len(steps))
	for i, s := range steps {
		out[i] = StepFromPB(s)
	}
	return out
}
