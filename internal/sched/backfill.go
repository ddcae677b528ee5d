package sched

import (
	"cmp"
	"math"
	"slices"

	"github.com/drover-hpc/drover/internal/model"
)

// never is the end of a job without a time limit: it holds what it has
// for as long as the profile looks.
const never = int64(math.MaxInt64 / 4)

// profile is the backfill pass's picture of the future, per node: when
// running jobs (and jobs started earlier in this plan) give their
// resources back, and what jobs that cannot start now have reserved from
// their planned start on. Together with the cluster's live free counts it
// answers "what does node i offer for the whole window [a, b)?", which is
// what lets a lower-ordered job start now, or be reserved later, without
// delaying any reservation made before it.
//
// The answer is conservative: releases inside the window are ignored and
// reservations overlapping it count at their peak, so a job placed by it
// can never push a reserved job back; it may at worst wait a little
// longer than an exact profile would make it.
type profile struct {
	rel [][]release // per node
	res [][]reserve // per node
	// deltas is the whole cluster's free CPU count as a step function
	// from the live count on: +CPUs at releases and reservation ends,
	// -CPUs at reservation starts, by time. It bounds what any window
	// can offer, so most candidate starts are refused without looking at
	// a node. Its entries also mark the instants when something is
	// released: the starts the reservation search tries (bfinstants.go).
	deltas deltaList
	// reservations made per user, for bf_max_job_user, and in all.
	perUser map[uint32]int
	count   int
	planned []bool // per node: in Plan.PlannedNodes
	// steps caches each node's instants and reserved-use step function
	// (bfsteps.go), built when first read; once built, addRelease and
	// reserve keep it current, so code that appends to rel[i] or res[i]
	// any other way must reset steps[i].
	steps []nodeSteps
	// newDeltas gathers additions until the search reads deltas
	// (settle): a pass starts thousands of jobs between two
	// reservations.
	newDeltas []delta
	pack      packSearch // bfpack.go
	// relSlab and resSlab give each node's first releases and
	// reservations their room: a deep pass grew ten thousand lists from
	// one entry by doubling, a fifth of its allocations.
	relSlab []release
	resSlab []reserve
}

// slabRoom is how many entries a node's list gets from a slab.
const slabRoom = 8

// fromSlab returns an empty slice with room for slabRoom entries, cut from
// *slab (refilled with room for 256 lists when empty).
func fromSlab[E any](slab *[]E) []E {
	if len(*slab) < slabRoom {
		*slab = make([]E, 256*slabRoom)
	}
	s := (*slab)[:0:slabRoom]
	*slab = (*slab)[slabRoom:]
	return s
}

// delta is the change of the free CPU count at t; release marks t as an
// instant when something is released.
type delta struct {
	t       int64
	cpu     int64
	release bool
}

// addDelta records a change of cpu free CPUs at t, and with release that
// something is released then.
func (p *profile) addDelta(t, cpu int64, release bool) {
	if t >= never || (cpu == 0 && !release) {
		return
	}
	p.newDeltas = append(p.newDeltas, delta{t, cpu, release})
}

// settle adds the gathered deltas to deltas.
func (p *profile) settle() {
	for _, d := range p.newDeltas {
		p.deltas.add(d)
	}
	p.newDeltas = p.newDeltas[:0]
}

type release struct {
	t    int64
	cpu  int32
	mem  int64
	gpus model.Bitmap
}

type reserve struct {
	from, to int64
	cpu      int32
	mem      int64
	gpus     model.Bitmap
}

func newProfile(n int) *profile {
	return &profile{rel: make([][]release, n), res: make([][]reserve, n), perUser: map[uint32]int{},
		steps: make([]nodeSteps, n), planned: make([]bool, n)}
}

// addRunning records when job j (running, completing, or started in this
// plan) gives back what it holds. A job past its limit (being killed) or
// completing is counted as ending in a second.
func (p *profile) addRunning(c *cluster, j *model.Job, end, now int64) {
	end = max(end, now+1)
	if j.Completing {
		end = now + 1
	}
	for _, a := range j.Alloc {
		i, ok := c.index[a.Node]
		if !ok {
			continue
		}
		cpu := int32(a.CPUs)
		if j.SchedSuspended {
			cpu = 0 // its CPUs are already free (lent while it is suspended)
		}
		p.addRelease(i, release{t: end, cpu: cpu, mem: a.Mem, gpus: a.GPUs})
	}
}

