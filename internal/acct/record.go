package acct

import (
	"sort"
	"strconv"
	"strings"

	"github.com/drover-hpc/drover/internal/hostlist"
	"github.com/drover-hpc/drover/internal/model"
)

// DefaultQOS is the QOS a job without one runs under, as in Slurm.
const DefaultQOS = "normal"

// FromModel builds the accounting record of a job as the controller holds
// it. group names the job's group (the controller resolves it once per
// gid; "" leaves the gid's number). The rules for exit codes follow what
// Slurm's database shows, which differs from scontrol: a cancelled or
// timed-out job's row shows no signal, while its batch step shows the
// signal that ended it.
func FromModel(cluster string, j *model.Job, group string) *Job {
	spec := j.Spec
	if spec == nil {
		spec = &model.JobSpec{}
	}
	r := &Job{
		Cluster:     cluster,
		JobID:       uint32(j.ID),
		ArrayTaskID: -1,
		Name:        j.Name,
		User:        j.UserName,
		UID:         j.UserID,
		GID:         j.GroupID,
		Group:       group,
		Account:     spec.Account,
		Partition:   j.Partition,
		QOS:         spec.QOS,
		State:       j.State.String(),
		Reason:      j.Reason,
		ExitStatus:  j.ExitCode,
		ExitSignal:  j.Signal,
		CancelledBy: j.CancelledBy,
		Restarts:    int32(j.Restarts),
		Priority:    j.Priority,
		Submit:      j.SubmitTime,
		Eligible:    j.EligibleTime,
		Start:       j.StartTime,
		End:         j.EndTime,
		Suspended:   j.SuspendedFor(j.EndTime),
		TimeLimit:   j.TimeLimit,
		ReqCPUs:     int32(spec.ReqCPUs()),
		ReqNodes:    int32(max(1, spec.MinNodes)),
		WorkDir:     spec.WorkDir,
		Comment:     j.Comment,
		SubmitLine:  spec.SubmitLine,
		StdOut:      spec.StdOut,
		StdErr:      spec.StdErr,
		StdIn:       spec.StdIn,
		Constraints: spec.Features,
	}
	if r.Group == "" {
		r.Group = strconv.FormatUint(uint64(j.GroupID), 10)
	}
	if r.QOS == "" {
		r.QOS = DefaultQOS
	}
	if j.IsArrayTask() {
		r.ArrayJobID, r.ArrayTaskID = uint32(j.ArrayJobID), int32(j.ArrayTaskID)
	}
	if j.State == model.JobPending && j.Reason == "" {
		r.Reason = model.ReasonNone
	}
	if j.State == model.JobCancelled || j.State == model.JobTimeout {
		r.ExitSignal = 0
	}
	if j.Completing && j.State == model.JobRunning {
		r.State = "COMPLETING"
	}

	switch {
	case spec.MemPerCPU > 0:
		r.ReqMem, r.ReqMemPerCPU = spec.MemPerCPU, true
	case spec.MemPerNode > 0:
		r.ReqMem = spec.MemPerNode
	}
	for _, a := range j.Alloc {
		if a.Mem > 0 && r.ReqMem == 0 {
			r.ReqMem = a.Mem // the default the controller applied
		}
	}

	reqNodes := int(r.ReqNodes)
	reqMem := r.ReqMem * int64(reqNodes)
	if r.ReqMemPerCPU {
		reqMem = r.ReqMem * int64(r.ReqCPUs)
	}
	r.ReqTRES = TRES(int(r.ReqCPUs), reqMem, reqNodes, requestedGPUs(spec, reqNodes))
	if len(j.Alloc) > 0 {
		var mem int64
		gpus := 0
		for _, a := range j.Alloc {
			mem += a.Mem
			gpus += a.GPUs.Count()
		}
		r.NNodes, r.NCPUs = int32(len(j.Alloc)), int32(j.TotalCPUs())
		r.AllocTRES = TRES(j.TotalCPUs(), mem, len(j.Alloc), gpus)
		r.NodeList = hostlist.Compress(j.NodeNames())
	} else {
		r.NNodes, r.NCPUs = r.ReqNodes, r.ReqCPUs
	}

	for _, run := range j.Runs {
		r.Runs = append(r.Runs, Run{Submit: run.Submit, Eligible: run.Eligible, Start: run.Start, End: run.End,
			NodeList: hostlist.Compress(run.Nodes), NCPUs: int32(run.CPUs), ExitStatus: run.ExitCode, ExitSignal: run.Signal, Preempted: run.Preempted})
	}
	if spec.Script != "" && j.StartTime > 0 {
		r.Steps = append(r.Steps, batchStep(j, r))
	}
	for _, s := range j.Steps {
		st := stepRecord(s)
		r.Steps = append(r.Steps, st)
		if s.State.Final() && (st.ExitStatus > r.DerivedExitStatus ||
			(st.ExitStatus == r.DerivedExitStatus && st.ExitSignal > r.DerivedExitSignal)) {
			r.DerivedExitStatus, r.DerivedExitSignal = st.ExitStatus, st.ExitSignal
		}
	}
	return r
}

