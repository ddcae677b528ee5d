package wire

import (
	"google.golang.org/protobuf/proto"

	pb "github.com/drover-hpc/drover/api/drover/v1"
	"github.com/drover-hpc/drover/internal/model"
)

// SpecToPB converts a job spec for the wire.
func SpecToPB(s *model.JobSpec) *pb.JobSpec {
	if s == nil {
		return nil
	}
	out := &pb.JobSpec{
		Name: s.Name, Partition: s.Partition, Account: s.Account, Qos: s.QOS, Comment: s.Comment,
		Script: s.Script, Argv: s.Argv, WorkDir: s.WorkDir, Stdout: s.StdOut, Stderr: s.StdErr, Stdin: s.StdIn,
		Env: s.Env, Export: s.Export, TimeLimit: s.TimeLimit, TimeMin: s.TimeMin,
		MinNodes: int32(s.MinNodes), MaxNodes: int32(s.MaxNodes), Ntasks: int32(s.NTasks),
		CpusPerTask: int32(s.CPUsPerTask), NtasksPerNode: int32(s.TasksPerNode),
		MemPerNode: s.MemPerNode, MemPerCpu: s.MemPerCPU, ReqNodes: s.ReqNodes, ExcNodes: s.ExcNodes,
		Exclusive: s.Exclusive, BeginTime: s.BeginTime, Hold: s.Hold, Nice: int32(s.Nice), Requeue: s.Requeue,
		OpenMode: s.OpenMode, Interactive: s.Interactive, IoAddr: s.IOAddr, IoKey: s.IOKey,
		SubmitHost: s.SubmitHost, SubmitLine: s.SubmitLine, Gpus: GPUReqToPB(s.GPUs),
		Uid: s.UID, Gid: s.GID, Priority: s.Priority, Umask: s.Umask, KillInvalidDep: int32(s.KillInvalidDep),
		Features: s.Features, MinCpusNode: int32(s.MinCPUsNode),
		Reservation: s.Reservation,
	}
	if a := s.Array; a != nil {
		ids := make([]int32, len(a.TaskIDs))
		for i, v := range a.TaskIDs {
			ids[i] = int32(v)
		}
		out.Array = &pb.ArraySpec{Raw: a.Raw, TaskIds: ids, Throttle: int32(a.Throttle)}
	}
	if d := s.Dependency; d != nil {
		pd := &pb.Dependency{Raw: d.Raw, Any: d.Any}
		for _, t := range d.Terms {
			pd.Terms = append(pd.Terms, &pb.DepTerm{Type: string(t.Type), Job: uint32(t.Job), Task: int32(t.Task), Delay: t.Delay})
		}
		out.Dependency = pd
	}
	return out
}

// SpecFromPB converts a wire job spec into the model.
func SpecFromPB(s *pb.JobSpec) *model.JobSpec {
	if s == nil {
		return nil
	}
	out := &model.JobSpec{
		Name: s.Name, Partition: s.Partition, Account: s.Account, QOS: s.Qos, Comment: s.Comment,
		Script: s.Script, Argv: s.Argv, WorkDir: s.WorkDir, StdOut: s.Stdout, StdErr: s.Stderr, StdIn: s.Stdin,
		Env: s.Env, Export: s.Export, TimeLimit: s.TimeLimit, TimeMin: s.TimeMin,
		MinNodes: int(s.MinNodes), MaxNodes: int(s.MaxNodes), NTasks: int(s.Ntasks),
		CPUsPerTask: int(s.CpusPerTask), TasksPerNode: int(s.NtasksPerNode),
		MemPerNode: s.MemPerNode, MemPerCPU: s.MemPerCpu, ReqNodes: s.ReqNodes, ExcNodes: s.ExcNodes,
		Exclusive: s.Exclusive, BeginTime: s.BeginTime, Hold: s.Hold, Nice: int(s.Nice), Requeue: s.Requeue,
		OpenMode: s.OpenMode, Interactive: s.Interactive, IOAddr: s.IoAddr, IOKey: s.IoKey,
		SubmitHost: s.SubmitHost, SubmitLine: s.SubmitLine, GPUs: GPUReqFromPB(s.Gpus),
		UID: s.Uid, GID: s.Gid, Priority: s.Priority, Umask: s.Umask, KillInvalidDep: int8(s.KillInvalidDep),
		Features: s.Features, MinCPUsNode: int(s.MinCpusNode),
		Reservation: s.Reservation,
	}
	if a := s.Array; a != nil {
		var ids []int
		if len(a.TaskIds) > 0 {
			ids = make([]int, len(a.TaskIds))
			for i, v := range a.TaskIds {
				ids[i] = int(v)
			}
		}
		out.Array = &model.ArraySpec{Raw: a.Raw, TaskIDs: ids, Throttle: int(a.Throttle)}
	}
	if d := s.Dependency; d != nil {
		md := &model.Dependency{Raw: d.Raw, Any: d.Any}
		for _, t := range d.Terms {
			md.Terms = append(md.Terms, model.DepTerm{Type: model.DepType(t.Type), Job: model.JobID(t.Job), Task: int(t.Task), Delay: t.Delay})
		}
		out.Dependency = md
	}
	return out
}