func (p *profile) addRelease(i int32, r release) {
	// Kept sorted by time so window stops at the first later one.
	k, _ := slices.BinarySearchFunc(p.rel[i], r.t, func(x release, t int64) int { return cmp.Compare(x.t, t+1) })
	if p.rel[i] == nil {
		p.rel[i] = fromSlab(&p.relSlab)
	}
	p.rel[i] = slices.Insert(p.rel[i], k, r)
	if p.steps[i].built() {
		p.steps[i].addRelease(r)
	}
	p.addDelta(r.t, int64(r.cpu), true)
}

// window is what node i offers over [a, b), or cpu < 0 when it takes no
// new work. With wantGPU, used is the node's GPUs taken at some point of
// the window (building it allocates, so CPU-only questions skip it).
func (c *cluster) window(i int32, a, b int64, wantGPU bool) (cpu int, mem int64, used model.Bitmap) {
	if c.cpu[i] < 0 || (c.resvBlk != nil && c.resvBlocked(i, a, b)) {
		return -1, 0, nil
	}
	cpu, mem = int(c.cpu[i]), c.mem[i]
	p := c.bf
	st := c.stepsOf(i)
	if wantGPU && st.g != nil && st.g.n <= 64 {
		// Indices, for the GPUs a start or a reservation takes (counts
		// come from windowGPUFree): as a word from the steps, where a
		// bitmap per release and reservation of the node was allocated.
		if w := st.gpuWindow(st.g.alloc|word0(c.gpus[i]), a, b); w != 0 {
			used = model.Bitmap{w}
		}
	} else if n := c.nodes[i]; wantGPU && len(n.GPUs) > 0 {
		used = n.AllocGPUs.Or(c.gpus[i])
		for _, r := range p.rel[i] {
			if r.t <= a {
				used = used.AndNot(r.gpus)
			}
		}
		for _, r := range p.res[i] {
			if r.from < b && r.to > a {
				used = used.Or(r.gpus)
			}
		}
	}
	k := st.find(a)
	if k >= 0 {
		cpu += int(st.e[k].relCPU)
		mem += st.e[k].relMem
	}
	if len(p.res[i]) == 0 {
		return cpu, mem, used
	}
	// Once the peak takes every CPU the node offers it offers nothing,
	// whatever the rest. Memory reserved beyond what is free now (a
	// running job's release counted in) leaves none, not a debt.
	var peakCPU int32
	var peakMem int64
	for k = max(k, 0); k < len(st.e) && st.at(k) < b; k++ {
		peakCPU, peakMem = max(peakCPU, st.e[k].resCPU), max(peakMem, st.e[k].resMem)
	}
	if int(peakCPU) >= cpu {
		return -1, 0, used
	}
	return cpu - int(peakCPU), max(0, mem-peakMem), used
}

// conflicts reports whether picks made on live counts would, over
// [now, end), take something a reservation holds.
func (c *cluster) conflicts(picks []pick, r *request, now, end int64) bool {
	for _, p := range picks {
		if len(c.bf.res[p.node]) == 0 {
			continue
		}
		cpu, mem, _ := c.window(p.node, now, end, false)
		if cpu < p.cpus || mem < p.mem {
			return true
		}
		if p.gpus > 0 && c.windowGPUFree(p.node, now, end, r.gpuType) < p.gpus {
			return true
		}
	}
	return false
}

// windowGPUFree is how many of node i's GPUs of type typ ("" = any) are
// free over all of [a, b): the count of window's used bitmap, without
// building one (placement asks this for every node it looks at).
func (c *cluster) windowGPUFree(i int32, a, b int64, typ string) int {
	if len(c.nodes[i].GPUs) <= 64 {
		return c.windowGPUFree64(i, a, b, typ)
	}
	return c.windowGPUFreeEach(i, a, b, typ)
}

