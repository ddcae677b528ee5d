package sched

// The reservation search for a packed job (-n only), kept across the
// starts it tries.
//
// considerBackfill tries starts in time order and runs first-fit at each
// until one holds the job. A packed job's bound (earliestBound) counts a
// whole node of tasks for each node that can take one task, so on a busy
// cluster first-fit at the bound and at the next dozen starts walks every
// admitted node and fails (17.6 k failed placements for 1.4 k packed jobs,
// half the search's time, in the unbounded 10k x 50k pass). First-fit
// with only -n given succeeds exactly when the admitted nodes together
// offer the job's tasks (each takes what it can, in order, until none is
// left), so the search keeps that sum instead: each admitted node's tasks
// and the instant until which they hold, in a heap by that instant. A
// tried start re-reads only the nodes whose offer may have changed and
// the nodes newly admitted; first-fit runs once, at the first start the
// sum covers, and picks the same nodes it always did.

// packEntry is an admitted node's offer: tasks from the last start it was
// read at until (not including) until.
type packEntry struct {
	until int64
	node  int32
	tasks int
}

// packSearch is the sum of the admitted nodes' offers for the job being
// reserved, for the start last tried. Admitted nodes' leaves in the level
// the job reads are set to never, so the level's least bound is the next
// node to admit; their positions are in pos until restore.
type packSearch struct {
	on   bool
	sum  int
	heap []packEntry
	pos  []int32
}

// plainSearch turns off the reservation search's shortcuts that must not
// change a plan (the running sum here, new levels' bounds from other
// shapes in bfseed.go, job-limit bounds in bfbounds.go, the thresholds
// kept from node to node in bfsearch.go), so tests can
// compare plans made with and without them.
var plainSearch bool

// packable reports whether the reservation search for r may use the
// running sum: a packed job with no named nodes or node cap, whose mask is
// set, in a pass that plans no reservation windows (those end a node's
// offer at times of their own).
func (c *cluster) packable(r *request, req []int32, ps *partState) bool {
	return !plainSearch && r.pack && len(req) == 0 && r.maxNodes == 0 && c.masked && ps == c.job.ps && c.resvBlk == nil
}

// packStart begins the running sum for the job just masked.
func (c *cluster) packStart() {
	pk := &c.bf.pack
	pk.on, pk.sum, pk.heap, pk.pos = true, 0, pk.heap[:0], pk.pos[:0]
}

// packEnough brings the sum to start t (window [t, end)) and reports
// whether the admitted nodes offer every task of the job. Starts must be
// tried in increasing order.
func (c *cluster) packEnough(t, end int64) bool {
	pk := &c.bf.pack
	j := &c.job
	for len(pk.heap) > 0 && pk.heap[0].until <= t {
		e := pk.heap[0]
		pk.heap = packPop(pk.heap)
		pk.sum -= e.tasks
		c.packAdd(e.node, t, end)
	}
	level := j.bs.levels[j.lv]
	for level.root() <= t {
		pos := level.least()
		i := j.ps.order[pos]
		// skipped's test: a bound admitting t is made exact first.
		if c.mask[i].epoch != c.curEpoch || c.mask[i].exact != c.curEpoch {
			c.refine(i, pos)
		}
		if c.mask[i].earliest > t {
			continue // refine left the leaf at its exact start
		}
		level.set(pos, never)
		pk.pos = append(pk.pos, int32(pos))
		c.packAdd(i, t, end)
	}
	return pk.sum >= j.r.tasks
}

// packAdd reads node i's offer for the job over [t, end) as first-fit
// would, adds it to the sum and keeps it until it may change.
func (c *cluster) packAdd(i int32, t, end int64) {
	pk := &c.bf.pack
	r := &c.job.r
	n := c.nodes[i]
	cpu, mem, _ := c.window(i, t, end, false)
	tasks := 0
	// nextMasked's thresholds, then take's count (placePack).
	minIdle := 0
	if r.exclusive {
		minIdle = r.cpt
	}
	if cpu >= r.cpt && mem >= r.memThreshold(r.cpt) && (minIdle == 0 || cpu >= n.CPUs) {
		gpu := 0
		if r.hasGPU() {
			gpu = c.windowGPUFree(i, t, end, r.gpuType)
		}
		tasks = r.capTasks(r.tasks, cpu, mem, gpu, n)
	}
	pk.sum += tasks
	if c.cpu[i] < 0 {
		return // it never offers anything
	}
	if until := c.offerUntil(i, t, end); until < never {
		pk.heap = packPush(pk.heap, packEntry{until: until, node: i, tasks: tasks})
	}
}

// offerUntil is the first start after t at which node i's offer over
// [start, start+limit) may differ from its offer over [t, end): the next
// entry of its steps (a release, or the end or start of a reservation the
// window leaves), or the start of an entry at or after end minus the
// limit (an entry the window enters). window reads nothing else that
// changes.
func (c *cluster) offerUntil(i int32, t, end int64) int64 {
	st := c.stepsOf(i)
	until := never
	if k := st.find(t) + 1; k < len(st.e) {
		until = st.at(k)
	}
	if end < never {
		if k := st.find(end-1) + 1; k < len(st.e) {
			until = min(until, st.at(k)-(end-t)+1)
		}
	}
	return until
}

// packRestore gives the admitted nodes back their leaves (their exact
// starts) before first-fit reads the level, and ends the running sum.
func (c *cluster) packRestore() {
	pk := &c.bf.pack
	j := &c.job
	level := j.bs.levels[j.lv]
	for _, pos := range pk.pos {
		level.set(int(pos), c.mask[j.ps.order[pos]].earliest)
	}
	pk.on, pk.pos, pk.heap = false, pk.pos[:0], pk.heap[:0]
}

// packPush and packPop keep a min-heap of packEntry by until.
func packPush(h []packEntry, e packEntry) []packEntry {
	h = append(h, e)
	for k := len(h) - 1; k > 0; {
		up := (k - 1) / 2
		if h[up].until <= h[k].until {
			break
		}
		h[up], h[k] = h[k], h[up]
		k = up
	}
	return h
}

func packPop(h []packEntry) []packEntry {
	last := len(h) - 1
	h[0] = h[last]
	h = h[:last]
	for k := 0; ; {
		l, r, small := 2*k+1, 2*k+2, k
		if l < len(h) && h[l].until < h[small].until {
			small = l
		}
		if r < len(h) && h[r].until < h[small].until {
			small = r
		}
		if small == k {
			return h
		}
		h[k], h[small] = h[small], h[k]
		k = small
	}
}