// Detail says how much of a job's spec goes on the wire.
type Detail int

const (
	// Full includes the script and environment (launches).
	Full Detail = iota
	// Listing leaves out the script, the environment and the array's task
	// list (which every task of an array shares).
	Listing
	// Summary also leaves out the long per-job strings (paths, command,
	// submit line, dependency text) that the usual listing formats never
	// print: decoding those dominated a 10,000-job squeue.
	Summary
)

// JobToPB converts a job with the spec detail asked for.
func JobToPB(j *model.Job, d Detail) *pb.Job {
	out := &pb.Job{
		Id: uint32(j.ID), ArrayJobId: uint32(j.ArrayJobID), ArrayTaskId: int32(j.ArrayTaskID),
		Uid: j.UserID, Gid: j.GroupID, Groups: j.Groups, User: j.UserName, Partition: j.Partition,
		State: uint32(j.State), Completing: j.Completing, EndState: uint32(j.EndState), Reason: j.Reason,
		HoldUser: j.HoldUser, HoldAdmin: j.HoldAdmin, Priority: j.Priority, Nice: int32(j.Nice),
		TimeLimit: j.TimeLimit, Name: j.Name, Comment: j.Comment, Restarts: int32(j.Restarts),
		DepFailed: j.DepFailed, SubmitTime: j.SubmitTime, EligibleTime: j.EligibleTime,
		StartTime: startTime(j), EndTime: j.EndTime, ExitCode: j.ExitCode, Signal: j.Signal,
		CancelledBy: j.CancelledBy, SpecId: uint32(j.SpecID), NextStep: int32(j.NextStep),
		Suspended: j.Suspended, SuspendTime: j.SuspendTime, SuspendedSecs: j.SuspendedSecs, SecsPreSuspend: j.SecsPreSuspend,
		SchedNodes: j.SchedNodes,
	}
	if j.Suspended && j.State == model.JobRunning && !j.Completing && d != Full {
		// Users see SUSPENDED; nodes (Full) keep the controller's view.
		out.State = uint32(model.JobSuspended)
	}
	for _, a := range j.Alloc {
		out.Alloc = append(out.Alloc, &pb.NodeAlloc{Node: a.Node, Cpus: int32(a.CPUs), Mem: a.Mem,
			CpuIds: bitmapToPB(a.CPUIDs), Gpus: bitmapToPB(a.GPUs)})
	}
	if d != Summary {
		out.BatchUsage = UsageToPB(j.BatchUsage)
		out.Steps = stepsToPB(j.Steps, false)
	}
	if j.Spec == nil {
		return out
	}
	if d == Full {
		out.Spec = SpecToPB(j.Spec)
		return out
	}
	out.Spec = SpecToPB(ListingSpec(j.Spec, d))
	return out
}

// ListingSpec is the copy of a job's spec that a listing at detail d
// (Listing or Summary) carries, whatever the transport: without the batch
// script and the environment (secrets, and megabytes nobody lists) and an
// array's task id list; Summary also without the long strings.
func ListingSpec(spec *model.JobSpec, d Detail) *model.JobSpec {
	s := *spec
	s.Script, s.Env = "", nil
	if s.Array != nil {
		s.Array = &model.ArraySpec{Raw: s.Array.Raw, Throttle: s.Array.Throttle}
	}
	if d == Summary {
		s.Argv, s.WorkDir, s.StdOut, s.StdErr, s.StdIn = nil, "", "", "", ""
		s.SubmitLine, s.SubmitHost, s.Comment, s.Export = "", "", "", ""
		s.ReqNodes, s.ExcNodes, s.Dependency, s.IOAddr, s.IOKey = nil, nil, nil, "", ""
	}
	return &s
}