// windowGPUFreeEach is windowGPUFree one GPU at a time.
func (c *cluster) windowGPUFreeEach(i int32, a, b int64, typ string) int {
	n := c.nodes[i]
	p := c.bf
	free := 0
	for k, g := range n.GPUs {
		if typ != "" && g.Type != typ {
			continue
		}
		used := n.AllocGPUs.Has(k) || c.gpus[i].Has(k)
		if used {
			for _, r := range p.rel[i] {
				if r.t > a {
					break
				}
				if r.gpus.Has(k) {
					used = false
					break
				}
			}
		}
		if !used {
			for _, r := range p.res[i] {
				if r.from < b && r.to > a && r.gpus.Has(k) {
					used = true
					break
				}
			}
		}
		if !used {
			free++
		}
	}
	return free
}

// countFree counts node i's GPUs of type typ ("" = any) not in used.
func (c *cluster) countFree(i int32, used model.Bitmap, typ string) int {
	free := 0
	for k, g := range c.nodes[i].GPUs {
		if (typ == "" || g.Type == typ) && !used.Has(k) {
			free++
		}
	}
	return free
}

// reserve books picks on their nodes over [from, to), choosing GPU
// indices free over the whole window.
func (c *cluster) reserve(picks []pick, gpuType string, from, to int64) {
	var cpus int64
	for _, p := range picks {
		rv := reserve{from: from, to: to, cpu: int32(p.cpus), mem: p.mem}
		if p.gpus > 0 {
			n := c.nodes[p.node]
			_, _, used := c.window(p.node, from, to, true)
			rv.gpus, _ = used.FirstFree(p.gpus, len(n.GPUs), func(id int) bool {
				return gpuType == "" || n.GPUs[id].Type == gpuType
			})
		}
		if c.bf.res[p.node] == nil {
			c.bf.res[p.node] = fromSlab(&c.bf.resSlab)
		}
		c.bf.res[p.node] = append(c.bf.res[p.node], rv)
		if c.bf.steps[p.node].built() {
			c.bf.steps[p.node].addReserve(rv)
		}
		cpus += int64(p.cpus)
	}
	c.bf.addDelta(from, -cpus, false)
	c.bf.addDelta(to, cpus, true)
}

// placeLive is place on the live view, which fails at once for a request
// that failed there before in the pass, when neither names nor excludes
// nodes. Within a pass the live view only shrinks (starts take resources,
// block holds nodes back; nothing is given back until the next pass), and
// first-fit fails exactly when no set of nodes can take the job, so a
// failure stays one. Once a deep queue fills the cluster, most jobs fail
// to start now, many of them with a request that failed before, and each
// failure walked the partition tree down every subtree whose maxima (of
// different nodes) met the request: live placement's walks were 79 M of
// the 2.26 G instructions of the unbounded 10k x 50k pass. (A packed
// request bounded in nodes fails exactly then too since placePackWidest:
// first-fit alone, running out of nodes, failed and then succeeded once
// the node it took first was full; TestLiveMissMaxNodes.)
func (s *scheduler) placeLive(ps *partState, r *request, req, exc []int32) ([]pick, bool) {
	if len(req) > 0 || len(exc) > 0 || plainSearch {
		return s.c.place(viewLive, ps, r, req, exc)
	}
	k := liveKey{ps: ps, r: *r}
	if _, miss := s.liveMiss[k]; miss {
		return nil, false
	}
	picks, ok := s.c.place(viewLive, ps, r, req, exc)
	if !ok {
		if s.liveMiss == nil {
			s.liveMiss = map[liveKey]struct{}{}
		}
		s.liveMiss[k] = struct{}{}
	}
	return picks, ok
}

// liveKey is a request placed in a partition (placeLive).
type liveKey struct {
	ps *partState
	r  request
}

// jobLimit is how long j may run once started: its time limit, else the
// partition's DefaultTime, else its MaxTime; 0 means no limit.
func jobLimit(j *model.Job, p *model.Partition) int64 {
	limit := j.TimeLimit
	if limit <= 0 && limit != model.Unlimited && p != nil {
		limit = p.DefaultTime
		if limit <= 0 && limit != model.Unlimited {
			limit = p.MaxTime
		}
	}
	if limit <= 0 {
		return 0
	}
	return limit
}

func endOf(start, limit int64) int64 {
	if limit <= 0 || start >= never-limit {
		return never
	}
	return start + limit
}

// initBackfill builds the release profile from the running jobs.
func (s *scheduler) initBackfill() {
	s.c.bf = s.sc.newProfile(len(s.c.nodes))
	for _, j := range s.in.Running {
		if j == nil || len(j.Alloc) == 0 {
			continue
		}
		limit := jobLimit(j, s.in.Partitions[j.Partition])
		s.c.bf.addRunning(s.c, j, endOf(j.StartTime, limit), s.now)
	}
}

