package sim

import (
	"cmp"
	"slices"

	"github.com/drover-hpc/drover/internal/model"
)

// shadowed reports whether the pass at now starts nothing because of the
// reservation the head of the queue gets (the gate's fourth rule, for
// backfill with equal fixed priorities, whatever ended since the last
// pass; shadowedMoving is the same under moving priorities). It needs no earlier pass, so it decides the instants right after
// a job ended early, where the plan rule cannot.
//
// pending[0] (h) is the first job the pass considers; when it needs more
// than the free CPUs it does not start and makes the pass's first
// reservation. With no reservation before it, a one-CPU node offers any
// window from its release on (the running job's limit, or now+1 for one
// past it; a free node from now), so the search tries the instant r* at
// which the releases first add up to h's need, rounded up to
// bf_resolution (thi), and places h there if no earlier instant took it:
// h is reserved from some t <= thi (when thi is inside bf_window). Of its
// nodes at most R(thi), the nodes released in (now, thi], are not free
// now, so at least held = need(h) - R(thi) of the free nodes are held
// from t on. A later job k can start now only on free nodes no
// reservation holds over [now, now+limit(k)): when that window reaches
// past thi, at most free-held are left to it. If every job that fits the
// free CPUs is caught so, none starts (later reservations and earlier
// starts only take more). This is the EASY shadow test, exact for the
// first reservation; TestGateExact checks every skipped pass.
func (g *gate) shadowed(pending []*model.Job, free int, running []*model.Job, now int64) bool {
	if g.shadowCut(pending, free, running, now) > 0 {
		return false
	}
	g.shadowSkips++
	return true
}

// shadowCut returns how many jobs at the head of pending (ID order) the
// pass needs to see: up to the last one that fits the free CPUs and that
// the head's reservation does not keep off them (see shadowed), 0 when
// none can start. What a job that cannot start leaves behind bears only
// on the jobs after it, so the tail changes no start (as in cut).
func (g *gate) shadowCut(pending []*model.Job, free int, running []*model.Job, now int64) int {
	last := len(pending) - 1
	for ; last >= 0 && g.need[pending[last].ID-1] > free; last-- {
	}
	if last <= 0 {
		return last + 1 // none fits, or only the head: it starts
	}
	thi, held, ok := g.shadow(pending[0], free, running, now)
	if !ok {
		return last + 1
	}
	for ; last > 0; last-- {
		if !g.shaded(pending[last], free, thi, held, now) {
			return last + 1
		}
	}
	return 0
}

// shadowedMoving is shadowed under moving priorities (set at now): the
// head is the job the pass considers first (highest priority, then
// lowest ID), and the argument needs no other order.
func (g *gate) shadowedMoving(pending []*model.Job, free int, running []*model.Job, now int64) bool {
	if len(pending) == 0 {
		return false
	}
	h := pending[0]
	for _, j := range pending[1:] {
		if j.Priority > h.Priority || (j.Priority == h.Priority && j.ID < h.ID) {
			h = j
		}
	}
	thi, held, ok := g.shadow(h, free, running, now)
	if !ok {
		return false
	}
	for _, j := range pending {
		if j != h && !g.shaded(j, free, thi, held, now) {
			return false
		}
	}
	g.shadowSkips++
	return true
}

// shaded reports whether j cannot start now beside the head's
// reservation (from at most thi, holding at least held free nodes).
func (g *gate) shaded(j *model.Job, free int, thi int64, held int, now int64) bool {
	n := g.need[j.ID-1]
	if n > free {
		return true
	}
	if j.TimeLimit > 0 && now+j.TimeLimit <= thi {
		return false // may end before h's reservation starts
	}
	return n > free-held // else it may fit beside it
}

// shadow returns, for head h the pass considers first, the instant thi
// by which its reservation starts and how many free nodes it holds at
// least (see shadowed); ok is false when h may start or get no
// reservation, or holds no free node.
func (g *gate) shadow(h *model.Job, free int, running []*model.Job, now int64) (thi int64, held int, ok bool) {
	needH := g.need[h.ID-1]
	if needH <= free {
		return 0, 0, false
	}
	g.rel = g.rel[:0]
	for _, j := range running {
		if j.TimeLimit <= 0 {
			continue // no limit: it releases nothing the search sees
		}
		g.rel = append(g.rel, step{max(j.StartTime+j.TimeLimit, now+1), g.need[j.ID-1]})
	}
	slices.SortFunc(g.rel, func(a, b step) int { return cmp.Compare(a.t, b.t) })
	cnt, k := free, 0
	for ; k < len(g.rel) && cnt < needH; k++ {
		cnt += g.rel[k].cpus
	}
	if cnt < needH {
		return 0, 0, false
	}
	thi = g.rel[k-1].t
	if rem := thi % g.res; rem != 0 {
		thi += g.res - rem
	}
	if g.window > 0 && thi > now+g.window {
		return 0, 0, false // h may get no reservation
	}
	for ; k < len(g.rel) && g.rel[k].t <= thi; k++ {
		cnt += g.rel[k].cpus
	}
	held = needH - (cnt - free)
	return thi, held, held > 0
}
