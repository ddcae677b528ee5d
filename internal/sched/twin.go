package sched

import "github.com/drover-hpc/drover/internal/model"

// A waiting job that changed nothing in the pass (no start, reservation,
// preemption, failed dependency, nor a partition newly blocked) leaves the
// scheduler as it found it, so the next job in order that is the same for
// every gate and every placement question gets the same verdict: its
// reason is copied instead of running it through consider again. The
// tasks of an array (one spec, one partition, one priority) are such
// jobs, and a drain of a large array ran each waiting task through every
// gate on every pass; jobs submitted alike share one spec too.
//
// "The same" is every field of a job that consider and its helpers read
// besides its ID: the spec (one pointer: every request, QOS, account),
// partition, time limit, reason (kept under MaxJobsPerCycle; a requeued
// hold's), holds, begin time, failed dependency, the preemptor it waits
// for, user, group, name, priority and array. Jobs with dependencies
// (aftercorr reads the task id) and passes with advance reservations
// (verdicts per user and account, and maint/resvWait) keep the full path.
// TestTwinsKeepPlans compares plans made both ways.

// plainTwins turns the shortcut off, for tests that compare plans.
var plainTwins bool

// passMark is what a consider may change that a later verdict reads.
type passMark struct {
	starts, preempts, depFailed, resv int
	blocked                           bool
}

func (s *scheduler) mark(j *model.Job) passMark {
	m := passMark{starts: len(s.plan.Starts), preempts: len(s.plan.Preempts), depFailed: len(s.plan.DepFailed)}
	if s.c.bf != nil {
		m.resv = s.c.bf.count
	}
	if _, ps := s.partOf(j.Partition); ps != nil {
		m.blocked = ps.blocked
	}
	return m
}

// considerTwin is consider, or the verdict of the job before j when that
// one changed nothing and j is its twin.
func (s *scheduler) considerTwin(j *model.Job) {
	if t := s.twin; t != nil && sameVerdict(t, j) {
		s.plan.Reasons[j.ID] = s.plan.Reasons[t.ID]
		return
	}
	s.twin = nil
	if plainTwins || len(s.in.Reservations) > 0 || j.Spec == nil ||
		(j.Spec.Dependency != nil && len(j.Spec.Dependency.Terms) > 0) {
		s.consider(j)
		return
	}
	before := s.mark(j)
	s.consider(j)
	if _, waits := s.plan.Reasons[j.ID]; waits && s.mark(j) == before {
		s.twin = j
	}
}

// sameVerdict reports whether b reads as a for every gate and placement.
func sameVerdict(a, b *model.Job) bool {
	return a.Spec == b.Spec && a.Partition == b.Partition && a.TimeLimit == b.TimeLimit &&
		a.Reason == b.Reason && a.HoldUser == b.HoldUser && a.HoldAdmin == b.HoldAdmin &&
		a.BeginTime == b.BeginTime && a.DepFailed == b.DepFailed && a.PreemptedFor == b.PreemptedFor &&
		a.UserID == b.UserID && a.GroupID == b.GroupID && a.UserName == b.UserName && a.Name == b.Name &&
		a.Priority == b.Priority && a.ArrayJobID == b.ArrayJobID &&
		a.IsArrayTask() == b.IsArrayTask()
}