// SummaryListing builds a listing whose jobs share their summary specs:
// jobs submitted alike (or tasks of one array) differ only in fields the
// Job message carries itself, so each distinct spec is sent and decoded once.
func SummaryListing(jobs []*model.Job, now int64, withSteps bool) *pb.ListJobsResponse {
	out := &pb.ListJobsResponse{Jobs: make([]*pb.Job, len(jobs)), Now: now}
	index := map[string]uint32{}
	// Jobs holding one spec (array tasks, jobs submitted alike: see
	// fsm.shareSpec) need it converted and compared only once.
	byPtr := map[*model.JobSpec]uint32{}
	var key []byte
	for i, j := range jobs {
		if n, ok := byPtr[j.Spec]; ok && j.Spec != nil {
			c := *j
			c.Spec = nil
			p := JobToPB(&c, Summary)
			if withSteps {
				p.Steps = stepsToPB(j.Steps, false)
			}
			p.SpecIndex = n
			out.Jobs[i] = p
			continue
		}
		p := JobToPB(j, Summary)
		if withSteps {
			p.Steps = stepsToPB(j.Steps, false)
		}
		if p.Spec != nil {
			var err error
			key, err = proto.MarshalOptions{Deterministic: true}.MarshalAppend(key[:0], p.Spec)
			if err == nil {
				n, ok := index[string(key)]
				if !ok {
					out.Specs = append(out.Specs, p.Spec)
					n = uint32(len(out.Specs))
					index[string(key)] = n
				}
				p.Spec, p.SpecIndex = nil, n
				byPtr[j.Spec] = n
			}
		}
		out.Jobs[i] = p
	}
	return out
}

// JobsFromListing converts a listing, sharing the specs it shares.
func JobsFromListing(r *pb.ListJobsResponse) []*model.Job {
	specs := make([]*model.JobSpec, len(r.Specs))
	for i, s := range r.Specs {
		specs[i] = SpecFromPB(s)
	}
	out := make([]*model.Job, len(r.Jobs))
	for i, j := range r.Jobs {
		if n := int(j.SpecIndex); n > 0 && n <= len(specs) && j.Spec == nil {
			out[i] = jobFromPB(j, specs[n-1])
			continue
		}
		out[i] = JobFromPB(j)
	}
	return out
}

// JobFromPB converts a wire job into the model.
func JobFromPB(j *pb.Job) *model.Job {
	spec := SpecFromPB(j.Spec)
	if spec == nil {
		spec = &model.JobSpec{}
	}
	return jobFromPB(j, spec)
}

func jobFromPB(j *pb.Job, spec *model.JobSpec) *model.Job {
	out := &model.Job{
		ID: model.JobID(j.Id), ArrayJobID: model.JobID(j.ArrayJobId), ArrayTaskID: int(j.ArrayTaskId),
		UserID: j.Uid, GroupID: j.Gid, Groups: j.Groups, UserName: j.User, Partition: j.Partition,
		State: model.JobState(j.State), Completing: j.Completing, EndState: model.JobState(j.EndState),
		Reason: j.Reason, HoldUser: j.HoldUser, HoldAdmin: j.HoldAdmin, Priority: j.Priority,
		Nice: int(j.Nice), TimeLimit: j.TimeLimit, Name: j.Name, Comment: j.Comment,
		Restarts: int(j.Restarts), DepFailed: j.DepFailed, SubmitTime: j.SubmitTime,
		EligibleTime: j.EligibleTime, StartTime: j.StartTime, EndTime: j.EndTime,
		ExitCode: j.ExitCode, Signal: j.Signal, CancelledBy: j.CancelledBy, SpecID: model.JobID(j.SpecId),
		Spec: spec, NextStep: model.StepID(j.NextStep), Steps: stepsFromPB(j.Steps),
		Suspended: j.Suspended, SuspendTime: j.SuspendTime, SuspendedSecs: j.SuspendedSecs, SecsPreSuspend: j.SecsPreSuspend,
		SchedNodes: j.SchedNodes,
	}
	for _, a := range j.Alloc {
		out.Alloc = append(out.Alloc, model.NodeAlloc{Node: a.Node, CPUs: int(a.Cpus), Mem: a.Mem,
			CPUIDs: bitmapFromPB(a.CpuIds), GPUs: bitmapFromPB(a.Gpus)})
	}
	out.BatchUsage = UsageFromPB(j.BatchUsage)
	return out
}

