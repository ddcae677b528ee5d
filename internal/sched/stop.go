package sched

import "github.com/drover-hpc/drover/internal/model"

// StopFunc is asked by ScheduleUntil before the pass considers order[k]
// (order: the pending jobs in scheduling order; p: the plan so far, the
// outcome of order[:k]). It must write to neither.
type StopFunc func(order []*model.Job, k int, p *Plan) bool

// ScheduleUntil is Schedule for a caller that can prove, part way
// through a pass, that no job still to be considered would start: when
// stop returns true the pass ends there, and the jobs not considered get
// no reason, start or planned start in the Plan. A job's outcome depends
// only on the jobs ordered before it, so the starts are Schedule's
// whenever the proof is right. The simulator uses it to cut passes over
// deep queues short; the controller, which reports every job's reason
// and planned start, calls it with no stop for the Scratch alone.
//
// sc, when not nil, lends the pass its memory (see Scratch): the Plan is
// then valid only until the next pass run with sc. A nil stop never
// ends a pass early.
func ScheduleUntil(in *Input, now int64, cfg Config, stop StopFunc, sc *Scratch) *Plan {
	return schedule(in, now, cfg, stop, sc)
}
