package service

import (
	"context"
	"errors"

	"github.com/drover-hpc/drover/internal/api"
	"github.com/drover-hpc/drover/internal/fsm"
	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/sched"
)

// ErrStepBusy is CreateStep's answer when the step fits the job but not
// while its other steps hold the CPUs; srun retries when they change.
var ErrStepBusy = api.ErrStepBusy

// maxStepLayouts bounds how often CreateStep lays a step out again after
// steps committed meanwhile took what it chose.
const maxStepLayouts = 4

// ownJob finds a job the caller may act on.
func (s *Service) ownJob(id *api.Identity, jobID model.JobID) (*model.Job, error) {
	j := s.store.Snapshot().Job(jobID)
	if j == nil {
		return nil, invalid("Invalid job id specified")
	}
	if !s.privileged(id) && j.UserID != id.UID {
		return nil, errDenied
	}
	return j, nil
}

// runningJob is ownJob for calls that need the job's nodes.
func (s *Service) runningJob(id *api.Identity, jobID model.JobID) (*model.Job, error) {
	j, err := s.ownJob(id, jobID)
	if err != nil {
		return nil, err
	}
	switch {
	case j.State == model.JobPending:
		return nil, invalid("Job is pending execution")
	case j.State != model.JobRunning || j.Completing:
		return nil, invalid("Job/step already completing or completed")
	}
	return j, nil
}

// CreateStep lays out a step inside a running job, commits it and sends
// it to its nodes.
func (s *Service) CreateStep(ctx context.Context, jobID model.JobID, spec *model.StepSpec) (*model.Job, *model.Step, error) {
	id, err := s.Identify(ctx)
	if err != nil {
		return nil, nil, err
	}
	if spec == nil || (len(spec.Argv) == 0 && len(spec.TaskArgv) == 0) {
		return nil, nil, invalid("No command given to execute")
	}
	// With --multi-prog every rank needs its own program.
	for _, a := range spec.TaskArgv {
		if len(a) == 0 || a[0] == "" {
			return nil, nil, invalid("No command given to execute")
		}
	}
	if len(spec.TaskArgv) > 0 && len(spec.Argv) == 0 && spec.NTasks != len(spec.TaskArgv) {
		return nil, nil, invalid("--multi-prog needs a program for every task")
	}
	if err := checkStepSizes(spec); err != nil {
		return nil, nil, err
	}
	j, err := s.runningJob(id, jobID)
	if err != nil {
		return nil, nil, err
	}
	if j.Suspended {
		return nil, nil, invalid("Job is current suspended, requested operation disabled")
	}
	if max := s.Settings().MaxStepCount; max > 0 && int(j.NextStep) >= max {
		return nil, nil, invalid("Step limit reached for this job")
	}
	if err := s.checkHeldStepBytes(j, spec); err != nil {
		return nil, nil, err
	}
	snap := s.store.Snapshot()
	if spec.NodeList, err = expandNodes(snap, spec.NodeList); err != nil {
		return nil, nil, err
	}
	if spec.ExcNodes, err = expandNodes(snap, spec.ExcNodes); err != nil {
		return nil, nil, err
	}
	if spec.TimeLimit > 0 && j.TimeLimit > 0 && spec.TimeLimit > j.TimeLimit {
		spec.TimeLimit = j.TimeLimit
	}
	down := func(node string) bool {
		n := snap.Node(node)
		return n == nil || n.State == model.NodeDown || !n.Responding
	}
	// The layout is chosen on a snapshot; a step committed meanwhile (two
	// sruns at once) may hold its CPU ids, and the commit refuses it as
	// busy. Laid out again on the newer state, it takes the ids left free:
	// answering busy made srun wait for a step's end (or a second) and the
	// two --exact steps ran one after the other on the same core.
	var r fsm.CreateStepResult
	for try := 0; ; try++ {
		layout, err := sched.PlaceStep(j, down, spec)
		switch {
		case errors.Is(err, sched.ErrStepBusy):
			return nil, nil, ErrStepBusy
		case err != nil:
			return nil, nil, invalid(err.Error())
		}
		res, err := s.raft.Apply(fsm.TypeCreateStep, &fsm.CreateStep{Job: jobID, Spec: spec, Layout: layout, Now: s.clock.Now().Unix(),
			ExecBudget: stepExecBudget(j), MaxRunning: maxRunningSteps(j),
			NodeTasks: MaxRunningSteps, NodeTasksPerCPU: runningStepsPerCPU, UserNodeTasks: true})
		if err != nil {
			return nil, nil, errCommit(err)
		}
		r = res.(fsm.CreateStepResult)
		if !errors.Is(r.Err, fsm.ErrStepBusy) || try == maxStepLayouts-1 {
			break
		}
		snap = s.store.Snapshot()
		if j = snap.Job(jobID); j == nil || j.State != model.JobRunning || j.Completing {
			return nil, nil, invalid("Job/step already completing or completed")
		}
	}
	switch {
	case errors.Is(r.Err, fsm.ErrStepBusy):
		return nil, nil, ErrStepBusy
	case r.Err != nil:
		return nil, nil, invalid(r.Err.Error())
	}
	j = s.store.Snapshot().Job(jobID)
	st := j.Step(r.Step)
	// A step ended before its launch (its job was cancelled meanwhile)
	// has shed its environment: launching it would run the wrong thing.
	if st == nil || st.Finished() {
		return nil, nil, invalid("Job/step already completing or completed")
	}
	s.notify.LaunchStep(j, st)
	return j, st, nil
}

