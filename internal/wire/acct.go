package wire

import (
	pb "github.com/drover-hpc/drover/api/drover/v1"
	"github.com/drover-hpc/drover/internal/acct"
)

// AcctQueryToPB converts an accounting query for the wire.
func AcctQueryToPB(q acct.Query) *pb.AcctJobsRequest {
	r := &pb.AcctJobsRequest{Clusters: q.Clusters, Uids: q.UIDs, Accounts: q.Accounts,
		Partitions: q.Partitions, Qos: q.QOS, Names: q.Names, States: q.States,
		Start: q.Start, End: q.End, NoSteps: q.NoSteps, Fields: q.Fields}
	for _, j := range q.Jobs {
		r.Jobs = append(r.Jobs, &pb.AcctJobSel{JobId: j.JobID, ArrayTask: j.ArrayTask})
	}
	return r
}

// AcctQueryFromPB is the inverse of AcctQueryToPB.
func AcctQueryFromPB(r *pb.AcctJobsRequest) acct.Query {
	q := acct.Query{Clusters: r.Clusters, UIDs: r.Uids, Accounts: r.Accounts,
		Partitions: r.Partitions, QOS: r.Qos, Names: r.Names, States: r.States,
		Start: r.Start, End: r.End, NoSteps: r.NoSteps, Fields: r.Fields}
	for _, j := range r.Jobs {
		q.Jobs = append(q.Jobs, acct.JobSel{JobID: j.JobId, ArrayTask: j.ArrayTask})
	}
	return q
}

// AcctJobToPB converts a job record for the wire.
func AcctJobToPB(j *acct.Job) *pb.AcctJob {
	p := &pb.AcctJob{
		Cluster: j.Cluster, JobId: j.JobID, ArrayJobId: j.ArrayJobID, ArrayTaskId: j.ArrayTaskID,
		Name: j.Name, User: j.User, Uid: j.UID, Group: j.Group, Gid: j.GID,
		Account: j.Account, Partition: j.Partition, Qos: j.QOS,
		State: j.State, Reason: j.Reason, ExitStatus: j.ExitStatus, ExitSignal: j.ExitSignal,
		CancelledBy: j.CancelledBy, DerivedExitStatus: j.DerivedExitStatus, DerivedExitSignal: j.DerivedExitSignal,
		Restarts: j.Restarts, Priority: j.Priority,
		Submit: j.Submit, Eligible: j.Eligible, Start: j.Start, End: j.End, Suspended: j.Suspended,
		TimeLimit: j.TimeLimit, Nnodes: j.NNodes, Ncpus: j.NCPUs, ReqCpus: j.ReqCPUs, ReqNodes: j.ReqNodes,
		ReqMem: j.ReqMem, ReqMemPerCpu: j.ReqMemPerCPU, ReqTres: j.ReqTRES, AllocTres: j.AllocTRES,
		NodeList: j.NodeList, WorkDir: j.WorkDir, Comment: j.Comment, SubmitLine: j.SubmitLine,
		Stdout: j.StdOut, Stderr: j.StdErr, Stdin: j.StdIn, Constraints: j.Constraints,
	}
	for _, r := range j.Runs {
		p.Runs = append(p.Runs, &pb.AcctRun{Submit: r.Submit, Eligible: r.Eligible, Start: r.Start, End: r.End,
			NodeList: r.NodeList, Ncpus: r.NCPUs, ExitStatus: r.ExitStatus, ExitSignal: r.ExitSignal, Preempted: r.Preempted})
	}
	for _, s := range j.Steps {
		p.Steps = append(p.Steps, &pb.AcctStep{
			StepId: s.StepID, Name: s.Name, State: s.State, ExitStatus: s.ExitStatus, ExitSignal: s.ExitSignal,
			CancelledBy: s.CancelledBy, Start: s.Start, End: s.End, Nnodes: s.NNodes, Ntasks: s.NTasks,
			Ncpus: s.NCPUs, NodeList: s.NodeList, AllocTres: s.AllocTRES, MaxRss: s.MaxRSS,
			MaxRssNode: s.MaxRSSNode, MaxRssTask: s.MaxRSSTask, AveRss: s.AveRSS,
			UserCpu: s.UserCPU, SystemCpu: s.SystemCPU, Suspended: s.Suspended,
		})
	}
	return p
}

// AcctJobFromPB is the inverse of AcctJobToPB.
func AcctJobFromPB(p *pb.AcctJob) *acct.Job {
	j := &acct.Job{
		Cluster: p.Cluster, JobID: p.JobId, ArrayJobID: p.ArrayJobId, ArrayTaskID: p.ArrayTaskId,
		Name: p.Name, User: p.User, UID: p.Uid, Group: p.Group, GID: p.Gid,
		Account: p.Account, Partition: p.Partition, QOS: p.Qos,
		State: p.State, Reason: p.Reason, ExitStatus: p.ExitStatus, ExitSignal: p.ExitSignal,
		CancelledBy: p.CancelledBy, DerivedExitStatus: p.DerivedExitStatus, DerivedExitSignal: p.DerivedExitSignal,
		Restarts: p.Restarts, Priority: p.Priority,
		Submit: p.Submit, Eligible: p.Eligible, Start: p.Start, End: p.End, Suspended: p.Suspended,
		TimeLimit: p.TimeLimit, NNodes: p.Nnodes, NCPUs: p.Ncpus, ReqCPUs: p.ReqCpus, ReqNodes: p.ReqNodes,
		ReqMem: p.ReqMem, ReqMemPerCPU: p.ReqMemPerCpu, ReqTRES: p.ReqTres, AllocTRES: p.AllocTres,
		NodeList: p.NodeList, WorkDir: p.WorkDir, Comment: p.Comment, SubmitLine: p.SubmitLine,
		StdOut: p.Stdout, StdErr: p.Stderr, StdIn: p.Stdin, Constraints: p.Constraints,
	}
	for _, r := range p.Runs {
		j.Runs = append(j.Runs, acct.Run{Submit: r.Submit, Eligible: r.Eligible, Start: r.Start, End: r.End,
			NodeList: r.NodeList, NCPUs: r.Ncpus, ExitStatus: r.ExitStatus, ExitSignal: r.ExitSignal, Preempted: r.Preempted})
	}
	if len(p.Steps) > 0 {
		j.Steps = make([]*acct.Step, len(p.Steps))
		for i, s := range p.Steps {
			j.Steps[i] = &acct.Step{
				StepID: s.StepId, Name: s.Name, State: s.State, ExitStatus: s.ExitStatus, ExitSignal: s.ExitSignal,
				CancelledBy: s.CancelledBy, Start: s.Start, End: s.End, NNodes: s.Nnodes, NTasks: s.Ntasks,
				NCPUs: s.Ncpus, NodeList: s.NodeList, AllocTRES: s.AllocTres, MaxRSS: s.MaxRss,
				MaxRSSNode: s.MaxRssNode, MaxRSSTask: s.MaxRssTask, AveRSS: s.AveRss,
				UserCPU: s.UserCpu, SystemCPU: s.SystemCpu, Suspended: s.Suspended,
			}
		}
	}
	return j
}
