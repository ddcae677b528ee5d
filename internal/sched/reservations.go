package sched

import (
	"slices"

	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/sched/resv"
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
// reason j waits for its reservation. It sets s.maint (a reservation
// denies it nodes: Slurm's reason is then the maintenance one), s.confined (j runs only on
// its reservation's nodes) and s.excFree/excFreePart (the free CPUs on
// the nodes it is denied).
func (s *scheduler) resvExclude(j *model.Job, ps *partState, r *request, req, exc []int32) (out []int32, wait string, place *partState) {
	s.maint, s.confined, s.excFree, s.excFreePart = false, false, 0, 0
	s.bfPS, s.bfExc, s.bfUntil, s.resvWait, s.c.resvUse, s.c.resvShadow = nil, nil, never, "", -1, nil
	own := ""
	if j.Spec != nil {
		own = j.Spec.Reservation
	}
	if s.resv.Empty() && own == "" {
		return exc, "", ps
	}
	if id, ok := s.resvID[own]; ok && own != "" {
		s.c.resvUse, r.resv = id, id+1 // the blocks it may use; bounds per reservation (resvplan.go)
		s.c.resvShadow = s.shadowed(id)
	}
	v := s.resv.For(own, endOf(s.now, jobLimit(j, ps.p)))
	if v.Wait != "" {
		if sp := s.resvLater(own, ps, exc); sp != nil {
			return exc, "", sp
		}
		return exc, v.Wait, ps
	}
	// Slurm 22.05 gives "ReqNodeNotAvail, Reserved for maintenance" for a
	// job kept off nodes by any reservation, MAINT or not (checked on the
	// peer: a plain reservation starting in 5 minutes, a 30-minute job).
	s.maint, s.confined = v.Maint || len(v.Deny) > 0, v.Only != nil
	if s.c.resvBlk != nil {
		// The backfill search for a later start (resvplan.go): the whole
		// partition, or all of the job's reservation, blocks deciding when.
		s.bfPS, s.bfExc, s.bfUntil = ps, exc, never
		if v.Only != nil {
			s.bfPS = s.resvPart(ps, s.resvIndices(own, resv.Verdict{Only: v.Only}))
			if rv := s.in.Reservations[s.c.resvUse]; rv.Flags&model.ResvFlex == 0 {
				s.bfUntil = rv.End - 1
			}
		}
	}
	if v.Only == nil && len(v.Deny) == 0 {
		return exc, "", ps
	}
	ri := s.resvIndices(own, v)
	denied := ri.idx
	s.excFree, s.excFreePart = ri.freeOn(s.c, ps)
	if len(exc) == 0 {
		out = denied // shared: placement only reads exclusion sets
	} else {
		out = append(slices.Clone(exc), denied...)
		slices.Sort(out)
		out = slices.Compact(out)
	}
	// Placement takes required nodes (-w) before looking at exclusions:
	// a job that names a node a reservation denies it waits.
	for _, i := range req {
		if inSorted(out, i) {
			reason := model.ReasonResources
			if s.maint {
				reason = model.ReasonResvMaint
			}
			if s.c.resvBlk != nil {
				// Backfill still plans it (the blocks say when the node
				// is free of the reservation): no start now, and no
				// preemption for a node no victim can free (a blocked
				// partition reads Priority, which considerBackfill would
				// mark it anyway); the reason stays this one.
				s.excFree, s.excFreePart, s.resvWait = s.c.free, ps.free, reason
				ps.blocked = true
				return exc, "", ps
			}
			return exc, reason, ps
		}
	}
	if v.Only != nil || s.cfg.Backfill {
		ps = s.resvPart(ps, ri)
		s.excFreePart = 0 // the narrowed partition holds no denied node
	}
	return out, "", ps
}

// resvPart is the partition less the nodes a verdict denies, where a job
// with that verdict is placed: its own tree, kept current by every commit
// like the real partitions', so placement never walks past the reserved
// nodes one by one (thousands, for a job confined to a small reservation).
// A job confined to a reservation gets its own strict order there (a
// blocked job holds back only jobs of the reservation). Under
// sched/builtin other jobs keep the real partition and its strict order,
// with the denied nodes excluded (-x); under backfill the narrowed
// partition inherits the real one's blocked mark, which only names the
// reason (Priority or Resources).
func (s *scheduler) resvPart(ps *partState, ri *resvIdx) *partState {
	key := resvPartKey{ps, ri}
	sp, ok := s.resvParts[key]
	if !ok {
		p := *ps.p
		p.Nodes = nil
		for _, name := range ps.p.Nodes {
			if i, ok := s.c.index[name]; ok && !inSorted(ri.idx, i) {
				p.Nodes = append(p.Nodes, name)
			}
		}
		sp = s.c.addPartition(&p, true, nil)
		if s.resvParts == nil {
			s.resvParts = map[resvPartKey]*partState{}
		}
		s.resvParts[key] = sp
	}
	if ps.blocked && !s.confined {
		sp.blocked = true
	}
	return sp
}

type resvPartKey struct {
	ps *partState
	ri *resvIdx
}

// resvIndices is a verdict as sorted node indices: every node outside
// Only (when set) and every node in Deny. Jobs share verdicts (one per
// reservation and set of reservations met), so the set is built once per
// cycle and a job costs a merge at most.
func (s *scheduler) resvIndices(own string, v resv.Verdict) *resvIdx {
	key := resvKey{own: own, n: len(v.Deny), maint: v.Maint}
	if len(v.Deny) > 0 {
		key.first = v.Deny[0]
	}
	if c, ok := s.resvIdx[key]; ok && slices.Equal(c.deny, v.Deny) {
		return c
	}
	var out []int32
	if v.Only != nil {
		in := make(map[string]bool, len(v.Only))
		for _, name := range v.Only {
			in[name] = true
		}
		for i, n := range s.c.nodes {
			if !in[n.Name] {
				out = append(out, int32(i))
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
	if s.resvIdx == nil {
		s.resvIdx = map[resvKey]*resvIdx{}
	}
	ri := &resvIdx{deny: v.Deny, idx: out, stamp: -1}
	s.resvIdx[key] = ri
	return ri
}

// resvKey finds a verdict's index set; resvIdx.deny confirms the match
// (two verdicts of one reservation differ only in what they deny).
type resvKey struct {
	own   string
	n     int
	maint bool
	first string
}

type resvIdx struct {
	deny []string
	idx  []int32
	// The free CPUs on idx (all, and in part) as of stamp, the cluster's
	// free count then: every start or hold changes that count, so an
	// unchanged one means unchanged nodes and a full cluster pays the sum
	// once, not once per job.
	stamp          int64
	part           *partState
	free, freePart int64
}

func (ri *resvIdx) freeOn(c *cluster, ps *partState) (int64, int64) {
	if ri.stamp == c.free && ri.part == ps {
		return ri.free, ri.freePart
	}
	ri.stamp, ri.part, ri.free, ri.freePart = c.free, ps, 0, 0
	for _, i := range ri.idx {
		if f := int64(c.cpu[i]); f > 0 && !c.held[i] {
			ri.free += f
			if c.inPart(i, ps) {
				ri.freePart += f
			}
		}
	}
	return ri.free, ri.freePart
}

// resvLater sets up a job of a reservation that has not started yet for
// a planned start in its window (Slurm's backfill plans it at the
// window's start): no start now (the live free counts are all excluded),
// a search over the reservation's nodes, and the pending reason
// Reservation whatever placement says. Nil when it is not planned: not
// backfill, FLEX (not bound to the window), or the reservation is gone.
func (s *scheduler) resvLater(own string, ps *partState, exc []int32) *partState {
	id := s.c.resvUse
	if s.c.resvBlk == nil || id < 0 {
		return nil
	}
	rv := s.in.Reservations[id]
	if rv.Start <= s.now || rv.Flags&model.ResvFlex != 0 || len(rv.Nodes) == 0 {
		return nil
	}
	s.confined = true
	sp := s.resvPart(ps, s.resvIndices(own, resv.Verdict{Only: rv.Nodes}))
	// Blocked, the job reads Priority rather than Resources, so it never
	// asks for preemption; wait names its real reason.
	sp.blocked = true
	s.excFree, s.excFreePart = s.c.free, sp.free
	s.bfPS, s.bfExc, s.bfUntil, s.resvWait = sp, exc, rv.End-1, model.ReasonReservation
	return sp
}
