package sched

import "github.com/drover-hpc/drover/internal/model"

// reasonPartitionConfig is Slurm's reason for a job whose partition is not
// (or no longer) configured. TODO: move to model with the other reasons.
const reasonPartitionConfig = "PartitionConfig"

// eligible applies every gate that does not depend on free resources and
// returns the reason of the first that stops j, or "". None of these
// reasons holds other jobs back: only failing to fit does.
func (s *scheduler) eligible(j *model.Job) string {
	if j.Spec == nil {
		return model.ReasonBadConstraints // cannot place what we cannot read
	}
	// Admin hold first: a user cannot release it, so it is the real blocker.
	if j.HoldAdmin {
		// A hold that came with a requeue keeps saying so, as in Slurm.
		if j.Reason == model.ReasonRequeuedHeld || j.Reason == model.ReasonLaunchFailedHeld {
			return j.Reason
		}
		return model.ReasonHeldAdmin
	}
	if j.HoldUser {
		return model.ReasonHeldUser
	}
	// Dependencies before the begin time, as Slurm orders them: a job whose
	// dependency already failed should say so rather than wait for a clock.
	switch s.dependency(j) {
	case depWait:
		return model.ReasonDependency
	case depNever:
		if !j.DepFailed {
			s.plan.DepFailed = append(s.plan.DepFailed, j.ID)
		}
		return model.ReasonDepNeverSatisfied
	}
	if j.Begin() > s.now {
		return model.ReasonBeginTime
	}
	p, ps := s.partOf(j.Partition)
	if p == nil || ps == nil {
		return reasonPartitionConfig
	}
	// DRAIN refuses new submissions only; queued jobs may still start.
	switch p.State {
	case model.PartDown:
		return model.ReasonPartitionDown
	case model.PartInactive:
		return model.ReasonPartitionInactive
	}
	if exceedsTime(j.TimeLimit, p.MaxTime) {
		return model.ReasonPartitionTime
	}
	if a := j.Spec.Array; j.IsArrayTask() && a != nil && a.Throttle > 0 &&
		s.arrayRunning(j.ArrayJobID) >= a.Throttle {
		return model.ReasonArrayTaskLimit
	}
	return ""
}

// exceedsTime reports whether a job limit is over a partition's MaxTime.
// A non-positive MaxTime (Unlimited, or unset) bounds nothing; an
// Unlimited job is over any bound.
func exceedsTime(limit, maxTime int64) bool {
	if maxTime <= 0 {
		return false
	}
	return limit == model.Unlimited || limit > maxTime
}

// arrayRunning counts an array's tasks that hold resources (running,
// suspended or completing) plus those started earlier in this plan. The
// walk over the array's tasks runs once per array and pass, and only for
// a throttle: start counts its starts apart (arrayStarted), so a drain of
// an unthrottled array no longer walks every task on each pass's first
// start.
func (s *scheduler) arrayRunning(arrayID model.JobID) int {
	n, ok := s.running[arrayID]
	if !ok {
		if s.in.Jobs != nil {
			for _, t := range s.in.Jobs.ArrayTasks(arrayID) {
				if t.Completing || t.State == model.JobRunning || t.State == model.JobSuspended {
					n++
				}
			}
		}
		s.running[arrayID] = n
	}
	return n + s.arrayStarted[arrayID]
}