// NodeToPB converts a node.
func NodeToPB(n *model.Node) *pb.Node {
	return &pb.Node{
		Name: n.Name, Addr: n.Addr, Hostname: n.Hostname, Cpus: int32(n.CPUs), Sockets: int32(n.Sockets),
		Cores: int32(n.Cores), Threads: int32(n.Threads), Memory: n.Memory, Gres: n.Gres,
		Features: n.Features, Weight: int32(n.Weight), State: uint32(n.State), Drain: n.Drain,
		Responding: n.Responding, Reason: n.Reason, ReasonUid: n.ReasonUID, ReasonTime: n.ReasonTime,
		BootTime: n.BootTime, LastSeen: n.LastSeen, Version: n.Version, RegTime: n.RegTime,
		AllocCpus: int32(n.AllocCPUs), AllocMem: n.AllocMem,
		Gpus: GPUsToPB(n.GPUs), AllocGpus: bitmapToPB(n.AllocGPUs), AllocCores: bitmapToPB(n.AllocCores),
		Planned: n.Planned, InvalidReg: n.InvalidReg,
	}
}

// NodeFromPB converts a wire node.
func NodeFromPB(n *pb.Node) *model.Node {
	return &model.Node{
		Name: n.Name, Addr: n.Addr, Hostname: n.Hostname, CPUs: int(n.Cpus), Sockets: int(n.Sockets),
		Cores: int(n.Cores), Threads: int(n.Threads), Memory: n.Memory, Gres: n.Gres,
		Features: n.Features, Weight: int(n.Weight), State: model.NodeState(n.State), Drain: n.Drain,
		Responding: n.Responding, Reason: n.Reason, ReasonUID: n.ReasonUid, ReasonTime: n.ReasonTime,
		BootTime: n.BootTime, LastSeen: n.LastSeen, Version: n.Version, RegTime: n.RegTime,
		AllocCPUs: int(n.AllocCpus), AllocMem: n.AllocMem,
		GPUs: GPUsFromPB(n.Gpus), AllocGPUs: bitmapFromPB(n.AllocGpus), AllocCores: bitmapFromPB(n.AllocCores),
		Planned: n.Planned, InvalidReg: n.InvalidReg,
	}
}

// PartitionToPB converts a partition.
func PartitionToPB(p *model.Partition) *pb.Partition {
	return &pb.Partition{
		Name: p.Name, Nodes: p.Nodes, NodesExpr: p.NodesExpr, Default: p.Default, MaxTime: p.MaxTime,
		DefaultTime: p.DefaultTime, State: uint32(p.State), PriorityTier: int32(p.PriorityTier),
		PriorityJobFactor: int32(p.PriorityJobFactor), MaxNodes: int32(p.MaxNodes), MinNodes: int32(p.MinNodes),
		AllowAccounts: p.AllowAccounts, AllowGroups: p.AllowGroups, Oversubscribe: p.OverSubscribe,
		DenyAccounts: p.DenyAccounts, AllowQos: p.AllowQOS, DenyQos: p.DenyQOS, Qos: p.QOS,
		PreemptMode: p.PreemptMode, GraceTime: p.GraceTime,
	}
}

// PartitionFromPB converts a wire partition.
func PartitionFromPB(p *pb.Partition) *model.Partition {
	return &model.Partition{
		Name: p.Name, Nodes: p.Nodes, NodesExpr: p.NodesExpr, Default: p.Default, MaxTime: p.MaxTime,
		DefaultTime: p.DefaultTime, State: model.PartitionState(p.State), PriorityTier: int(p.PriorityTier),
		PriorityJobFactor: int(p.PriorityJobFactor), MaxNodes: int(p.MaxNodes), MinNodes: int(p.MinNodes),
		AllowAccounts: p.AllowAccounts, AllowGroups: p.AllowGroups, OverSubscribe: p.Oversubscribe,
		DenyAccounts: p.DenyAccounts, AllowQOS: p.AllowQos, DenyQOS: p.DenyQos, QOS: p.Qos,
		PreemptMode: p.PreemptMode, GraceTime: p.GraceTime,
	}
}

// startTime is what clients see as a job's start: for a pending job the
// backfill scheduler's planned start (squeue --start, scontrol StartTime=).
func startTime(j *model.Job) int64 {
	if j.State == model.JobPending {
		return j.PlannedStart
	}
	return j.StartTime
}
