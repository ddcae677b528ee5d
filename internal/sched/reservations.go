package sched

import (
	"slices"

	"github.com/drover-hpc/drover/internal/model"
)

// Reservations reach placement as excluded nodes: sched/resv decides,
// per job, which nodes reservations take from it (and, for a job in a
// reservation, which nodes are all it may use); the indices are merged
// into the job's -x set, which first-fit, backfill and preemption
// already honour. Excluding over the job's whole [now, now+limit) keeps
// it off a node a reservation starts on before the job would end; the
// backfill search for a later start excludes the same nodes, which may
// plan such a job later than needed but never onto a reserved node.

// resvExclude returns exc widened by what reservations deny j, or the
// reason j waits for its reservation. It sets s.maint (a MAINT
// reservation is among those denying nodes) and s.confined (j runs only
// on its reservation's nodes).
func (s *scheduler) resvExclude(j *model.Job, ps *partState, req, exc []int32) (out []int32, wait string) {
	s.maint, s.confined = false, false
	own := ""
	if j.Spec != nil {
		own = j.Spec.Reservation
	}
	if s.resv.Empty() && own == "" {
		return exc, ""
	}
	v := s.resv.For(own, endOf(s.now, jobLimit(j, ps.p)))
	if v.Wait != "" {
		return exc, v.Wait
	}
	s.maint, s.confined = v.Maint, v.Only != nil
	if v.Only == nil && len(v.Deny) == 0 {
		return exc, ""
	}
	out = slices.Clone(exc)
	if v.Only != nil {
		for _, i := range ps.order {
			if !slices.Contains(v.Only, s.c.nodes[i].Name) {
				out = append(out, i)
			}
		}
	}
	for _, name := range v.Deny {
		if i, ok := s.c.index[name]; ok {
			out = append(out, i)
		}
	}
	slices.Sort(out)
	out = slices.Compact(out)
	// Placement takes required nodes (-w) before looking at exclusions:
	// a job that names a node a reservation denies it waits.
	for _, i := range req {
		if inSorted(out, i) {
			if s.maint {
				return exc, model.ReasonResvMaint
			}
			return exc, model.ReasonResources
		}
	}
	return out, ""
}
