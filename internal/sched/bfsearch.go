package sched

import (
	"cmp"
	"slices"
)

// The backfill pass's earliest-start search: for a job that cannot start
// now, a lower bound on when it can (earliestBound, from each candidate
// node's earliest instant, nodeEarliest), and the mask that lets the
// time-ordered reservation search in considerBackfill skip the nodes that
// cannot hold the job's smallest share at a tried start (skipped).

// avail is one node's earliest instant and the tasks it could take.
type avail struct {
	t     int64
	tasks int
}

// earliestBound is a time before which j cannot start, found node by
// node: each candidate node's first instant (its own releases and
// reservation ends) at which it could hold the smallest share of the job
// for the job's whole time limit; the job needs several such nodes (its
// -N, or enough for its tasks), so the bound is the instant by which
// enough nodes have come free. The time-ordered search starts there,
// skipping the instants at which placing the job is bound to fail. never
// means no set of nodes frees up within the horizon.
func (c *cluster) earliestBound(ps *partState, r *request, req, exc []int32, limit, now, horizon int64) int64 {
	if len(req) > 0 {
		return now // named nodes: leave it to the exact search
	}
	c.masked = true
	unit := 1 // tasks on a node in the smallest share
	if !r.pack {
		unit = r.big
		if r.nBig < r.nodes {
			unit = r.big - 1
		}
		unit = max(1, unit)
	}
	if c.earliest == nil {
		c.earliest = make([]int64, len(c.nodes))
		c.epoch = make([]uint32, len(c.nodes))
		c.exact = make([]uint32, len(c.nodes))
	}
	c.curEpoch++
	cands := ps.order
	if r.hasGPU() {
		u := unit
		if r.pack {
			u = 1
		}
		cands = c.gpuNodes(ps, r.gpuType, r.gpusOn(u))
	}
	found := c.abuf[:0]
	defer func() { c.abuf = found[:0] }()
	// best is a max-heap (by time) of found nodes that together are
	// enough for the job; its top is a cap: a node that cannot fit by
	// then is not among those that decide the bound, so its search stops
	// there (and its mask entry says "not before cap+1", still a lower
	// bound). Small jobs then look at a few instants per node.
	best := c.hbuf[:0]
	defer func() { c.hbuf = best[:0] }()
	bestTasks := 0
	enough := func(tasks, nodes int) bool {
		return (r.pack && tasks >= r.tasks) || (!r.pack && nodes >= r.nodes)
	}
	bs, lb := c.boundsFor(newBoundKey(r, unit), limit)
	c.job = bfJob{r: *r, unit: unit, limit: limit, now: now, horizon: horizon, bs: bs}
	capT := int64(-1) // the cap once enough nodes are found
	visit := func(i int32) {
		c.earliest[i], c.epoch[i], c.exact[i] = never, c.curEpoch, c.curEpoch
		if c.cpu[i] < 0 || inSorted(exc, i) {
			return
		}
		n := c.nodes[i]
		limitT := horizon
		if enough(bestTasks, len(best)) {
			limitT = min(horizon, best[0].t)
		}
		if lb[i] > limitT {
			// An earlier search already ruled out every instant up to
			// the cap (bfbounds.go).
			if limitT < horizon {
				c.earliest[i], c.exact[i] = lb[i], 0
			}
			return
		}
		t, next := c.nodeEarliest(i, r, unit, limit, now, limitT, lb[i])
		if t >= never {
			if limitT < horizon {
				c.earliest[i], c.exact[i] = next, 0
			}
			bs.raise(i, limit, next)
			return
		}
		c.earliest[i] = t
		bs.raise(i, limit, t)
		a := avail{t, max(1, n.CPUs/r.cpt)}
		found = append(found, a)
		best = heapPush(best, a)
		bestTasks += a.tasks
		for len(best) > 0 && enough(bestTasks-best[0].tasks, len(best)-1) {
			bestTasks -= best[0].tasks
			best = heapPop(best)
		}
		if enough(bestTasks, len(best)) {
			capT = min(horizon, best[0].t)
		}
	}
	// The nodes with the least bounds first (a few scans of the bounds):
	// found early, they make the cap tight for every other node.
	for seeds := 0; seeds < 8 && !enough(bestTasks, len(best)); seeds++ {
		bi, bv := int32(-1), never
		for _, i := range cands {
			if lb[i] < bv && c.epoch[i] != c.curEpoch && c.cpu[i] >= 0 {
				bi, bv = i, lb[i]
			}
		}
		if bi < 0 {
			break
		}
		visit(bi)
	}
	for _, i := range cands {
		if c.epoch[i] == c.curEpoch {
			continue
		}
		if capT >= 0 && capT < horizon && lb[i] > capT && c.cpu[i] >= 0 && len(exc) == 0 {
			// visit's answer for a node its bound rules out, without
			// the call: most nodes, in a deep queue.
			c.earliest[i], c.epoch[i], c.exact[i] = lb[i], c.curEpoch, 0
			continue
		}
		visit(i)
	}
	slices.SortFunc(found, func(a, b avail) int { return cmp.Compare(a.t, b.t) })
	tasks, nodes := 0, 0
	for _, f := range found {
		tasks += f.tasks
		nodes++
		if (r.pack && tasks >= r.tasks) || (!r.pack && nodes >= r.nodes) {
			return f.t
		}
	}
	return never
}

