package localapi

import (
	"github.com/drover-hpc/drover/internal/api"
	"github.com/drover-hpc/drover/internal/localwire"
	"github.com/drover-hpc/drover/internal/model"
)

// What a listing shows of each job: the same cut as the gRPC adapter's
// (internal/wire's Listing and Summary), so both transports show the
// same jobs. A test holds the two to each other.
type detail int

const (
	// detailListing leaves out the batch script, the environment and an
	// array's task id list: secrets, and megabytes nobody lists.
	detailListing detail = iota
	// detailSummary leaves out the long spec strings too (work dir,
	// output paths, argv, submit line, dependency text, node lists) and
	// the steps unless asked for.
	detailSummary
)

// listing is the answer to a job listing. The batch script and the
// environment never travel in one: the commands do not ask for them
// over this transport either (as over gRPC).
func listing(jobs []*model.Job, now int64, q api.JobQuery) *localwire.JobList {
	d := detailListing
	if q.Summary {
		d = detailSummary
	}
	out := make([]*model.Job, len(jobs))
	for i, j := range jobs {
		v := viewJob(j, d)
		if d == detailSummary && q.WithSteps {
			v.Steps = viewSteps(j.Steps)
		}
		out[i] = v
	}
	return localwire.NewJobList(out, now)
}

// viewJob is a copy of j as a user sees it at detail d.
func viewJob(j *model.Job, d detail) *model.Job {
	v := *j
	if j.State == model.JobPending {
		// A pending job's start time is the planned one.
		v.StartTime = j.PlannedStart
	}
	v.PlannedStart = 0
	// The controller's bookkeeping and earlier runs (sacct reads those
	// from accounting) stay in the controller.
	v.PrioritySet, v.BeginTime, v.Runs, v.Preempted, v.Released = false, 0, nil, false, false
	v.SchedSuspended, v.PreemptedFor, v.SliceTime, v.SuspendsVictims = false, 0, 0, false
	if j.Suspended && j.State == model.JobRunning && !j.Completing {
		v.State = model.JobSuspended
	}
	if d == detailSummary {
		v.Steps, v.BatchUsage = nil, nil
	} else {
		v.Steps = viewSteps(j.Steps)
	}
	if j.Spec == nil {
		v.Spec = nil
		return &v
	}
	s := *j.Spec
	s.Script, s.Env = "", nil
	if s.Array != nil {
		s.Array = &model.ArraySpec{Raw: s.Array.Raw, Throttle: s.Array.Throttle}
	}
	if d == detailSummary {
		s.Argv, s.WorkDir, s.StdOut, s.StdErr, s.StdIn = nil, "", "", "", ""
		s.SubmitLine, s.SubmitHost, s.Comment, s.Export = "", "", "", ""
		s.ReqNodes, s.ExcNodes, s.Dependency, s.IOAddr, s.IOKey = nil, nil, nil, "", ""
	}
	v.Spec = &s
	return &v
}

func viewSteps(steps []*model.Step) []*model.Step {
	if steps == nil {
		return nil
	}
	out := make([]*model.Step, len(steps))
	for i, st := range steps {
		out[i] = viewStep(st)
	}
	return out
}

// viewStep is a step without what only its nodes may see: the tasks'
// environment, arguments and the I/O key.
func viewStep(st *model.Step) *model.Step {
	if st == nil {
		return nil
	}
	v := *st
	if st.Spec != nil {
		sp := *st.Spec
		sp.Env, sp.IOKey, sp.TaskArgv = nil, "", nil
		v.Spec = &sp
	}
	return &v
}

// viewNode is a node as users see it: without what only the controller
// uses (what the agent detected, the health check's drain), and with the
// backfill plan's flag.
func viewNode(n *model.Node) *model.Node {
	v := *n
	v.DetectCPUs, v.DetectMemory, v.HealthDrain, v.Resv = false, false, false, ""
	return &v
}