// batchStep is the record of the batch script's step, which the controller
// keeps inside the job rather than in its step list.
func batchStep(j *model.Job, r *Job) *Step {
	s := &Step{
		StepID:     StepBatch,
		Name:       "batch",
		Start:      j.StartTime,
		End:        j.EndTime,
		NNodes:     1,
		NTasks:     1,
		NodeList:   j.BatchHost(),
		ExitStatus: j.ExitCode,
		ExitSignal: j.Signal,
	}
	if len(j.Alloc) > 0 {
		a := j.Alloc[0]
		s.NCPUs = int32(a.CPUs)
		s.AllocTRES = TRES(a.CPUs, a.Mem, 1, a.GPUs.Count())
	}
	switch {
	case !j.State.Final():
		s.State, s.End = model.JobRunning.String(), 0
		if j.Completing {
			s.State = "COMPLETING"
		}
	case j.State == model.JobOOM:
		s.State = model.JobOOM.String()
	case j.State == model.JobCancelled || j.State == model.JobTimeout || j.Signal != 0:
		s.State = model.JobCancelled.String()
		if s.ExitSignal == 0 {
			s.ExitSignal = 15 // SIGTERM, what ended it
		}
	case j.State == model.JobNodeFail:
		s.State = model.JobNodeFail.String()
	case j.ExitCode != 0:
		s.State = model.JobFailed.String()
	default:
		s.State = model.JobCompleted.String()
	}
	if u := j.BatchUsage; u != nil {
		setUsage(s, u)
	}
	return s
}

func stepRecord(s *model.Step) *Step {
	r := &Step{
		StepID:     int32(s.ID),
		Name:       s.Name,
		State:      s.State.String(),
		ExitStatus: s.ExitCode,
		ExitSignal: s.Signal,
		Start:      s.StartTime,
		End:        s.EndTime,
		NNodes:     int32(len(s.Layout)),
		NTasks:     int32(s.NTasks),
		NodeList:   hostlist.Compress(s.NodeNames()),
		Suspended:  s.SuspendedSecs,
	}
	if !s.State.Final() {
		r.End = 0
	}
	cpus, gpus := 0, 0
	for _, n := range s.Layout {
		cpus += n.CPUs
		gpus += n.GPUs.Count()
	}
	r.NCPUs = int32(cpus)
	r.AllocTRES = TRES(cpus, 0, len(s.Layout), gpus)
	if s.Usage != nil {
		setUsage(r, s.Usage)
	}
	return r
}

func setUsage(s *Step, u *model.Usage) {
	s.MaxRSS, s.MaxRSSNode, s.AveRSS = u.MaxRSS, u.MaxRSSNode, u.AveRSS
	s.UserCPU, s.SystemCPU = u.UserCPU, u.SystemCPU
}

func requestedGPUs(spec *model.JobSpec, nodes int) int {
	g := spec.GPUs
	switch {
	case !g.Any():
		return 0
	case g.Total > 0:
		return g.Total
	case g.PerNode > 0:
		return g.PerNode * max(1, nodes)
	}
	return g.PerTask * max(1, spec.NTasks)
}

// TRES prints a TRES list as sacct shows it: names sorted, memory in the
// largest unit that divides it exactly ("billing=2,cpu=2,gres/gpu=1,
// mem=500M,node=1"). Zero counts (other than cpu) are left out.
func TRES(cpus int, memMiB int64, nodes, gpus int) string {
	type kv struct {
		k, v string
	}
	items := []kv{{"billing", strconv.Itoa(cpus)}, {"cpu", strconv.Itoa(cpus)}}
	if gpus > 0 {
		items = append(items, kv{"gres/gpu", strconv.Itoa(gpus)})
	}
	if memMiB > 0 {
		items = append(items, kv{"mem", MemString(memMiB)})
	}
	if nodes > 0 {
		items = append(items, kv{"node", strconv.Itoa(nodes)})
	}
	sort.Slice(items, func(a, b int) bool { return items[a].k < items[b].k })
	var b strings.Builder
	for i, it := range items {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(it.k)
		b.WriteByte('=')
		b.WriteString(it.v)
	}
	return b.String()
}

// MemString prints MiB in the largest unit dividing it exactly: "250M",
// "4G", "16000M".
func MemString(mib int64) string {
	units := "MGTP"
	i := 0
	for mib >= 1024 && mib%1024 == 0 && i < len(units)-1 {
		mib /= 1024
		i++
	}
	return strconv.FormatInt(mib, 10) + units[i:i+1]
}