// considerBackfill places a job that passed every gate under the backfill
// policy: it starts now if that delays no reservation made for a
// higher-ordered job; otherwise it gets a reservation of its own at the
// earliest time it fits (while bf_max_job_test, bf_max_job_user and
// bf_window allow), which lower-ordered jobs must then respect.
func (s *scheduler) considerBackfill(j *model.Job, ps *partState, r *request, req, exc []int32) {
	limit := jobLimit(j, ps.p)
	end := s.resvEnd(endOf(s.now, limit)) // a reservation's end ends its jobs (resvplan.go)
	var picks []pick
	liveFits := s.c.free-s.excFree >= r.minCPUs() && ps.free-s.excFreePart >= r.minCPUs()
	if liveFits {
		picks, liveFits = s.placeLive(ps, r, req, exc)
	}
	fits := liveFits
	if fits && s.c.bf.count > 0 && s.c.conflicts(picks, r, s.now, end) {
		picks, fits = s.c.placeAvoiding(ps, r, req, exc, s.now, end)
	}
	if fits {
		// GPUs are counted as indices: the ones chosen must be outside
		// those reserved over the job's limit, or the reservation that
		// counted on them would find them taken.
		for k := range picks {
			if p := &picks[k]; p.gpus > 0 && len(s.c.bf.res[p.node]) > 0 {
				_, _, p.avoid = s.c.window(p.node, s.now, end, true)
			}
		}
		s.c.commit(picks, r.gpuType)
		for _, p := range picks {
			s.c.bf.addRelease(p.node, release{t: end, cpu: int32(p.cpus), mem: p.mem, gpus: p.gpuIDs})
		}
		s.start(j, picks)
		return
	}
	// Resources for the first job of a partition that cannot start;
	// Priority for the jobs behind it, and for a job that would fit now
	// but for what is reserved for higher-ordered ones.
	reason := model.ReasonResources
	if ps.blocked || liveFits {
		reason = model.ReasonPriority
	}
	ps.blocked = true
	s.wait(j, reason)
	if reason == model.ReasonResources && s.cfg.Preempt.Enabled() {
		// It waits (Resources) while its victims end; its reservation
		// below keeps lower jobs off what they free meanwhile.
		if v := s.preemptFor(j, r, req, exc); len(v) > 0 {
			s.plan.Preempts = append(s.plan.Preempts, Preemption{Job: j.ID, Victims: v})
		}
	}
	bf := s.c.bf
	if (s.cfg.BfMaxJobTest > 0 && bf.count >= s.cfg.BfMaxJobTest) ||
		(s.cfg.BfMaxJobUser > 0 && bf.perUser[j.UserID] >= s.cfg.BfMaxJobUser) || s.arrayResvFull(j) {
		return
	}
	horizon := never
	if s.cfg.BfWindow > 0 {
		horizon = s.now + s.cfg.BfWindow
	}
	ps, exc, horizon = s.resvSearch(ps, exc, horizon) // around reservations (resvplan.go)
	res := max(1, s.cfg.BfResolution)
	need := r.minCPUs()
	earliest := s.c.earliestBound(ps, r, req, exc, limit, s.now, horizon)
	if earliest >= never {
		s.c.unmask()
		return
	}
	bf.settle()
	free, d := s.c.free-s.excFree, cursor{} // cluster-wide free CPUs at t: an upper bound
	// A packed job runs first-fit only once its admitted nodes offer
	// enough tasks (bfpack.go).
	pack := s.c.packable(r, req, ps)
	if pack {
		s.c.packStart()
	}
	// Instants more than a resolution before the bound round to a start
	// before it: begin after them.
	for k := bf.deltas.from(earliest - res); bf.deltas.ok(k); k = bf.deltas.next(k) {
		t := bf.deltas.at(k)
		if t <= s.now {
			continue
		}
		// Round up to the resolution: fewer distinct start times to try,
		// and a planned start that does not drift between cycles.
		if rem := t % res; rem != 0 {
			t += res - rem
		}
		if t > horizon {
			break
		}
		if t < earliest {
			continue
		}
		for n := bf.deltas.next(k); bf.deltas.ok(n) && bf.deltas.at(n) <= t; n = bf.deltas.next(n) {
			k = n
		}
		free, d = bf.deltas.upTo(free, d, t)
		if free < need {
			continue
		}
		tEnd := endOf(t, limit)
		if pack {
			if !s.c.packEnough(t, tEnd) {
				continue
			}
			s.c.packRestore()
			pack = false
		}
		s.c.setWindow(t, tEnd)
		picks, ok := s.c.place(viewWindow, ps, r, req, exc)
		if ok {
			s.c.unmask()
			s.c.reserve(picks, r.gpuType, t, tEnd)
			bf.count++
			if s.cfg.BfMaxJobUser > 0 {
				bf.perUser[j.UserID]++
			}
			s.arrayResvMade(j)
			// Sized for every job that may get a reservation: a deep
			// queue grew them one doubling (and rehash) at a time.
			hint := len(s.in.Pending)
			if s.cfg.BfMaxJobTest > 0 {
				hint = min(hint, s.cfg.BfMaxJobTest)
			}
			s.plannedMaps(hint, len(s.c.nodes), t > s.now) // scratch.go
			s.plan.StartTimes[j.ID] = t
			names := cutSlab(&s.nameSlab, len(picks))
			for i, p := range picks {
				names[i] = s.c.nodes[p.node].Name
			}
			s.plan.StartNodes[j.ID] = names
			if t > s.now {
				for _, p := range picks {
					// Once per node: a node holds many reservations, and
					// each insert hashed its name.
					if !bf.planned[p.node] {
						bf.planned[p.node] = true
						s.plan.PlannedNodes[s.c.nodes[p.node].Name] = true
					}
				}
			}
			return
		}
	}
	s.c.unmask()
}

