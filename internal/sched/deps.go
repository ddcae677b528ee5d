package sched

import "github.com/drover-hpc/drover/internal/model"

// depResult is the state of a dependency or of one of its terms.
type depResult uint8

const (
	depOK    depResult = iota // satisfied
	depWait                   // may still be satisfied
	depNever                  // can never be satisfied
)

// dependency evaluates j's --dependency against the input snapshot.
// Dependees started earlier in this same plan still count as pending: the
// dependent starts on a later cycle, once the start is committed.
func (s *scheduler) dependency(j *model.Job) depResult {
	if j.DepFailed {
		return depNever // a failed dependency never recovers
	}
	d := j.Spec.Dependency
	if d == nil || len(d.Terms) == 0 {
		return depOK
	}
	if d.Any { // '?': one satisfied term is enough, all must fail to fail
		all := depNever
		for _, t := range d.Terms {
			switch s.term(j, t) {
			case depOK:
				return depOK
			case depWait:
				all = depWait
			}
		}
		return all
	}
	all := depOK
	for _, t := range d.Terms {
		switch s.term(j, t) {
		case depNever:
			return depNever
		case depWait:
			all = depWait
		}
	}
	return all
}

// term evaluates one condition. Results for a given condition are the same
// for every job of the cycle (singleton aside), so they are cached: a
// thousand jobs waiting on one array cost one walk of its tasks.
func (s *scheduler) term(j *model.Job, t model.DepTerm) depResult {
	if s.in.Jobs == nil && t.Type != model.DepSingleton {
		return depWait // cannot look: never fail a job for a missing index
	}
	switch t.Type {
	case model.DepSingleton:
		return s.singleton(j)
	case model.DepAfterCorr:
		// Task i waits for task i of the other array. Without a matching
		// task (or when j is not an array task) fall back to the whole
		// array, the conservative reading.
		t.Task = model.NoArrayTask
		if j.IsArrayTask() && s.arrayTask(t.Job, j.ArrayTaskID) != nil {
			t.Task = j.ArrayTaskID
		}
		t.Type, t.Delay = model.DepAfterOK, 0
	case model.DepAfter:
	default:
		t.Delay = 0 // only after:id+time carries a delay
	}
	if r, ok := s.deps[t]; ok {
		return r
	}
	r := s.evalTerm(t)
	s.deps[t] = r
	return r
}

func (s *scheduler) evalTerm(t model.DepTerm) depResult {
	targets := s.targets(t.Job, t.Task)
	if len(targets) == 0 {
		return depNever // unknown job: nothing could ever satisfy it
	}
	switch t.Type {
	case model.DepAfter:
		// Satisfied once every target left PENDING (started, or ended
		// without starting, e.g. cancelled) and the delay has passed.
		var ref int64
		for _, d := range targets {
			if d.State == model.JobPending {
				return depWait
			}
			ref = max(ref, refTime(d))
		}
		if s.now < ref+t.Delay {
			return depWait
		}
		return depOK
	case model.DepAfterAny:
		for _, d := range targets {
			if !d.Finished() {
				return depWait
			}
		}
		return depOK
	case model.DepAfterOK:
		// One failed task decides it for the whole array at once.
		r := depOK
		for _, d := range targets {
			switch {
			case !d.Finished():
				r = depWait
			case !succeeded(d):
				return depNever
			}
		}
		return r
	case model.DepAfterNotOK:
		// Decided once every target ended: some failure → OK, none → never.
		failed := false
		for _, d := range targets {
			if !d.Finished() {
				return depWait
			}
			failed = failed || !succeeded(d)
		}
		if failed {
			return depOK
		}
		return depNever
	}
	return depNever // a type this version does not know cannot be honoured
}

// targets resolves a dependee: one array task (task >= 0), a whole array
// (the id of an array, i.e. its first task's JobID), or one job.
func (s *scheduler) targets(id model.JobID, task int) []*model.Job {
	if task >= 0 {
		if d := s.arrayTask(id, task); d != nil {
			return []*model.Job{d}
		}
		return nil
	}
	if d := s.in.Jobs.Job(id); d != nil && (!d.IsArrayTask() || d.ArrayJobID != id) {
		return []*model.Job{d} // a plain job, or one task named by its own id
	}
	return s.in.Jobs.ArrayTasks(id)
}

func (s *scheduler) arrayTask(arrayID model.JobID, task int) *model.Job {
	if s.in.Jobs == nil {
		return nil
	}
	for _, d := range s.in.Jobs.ArrayTasks(arrayID) {
		if d.ArrayTaskID == task {
			return d
		}
	}
	return nil
}

// singleton waits while another job with the same name and user is active:
// running or completing, started this cycle, or pending and submitted
// earlier (so a chain of singleton jobs runs in submission order).
func (s *scheduler) singleton(j *model.Job) depResult {
	if s.started[nameUser{j.Name, j.UserID}] {
		return depWait
	}
	if s.in.Jobs == nil {
		return depOK
	}
	for _, o := range s.in.Jobs.ActiveByNameUser(j.Name, j.UserID) {
		if o.ID == j.ID || o.Finished() {
			continue
		}
		if o.State != model.JobPending || o.ID < j.ID {
			return depWait
		}
	}
	return depOK
}

// succeeded is "COMPLETED with exit code 0", what afterok asks for.
func succeeded(j *model.Job) bool {
	return j.State == model.JobCompleted && j.ExitCode == 0 && j.Signal == 0
}

// refTime is when a dependee stopped being pending, for after:id+delay.
func refTime(j *model.Job) int64 {
	if j.StartTime > 0 {
		return j.StartTime
	}
	return j.EndTime
}