// nodeEarliest is the first instant after now (within the horizon) at
// which node i can hold unit tasks of r over a whole time limit.
//
// Candidates are the node's own instants (now+1, its releases, its
// reservation ends) in time order: the first that fits is the answer. What
// the node offers over [t, t+limit) is window's answer, computed here in
// one sweep: releases up to t are added as t advances, and the reserved
// peak over the window is a sliding maximum over the node's reservation
// step function (both ends of the window only move forward), so a node
// holding k reservations costs O(k log k), not k windows of O(k) each.
//
// from is a known lower bound on the answer: earlier candidates are not
// looked at. When no instant up to the horizon fits (the first result is
// never), the second is still a lower bound: the first of the node's
// instants past the horizon (never when none is left), since nothing
// between two instants fits that did not fit at the first. Raising a
// node's bound to it rather than to horizon+1 spares later searches the
// instants this one refused: in a deep queue each job's cap is a little
// later than the last one's, and every node refused up to it was searched
// again.
func (c *cluster) nodeEarliest(i int32, r *request, unit int, limit, now, horizon, from int64) (int64, int64) {
	if c.cpu[i] < 0 {
		return never, never
	}
	n := c.nodes[i]
	p := c.bf
	rel, res := p.rel[i], p.res[i]
	st := c.stepsOf(i)
	baseCPU, baseMem := int(c.cpu[i]), c.mem[i]
	needCPU := r.cpusOn(unit, n.CPUs) // unit is 1 for a packed job
	k := 0                            // releases counted
	at := 0                           // the reserved-use interval holding t (or the first after it)
	// A reserved-use interval that leaves fewer than needCPU CPUs blocks
	// every start whose window meets it: up to its end, while no release
	// raises the base, later candidates are refused without a look. Deep
	// queues stack hundreds of reservations on a node; a sweep over the
	// whole window per node and job was most of a pass.
	blockUntil, blockBase := int64(-1), -1
	for x := -1; x < len(st.ts); x++ {
		t := now + 1
		if x >= 0 {
			if t = st.ts[x]; t <= now+1 {
				continue
			}
		}
		if t >= never {
			break
		}
		if t > horizon {
			return never, t
		}
		for ; k < len(rel) && rel[k].t <= t; k++ {
			baseCPU += int(rel[k].cpu)
			baseMem += rel[k].mem
		}
		if baseCPU < needCPU || t < from {
			continue // short even before reservations count
		}
		if t < blockUntil && baseCPU == blockBase {
			continue
		}
		end := endOf(t, limit)
		cpu, mem := baseCPU, baseMem
		if len(res) > 0 {
			for at+1 < len(st.at) && st.at[at+1] <= t {
				at++
			}
			// One scan of the intervals meeting [t, end): the first that
			// blocks, else the reserved peaks (window's answer).
			allow := int32(baseCPU - needCPU)
			var peakCPU int32
			var peakMem int64
			blocked := false
			for j := at; j < len(st.at) && st.at[j] < end; j++ {
				if st.cpu[j] > allow {
					blockUntil, blockBase, blocked = never, baseCPU, true
					if j+1 < len(st.at) {
						blockUntil = st.at[j+1]
					}
					break
				}
				peakCPU, peakMem = max(peakCPU, st.cpu[j]), max(peakMem, st.mem[j])
			}
			if blocked {
				continue
			}
			cpu, mem = cpu-int(peakCPU), max(0, mem-peakMem)
		}
		gpu := 0
		if r.hasGPU() && cpu > 0 {
			gpu = c.windowGPUFree(i, t, end, r.gpuType)
		}
		if r.pack {
			if r.capTasks(1, cpu, mem, gpu, n) > 0 {
				return t, t
			}
		} else if _, _, ok := r.fits(unit, cpu, mem, gpu, n); ok {
			return t, t
		}
	}
	return never, never
}

// A node whose own earliest instant (earliestBound) is after the
// window's start cannot hold even the job's smallest share then: a node's
// offer over [t, t+limit) only improves at its own releases and
// reservation ends, so it would have offered as much at the last of those
// before t. While masked, viewWindow skips such nodes without looking.
//
// Only nodes earliestBound looked at for the current job (epoch) carry an
// entry; the others cannot hold the job's GPUs at all.
//
// An entry that is only a bound (the search stopped at its cap, or an
// earlier job's bound ruled the node out) is made exact the first time a
// window reaches it: the reservation search retries later instants when
// the nodes that fit one by one do not fit together (packed and
// multi-node jobs), and every retry would otherwise ask window about
// every node past the cap.
func (c *cluster) skipped(i int32) bool {
	if !c.masked {
		return false
	}
	if c.epoch[i] != c.curEpoch {
		return true
	}
	if c.earliest[i] <= c.winA && c.exact[i] != c.curEpoch {
		c.refine(i)
	}
	return c.earliest[i] > c.winA
}

// refine replaces node i's mask entry, a lower bound, with its earliest
// start for the job being reserved (c.job), and records it as a bound
// for later jobs of the shape.
func (c *cluster) refine(i int32) {
	j := &c.job
	c.exact[i] = c.curEpoch
	t, next := c.nodeEarliest(i, &j.r, j.unit, j.limit, j.now, j.horizon, c.earliest[i])
	if t >= never {
		c.earliest[i] = never
		j.bs.raise(i, j.limit, next)
		return
	}
	c.earliest[i] = t
	j.bs.raise(i, j.limit, t)
}