// placeAvoiding is first-fit on the live counts for a job that must not
// take, over [now, end), anything reserved: a node holding reservations
// offers only what it offers over the whole window (viewAvoid).
//
// It used to place on the live counts, lower each picked node that would
// break a reservation to its offer over the window and place again, until
// no pick broke one: rounds that re-ran first-fit once per lowered node
// (194 k rounds for 22 k jobs in the unbounded 10k x 50k pass). The
// rounds end where this single walk starts: a node whose live pick keeps
// clear of reservations gets the same pick from its window offer (picks
// take the least of what is left of the job and what the node offers,
// and that fitted in the window), and a node whose pick broke one was
// lowered to its window offer. Nodes that do not fit live fit no better
// in the window.
func (c *cluster) placeAvoiding(ps *partState, r *request, req, exc []int32, now, end int64) ([]pick, bool) {
	c.setWindow(now, end)
	return c.place(viewAvoid, ps, r, req, exc)
}

// setWindow sets the window viewWindow and viewAvoid look at.
func (c *cluster) setWindow(a, b int64) {
	c.winA, c.winB, c.winNode = a, b, -1
}

// windowOnce is window's CPUs and memory for node i over [winA, winB),
// remembered for the next call on the same node (nothing a placement
// reads changes while it runs).
func (c *cluster) windowOnce(i int32) (int, int64) {
	if c.winNode != i {
		c.winCPU, c.winMem, _ = c.window(i, c.winA, c.winB, false)
		c.winNode = i
	}
	return c.winCPU, c.winMem
}

// nextAvoid is next under viewAvoid: the partition tree's candidates on
// the live counts (a node's window offer is never more), checked on the
// window offer where the node holds reservations.
func (c *cluster) nextAvoid(ps *partState, from, minCPU, minIdle, minGPU int, minMem int64) int {
	for {
		pos := ps.tree.first(from, leafVal{cpu: int32(minCPU), idle: int32(minIdle), gpu: int32(minGPU), mem: treeMem(minMem)})
		if pos < 0 {
			return -1
		}
		i := ps.order[pos]
		if len(c.bf.res[i]) == 0 {
			return pos
		}
		n := c.nodes[i]
		cpu, mem := c.freeOn(viewAvoid, i)
		idle := cpu >= n.CPUs && n.CPUs >= minIdle
		if cpu >= minCPU && mem >= minMem && (minIdle == 0 || idle) && c.freeGPU(viewAvoid, i, "") >= minGPU {
			return pos
		}
		from = pos + 1
	}
}
