package localapi

import (
	"github.com/drover-hpc/drover/internal/api"
	"github.com/drover-hpc/drover/internal/localwire"
	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/wire"
)

// listing is the answer to a job listing. The batch script and the
// environment never travel in one: the commands do not ask for them
// over this transport either (as over gRPC).
func listing(jobs []*model.Job, now int64, q api.JobQuery) *localwire.JobList {
	d := wire.Listing
	if q.Summary {
		d = wire.Summary
	}
	out := make([]*model.Job, len(jobs))
	// Jobs submitted alike and array tasks hold one spec (fsm.shareSpec):
	// cut it once, so the listing shares one view of it, as gRPC's does.
	views := map[*model.JobSpec]*model.JobSpec{}
	for i, j := range jobs {
		v := viewJobShared(j, d, views)
		if d == wire.Summary && q.WithSteps {
			v.Steps = viewSteps(j.Steps)
		}
		out[i] = v
	}
	return localwire.NewJobList(out, now)
}

// viewJob is a copy of j as a user sees it at detail d (wire.Listing or
// wire.Summary): the gRPC adapter's cut (internal/wire's JobToPB), which
// a test holds this one to, field by field.
func viewJob(j *model.Job, d wire.Detail) *model.Job { return viewJobShared(j, d, nil) }

// viewJobShared is viewJob with the spec views already cut (views may be
// nil).
func viewJobShared(j *model.Job, d wire.Detail, views map[*model.JobSpec]*model.JobSpec) *model.Job {
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
	if d == wire.Summary {
		v.Steps, v.BatchUsage = nil, nil
	} else {
		v.Steps = viewSteps(j.Steps)
	}
	if j.Spec != nil {
		vs, ok := views[j.Spec]
		if !ok {
			vs = wire.ListingSpec(j.Spec, d)
			if views != nil {
				views[j.Spec] = vs
			}
		}
		v.Spec = vs
	}
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

// viewStep is a step as users see it (wire.UserStepSpec).
func viewStep(st *model.Step) *model.Step {
	if st == nil {
		return nil
	}
	v := *st
	if st.Spec != nil {
		v.Spec = wire.UserStepSpec(st.Spec)
	}
	// Accounting's figure: users read it in sacct (AcctStep), as over gRPC.
	v.SuspendedSecs = 0
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