// CompleteJob releases an allocation with its holder's exit status.
func (s *Service) CompleteJob(ctx context.Context, jobID model.JobID, exitCode, signal int) error {
	id, err := s.Identify(ctx)
	if err != nil {
		return err
	}
	j, err := s.ownJob(id, jobID)
	if err != nil {
		return err
	}
	if j.State == model.JobPending {
		// Given back before it started: nothing ran, so it ends cancelled.
		if _, err := s.raft.Apply(fsm.TypeCancel, &fsm.Cancel{Jobs: []model.JobID{jobID}, By: id.UID, Now: s.clock.Now().Unix()}); err != nil {
			return errCommit(err)
		}
		return nil
	}
	if j.Finished() || j.Completing {
		return nil
	}
	res, err := s.raft.Apply(fsm.TypeRelease, &fsm.Release{Job: jobID, ExitCode: int32(exitCode), Signal: int32(signal), Now: s.clock.Now().Unix()})
	if err != nil {
		return errCommit(err)
	}
	if res == nil {
		s.notify.Terminate([]model.JobID{jobID}, "")
		s.notify.Kick()
	}
	return nil
}

// AttachStep makes a running step's nodes copy its output to addr.
func (s *Service) AttachStep(ctx context.Context, jobID model.JobID, stepID model.StepID, addr, key string) (*model.Step, error) {
	id, err := s.Identify(ctx)
	if err != nil {
		return nil, err
	}
	j, err := s.runningJob(id, jobID)
	if err != nil {
		return nil, err
	}
	st := j.Step(stepID)
	if st == nil || st.Finished() {
		return nil, invalid("Job step not found")
	}
	s.notify.AttachStep(j, st, addr, key)
	return st, nil
}

// Broadcast copies a file to every node of a running job.
func (s *Service) Broadcast(ctx context.Context, req api.BroadcastRequest) ([]string, error) {
	id, err := s.Identify(ctx)
	if err != nil {
		return nil, err
	}
	j, err := s.runningJob(id, req.Job)
	if err != nil {
		return nil, err
	}
	return s.notify.Fetch(ctx, j, req)
}

// signalStep cancels (sig == 0) or signals one step named by scancel.
func (s *Service) signalStep(id *api.Identity, j *model.Job, x selected, sig int) api.JobResult {
	r := api.JobResult{Job: x.raw}
	st := j.Step(x.step)
	switch {
	case !s.privileged(id) && j.UserID != id.UID:
		r.Error = "Access/permission denied"
	case st == nil:
		r.Error = "Invalid job id specified"
	case st.Finished() || st.Ending || j.Completing:
		r.Error = "Job/step already completing or completed"
	case sig != 0:
		s.notify.SignalStep(j, st, sig, false)
	default:
		if _, err := s.raft.Apply(fsm.TypeCancelStep, &fsm.CancelStep{Job: j.ID, Step: st.ID, Now: s.clock.Now().Unix()}); err != nil {
			r.Error = err.Error()
			break
		}
		s.notify.SignalStep(j, st, 0, true)
	}
	return r
}
