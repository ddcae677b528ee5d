package sched

import (
	"cmp"
	"math/bits"
	"slices"
)

// The backfill pass's earliest-start search: for a job that cannot start
// now, a lower bound on when it can (earliestBound, from each candidate
// node's earliest instant, nodeEarliest), and the mask that lets the
// time-ordered reservation search in considerBackfill skip the nodes that
// cannot hold the job's smallest share at a tried start (skipped).

// maskEntry is what the search knows of a node for the job being reserved:
// earliest, the first possible start of the node (see skipped), lbl its
// bound at the level the job reads (bfbounds.go); they are for the job
// when epoch is curEpoch, and earliest is exact (not a bound) when exact
// is. One entry, not an array per field: a visit read four cache lines;
// 32 bytes, so that an entry never spans two.
type maskEntry struct {
	earliest, lbl int64
	epoch, exact  uint32
	seen          seenBound // kept from job to job (bfbounds.go)
}

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
//
// Nodes are visited least bound first (bfbounds.go), and only while their
// bound is below the cap: the latest start among found nodes that
// together are enough for the job (a max-heap). A node that cannot fit by
// then is not among those that decide the bound, so its search stops
// there. It leaves the job's mask set (see skipped); unmask clears it.
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
	if c.mask == nil {
		c.mask = make([]maskEntry, len(c.nodes))
	}
	c.curEpoch++
	bs, lv, fresh := c.boundsFor(newBoundKey(r, unit, ps), limit, now)
	c.job = bfJob{r: *r, unit: unit, limit: limit, now: now, horizon: horizon, ps: ps, bs: bs, lv: lv}
	level := bs.levels[lv]
	if fresh && level.limit < never && !plainSearch {
		c.searchFresh(level)
	}
	// Excluded nodes are masked for this job only: their bounds hold for
	// the shape, not for it.
	for _, i := range exc {
		if pos := c.posIn(i, ps); pos >= 0 {
			c.touch(i, pos)
			c.mask[i].earliest, c.mask[i].exact = never, c.curEpoch
			level.set(pos, never)
		}
	}
	found := c.abuf[:0]
	defer func() { c.abuf = found[:0] }()
	best := c.hbuf[:0]
	defer func() { c.hbuf = best[:0] }()
	bestTasks := 0
	enough := func(tasks, nodes int) bool {
		return (r.pack && tasks >= r.tasks) || (!r.pack && nodes >= r.nodes)
	}
	// Leaves of nodes found within the cap read never until the walk
	// ends, so the least bound is always a node not yet visited (never:
	// no node is left that could take the job). A node found past the cap
	// reads its start at once,
	// as the end of the walk would set it: the cap only falls, so the walk
	// never reaches it again, and most visits end so (a second update of
	// the tree each).
	kept := c.kbuf[:0]
	defer func() { c.kbuf = kept[:0] }()
	limitT := horizon
	for level.root() <= limitT && level.root() < never {
		pos := level.least()
		i := ps.order[pos]
		t := c.visit(i, pos, limitT)
		if t > limitT {
			level.set(pos, c.mask[i].earliest) // past limitT (see visit)
			continue
		}
		level.set(pos, never)
		kept = append(kept, int32(pos))
		a := avail{t, max(1, c.bf.steps[i].nodeCPUs()/r.cpt)} // visit built the steps
		found = append(found, a)
		best = heapPush(best, a)
		bestTasks += a.tasks
		for len(best) > 0 && enough(bestTasks-best[0].tasks, len(best)-1) {
			bestTasks -= best[0].tasks
			best = heapPop(best)
		}
		if enough(bestTasks, len(best)) {
			limitT = min(horizon, best[0].t)
		}
	}
	for _, pos := range kept {
		level.set(int(pos), c.mask[ps.order[pos]].earliest)
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

// visit searches node i (at position pos of the job's partition): its
// earliest start at the level's limit, up to the horizon, which the level
// keeps (in lbl while the job masks it), then at the job's limit up to
// limitT, which is the node's mask entry and what the levels above keep.
// The level's search runs past the cap: a bound that stops at the cap is
// passed by the next job's cap, a little later, and the node searched
// again (most nodes, job after job, in a deep queue); its exact start
// stays right until a reservation lands on the node. The mask entry is
// exact when a start was found or the search ran to the horizon; else it
// is a bound. It returns the node's start for the job, or a time past
// limitT.
func (c *cluster) visit(i int32, pos int, limitT int64) int64 {
	j := &c.job
	bs := j.bs
	level := bs.levels[j.lv]
	lb, from := level.at(pos), int64(0)
	if c.mask[i].epoch == c.curEpoch {
		lb, from = c.mask[i].lbl, c.mask[i].earliest
	} else {
		c.touch(i, pos)
	}
	limit := level.limit
	same := limit == j.limit || limit >= never
	if same {
		limit, lb = j.limit, max(lb, from)
	}
	also := int64(0)
	if !same {
		also = j.limit
		// A job-limit bound an earlier job of the level found may put the
		// node past the cap without a search (bfbounds.go, seenBound).
		if s := c.seenFor(i, level, j.limit); s > limitT && s > from {
			m := &c.mask[i]
			m.lbl, m.earliest, m.exact = lb, s, 0
			bs.raiseAbove(j.lv, pos, s)
			return s
		}
	}
	lt, ln, fitsAlso := c.nodeEarliestAlso(i, &j.r, j.unit, limit, also, j.now, j.horizon, lb)
	c.mask[i].lbl = max(lb, min(lt, ln))
	t, next, exact := lt, ln, true
	if !same {
		// The job's own limit, from the level's start: up to the cap
		// only, since levels above keep only a bound of it anyway. Most
		// nodes fit it at the level's start, which the search above
		// checked on the entries it had read (a second search per visit
		// was a quarter of the searches of a pass).
		exact = lt >= never
		if lt <= limitT {
			if !fitsAlso || from > lt {
				t, next = c.nodeEarliest(i, &j.r, j.unit, j.limit, j.now, limitT, max(lt, from))
			}
			exact = t < never || limitT >= j.horizon
		}
	}
	m := &c.mask[i]
	m.earliest, m.exact = max(from, min(t, next)), 0
	if !same {
		c.see(i, level, j.limit, m.earliest)
	}
	if exact {
		m.exact = c.curEpoch
	}
	bs.raiseAbove(j.lv, pos, m.earliest)
	return t
}

// touch makes node i (at position pos) part of the job's mask: its level
// bound moves to lbl, where unmask finds it.
func (c *cluster) touch(i int32, pos int) {
	j := &c.job
	lb := j.bs.levels[j.lv].at(pos)
	c.mask[i] = maskEntry{earliest: lb, lbl: lb, epoch: c.curEpoch, seen: c.mask[i].seen}
	c.touched = append(c.touched, int32(pos))
}

// unmask ends the job's mask: the level it read gets back its bounds.
func (c *cluster) unmask() {
	if !c.masked {
		return
	}
	c.masked = false
	j := &c.job
	level := j.bs.levels[j.lv]
	for _, pos := range c.touched {
		// Most leaves hold it already (a search that found the node past
		// the cap leaves its mask entry at the level's bound).
		if v := c.mask[j.ps.order[pos]].lbl; level.at(int(pos)) != v {
			level.set(int(pos), v)
		}
	}
	c.touched = c.touched[:0]
}

// posIn is node i's position in ps's placement order, or -1.
func (c *cluster) posIn(i int32, ps *partState) int {
	for _, m := range c.member[i] {
		if m.part == ps {
			return int(m.pos)
		}
	}
	return -1
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
	t, next, _ := c.nodeEarliestAlso(i, r, unit, limit, 0, now, horizon, from)
	return t, next
}

// nodeEarliestAlso is nodeEarliest that also reports, when also > limit,
// whether the start found holds unit tasks for also (a longer limit) too.
func (c *cluster) nodeEarliestAlso(i int32, r *request, unit int, limit, also, now, horizon, from int64) (int64, int64, bool) {
	if c.cpu[i] < 0 {
		return never, never, false
	}
	st := c.stepsOf(i)
	ts, e := st.ts, st.e
	cpu0, mem0 := int(c.cpu[i]), c.mem[i]
	needCPU := r.cpusOn(unit, st.nodeCPUs()) // unit is 1 for a packed job
	var need holdThresholds                  // admits none until holdsFirst works them out
	// GPUs in use now (as a word: nodes of at most 64 GPUs), and those of
	// the job's type; releases and reservations apply theirs from the
	// node's steps (g: none on a node without GPUs, where typeMask is 0).
	gpuWord := false
	var gpu0, typeMask uint64
	var g []gpuStep
	if r.hasGPU() {
		nGPU, alloc := 0, uint64(0)
		if st.g != nil {
			nGPU, alloc = st.g.n, st.g.alloc
		}
		if nGPU <= 64 {
			gpuWord, g = true, st.gpu()
			gpu0 = alloc | word0(c.gpus[i])
			if r.gpuType == "" {
				typeMask = 1<<uint(nGPU) - 1 // 64 GPUs: every bit
			} else {
				for k, g := range c.nodes[i].GPUs {
					if g.Type == r.gpuType {
						typeMask |= 1 << uint(k)
					}
				}
			}
		}
	}
	// The last node's thresholds, where they are this node's too (a node
	// whose GPUs are not counted as a word leaves them to holds).
	if m := &c.need; m.epoch == c.curEpoch && r == &c.job.r && m.unit == unit && m.cpus == st.nodeCPUs() &&
		m.mem == c.nodeMem(st, i) && (gpuWord || !r.hasGPU()) && !plainSearch {
		need = m.h
	}
	// An entry whose reservations leave fewer than needCPU CPUs blocks
	// every start whose window meets it: up to the next entry, while the
	// node's base offer stays the same, later candidates are refused
	// without a look. Deep queues stack hundreds of reservations on a
	// node; a sweep over the whole window per node and job was most of a
	// pass.
	blockUntil, blockBase := int64(-1), -1
	// Candidates: now+1, then the node's own instants (cand entries)
	// after it. Those before from are not looked at: the scan starts at
	// the first entry from on, by binary search (a node gathers hundreds
	// of entries in a deep queue, and a bound is usually far into them).
	// Keys (ts) at or below first are no candidates, or not after now+1.
	first := (now+1)<<1 | 1
	x := -1 // the entry of the candidate being tried; -1: now+1
	if from > now+1 {
		x = st.find(from - 1)
		x++
	}
	for ; x < len(ts); x++ {
		t, k := now+1, x // k: the last entry at or before t
		if x < 0 {
			k = st.find(t)
		} else {
			if v := ts[x]; v&1 == 0 || v <= first {
				continue
			}
			t = ts[x] >> 1
		}
		if t >= never {
			break
		}
		if t > horizon {
			return never, t, false
		}
		baseCPU, baseMem, usedGPU := cpu0, mem0, gpu0
		if k >= 0 {
			baseCPU += int(e[k].relCPU)
			baseMem += e[k].relMem
			if g != nil {
				usedGPU &^= g[k].rel
			}
		}
		if baseCPU < needCPU {
			continue // short even before reservations count
		}
		if t < blockUntil && baseCPU == blockBase {
			continue
		}
		end := endOf(t, limit)
		if c.resvBlk != nil && c.resvBlocked(i, t, end) {
			continue // a reservation the job may not use holds the node (resvplan.go)
		}
		// One scan of the entries meeting [t, end): the first that
		// blocks, else the reserved peaks (window's answer).
		allow := int32(baseCPU - needCPU)
		var peakCPU int32
		var peakMem int64
		blocked := false
		j := max(k, 0)
		endKey := end << 1 // entries before end: keys below it
		for ; j < len(e) && ts[j] < endKey; j++ {
			if e[j].resCPU > allow {
				blockUntil, blockBase, blocked = never, baseCPU, true
				if j+1 < len(e) {
					blockUntil = ts[j+1] >> 1
				}
				break
			}
			peakCPU, peakMem = max(peakCPU, e[j].resCPU), max(peakMem, e[j].resMem)
			if g != nil {
				usedGPU |= g[j].res
			}
		}
		if blocked {
			continue
		}
		cpu, mem := baseCPU-int(peakCPU), max(0, baseMem-peakMem)
		if gpuN := bits.OnesCount64(typeMask &^ usedGPU); !need.admits(cpu, mem, gpuN) &&
			(need.known || !c.holdsFirst(i, st, r, unit, t, end, cpu, mem, gpuWord, gpuN, &need)) {
			continue
		}
		if also <= limit {
			return t, t, false
		}
		// The longer window: the same scan, on to its end.
		end = endOf(t, also)
		if c.resvBlk != nil && c.resvBlocked(i, t, end) {
			return t, t, false
		}
		endKey = end << 1
		for ; j < len(e) && ts[j] < endKey; j++ {
			if e[j].resCPU > allow {
				return t, t, false
			}
			peakCPU, peakMem = max(peakCPU, e[j].resCPU), max(peakMem, e[j].resMem)
			if g != nil {
				usedGPU |= g[j].res
			}
		}
		cpu, mem = baseCPU-int(peakCPU), max(0, baseMem-peakMem)
		gpuN := bits.OnesCount64(typeMask &^ usedGPU)
		return t, t, need.admits(cpu, mem, gpuN) || (!need.known && c.holdsFirst(i, st, r, unit, t, end, cpu, mem, gpuWord, gpuN, &need))
	}
	return never, never, false
}

// holdNeed is what a node of nodeCPUs CPUs and nodeMem MiB must offer
// over a window to hold unit tasks of r (a packed job: one), as holds
// decides it: at least cpu CPUs, mem MiB and gpu GPUs of the job's type;
// ok is false when no offer does. Each of holds' tests compares one of the
// three with an amount fixed by the request and the node, so the three
// thresholds say what it says: the earliest-start search compares them at
// every start it tries, where holds worked the request's arithmetic out
// again at each (1.3 M times in the unbounded 10k x 50k pass).
func (r *request) holdNeed(unit, nodeCPUs int, nodeMem int64) (cpu int, mem int64, gpu int, ok bool) {
	if r.pack {
		// capTasksOn(1, ...) > 0.
		cpu, gpu = r.cpusOn(1, nodeCPUs), max(0, r.gpuNode, r.gpuTask)
		if r.exclusive && nodeCPUs < r.cpt {
			return 0, 0, 0, false
		}
		switch r.mem {
		case memPerGPU:
			mem = r.memOnG(0, r.gpusOn(1), nodeMem)
		case memPerCPU:
			if r.exclusive {
				mem = min(r.memVal*int64(nodeCPUs), nodeMem)
			} else if per := r.memVal * int64(r.cpt); per > 0 {
				mem = per
			}
		case memFixed, memWholeNode:
			mem = r.memOn(0, nodeMem)
		}
		return max(cpu, r.cpt), mem, gpu, true
	}
	// fits(unit, ...); an exclusive job's CPUs are the node's.
	cpus := r.cpusOn(unit, nodeCPUs)
	if unit < 1 || cpus < unit*r.cpt {
		return 0, 0, 0, false
	}
	gpu = r.gpusOn(unit)
	return max(cpus, 0), r.memOnG(cpus, gpu, nodeMem), gpu, true
}

// holdThresholds is holdNeed's answer for one node, once known.
type holdThresholds struct {
	cpu, gpu  int
	mem       int64
	ok, known bool
}

// admits reports whether an offer meets the thresholds.
func (h *holdThresholds) admits(cpu int, mem int64, gpu int) bool {
	return h.ok && cpu >= h.cpu && mem >= h.mem && gpu >= h.gpu
}

// holdsFirst is holds for the earliest-start search's first test of a
// node: it works out the thresholds in need, which later tests of the node
// compare the offer with (admits), where the GPUs offered are counted
// already (else holds counts them, and need stays unknown).
func (c *cluster) holdsFirst(i int32, st *nodeSteps, r *request, unit int, t, end int64, cpu int, mem int64, gpuWord bool, gpu int, need *holdThresholds) bool {
	if !gpuWord && r.hasGPU() {
		return c.holds(i, st, r, unit, t, end, cpu, mem, gpuWord, gpu)
	}
	need.cpu, need.mem, need.gpu, need.ok = r.holdNeed(unit, st.nodeCPUs(), c.nodeMem(st, i))
	need.known = true
	if r == &c.job.r {
		c.need = needMemo{epoch: c.curEpoch, unit: unit, cpus: st.nodeCPUs(), mem: c.nodeMem(st, i), h: *need}
	}
	return need.admits(cpu, mem, gpu)
}

// needMemo is the thresholds holdsFirst last worked out for the job being
// reserved (c.job, while curEpoch is epoch), for nodes of cpus CPUs and
// mem MiB: a cluster's nodes are mostly alike, and every search of a node
// worked them out again at its first test (611 k times in the unbounded
// 10k x 50k pass, a fortieth of it). Only what holdNeed reads is in the
// key (the request is the job's, unchanged within the epoch); a node
// whose GPUs holdsFirst does not count as a word never sets it, and the
// GPU threshold is a count whatever the node's GPUs are.
type needMemo struct {
	epoch uint32
	unit  int
	cpus  int
	mem   int64
	h     holdThresholds
}

// holds reports whether node i, offering cpu CPUs and mem MiB over
// [t, end), holds unit tasks of r (a packed job: one); with gpuWord,
// gpu is its free GPUs of the job's type, else they are counted here.
func (c *cluster) holds(i int32, st *nodeSteps, r *request, unit int, t, end int64, cpu int, mem int64, gpuWord bool, gpu int) bool {
	if !gpuWord {
		gpu = 0
		if r.hasGPU() && cpu > 0 {
			gpu = c.windowGPUFreeEach(i, t, end, r.gpuType)
		}
	}
	if r.pack {
		return r.capTasksOn(1, cpu, mem, gpu, st.nodeCPUs(), c.nodeMem(st, i)) > 0
	}
	_, _, ok := r.fits(unit, cpu, mem, gpu, st.nodeCPUs(), c.nodeMem(st, i))
	return ok
}

// A node whose own earliest instant (earliestBound) is after the
// window's start cannot hold even the job's smallest share then: a node's
// offer over [t, t+limit) only improves at its own releases and
// reservation ends, so it would have offered as much at the last of those
// before t. While masked, viewWindow skips such nodes without looking.
//
// A node's mask entry is its leaf in the level the job reads (bfbounds.go),
// so nextMasked finds the nodes it admits without stepping over the
// others: for a node the job visited, its earliest start for the job (or
// a bound on it); for the others, the level's bound.
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
	j := &c.job
	if c.mask[i].epoch != c.curEpoch {
		pos := c.posIn(i, j.ps)
		if pos < 0 || j.bs.levels[j.lv].at(pos) > c.winA {
			return true
		}
		c.refine(i, pos)
	} else if c.mask[i].earliest <= c.winA && c.mask[i].exact != c.curEpoch {
		c.refine(i, c.posIn(i, j.ps))
	}
	return c.mask[i].earliest > c.winA
}

// refine replaces node i's mask entry, a lower bound, with its earliest
// start for the job being reserved (c.job), and records what it found as
// bounds for later jobs of the shape.
func (c *cluster) refine(i int32, pos int) {
	j := &c.job
	c.visit(i, pos, j.horizon)
	j.bs.levels[j.lv].set(pos, c.mask[i].earliest)
}

// nextMasked is next for viewWindow while a job's mask is set: the first
// position at or after from, in the job's partition, whose mask admits a
// start at winA and whose window meets the thresholds.
func (c *cluster) nextMasked(ps *partState, from, minCPU, minIdle int, minMem int64) int {
	j := &c.job
	level := j.bs.levels[j.lv]
	for {
		pos := level.firstAtMost(from, c.winA)
		if pos < 0 || pos >= len(ps.order) {
			return -1
		}
		i := ps.order[pos]
		cpu, mem := c.freeOn(viewWindow, i)
		if cpu >= minCPU && mem >= minMem && (minIdle == 0 || cpu >= c.nodes[i].CPUs) {
			return pos
		}
		from = pos + 1
	}
}
