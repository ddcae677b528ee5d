package sched

import (
	"cmp"
	"slices"

	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/sched/resv"
)

// Config holds the cluster-wide scheduling settings v0 understands.
type Config struct {
	// DefMemPerCPU and DefMemPerNode (MiB, 0 = unset) apply to jobs that
	// ask for no memory; DefMemPerCPU wins when both are set.
	DefMemPerCPU, DefMemPerNode int64
	// MaxJobsPerCycle bounds the starts in one Plan (0 = unlimited) so one
	// Raft command stays small; jobs past the bound keep their reason and
	// are looked at again next cycle.
	MaxJobsPerCycle int
	// Preempt says which running jobs a waiting job may take resources
	// from (see preempt.go).
	Preempt Preempt
	// Backfill selects sched/backfill: a job that cannot start gets a
	// reservation at its earliest possible start, and lower-ordered jobs
	// start when they delay no reservation. False is sched/builtin:
	// strict order, a blocked job holds its nodes.
	Backfill bool
	// Backfill bounds (SchedulerParameters), 0 = no bound: BfWindow is
	// how far ahead (seconds) reservations are looked for; BfResolution
	// the granularity (seconds) of planned starts; BfMaxJobTest the most
	// reservations per pass; BfMaxJobUser the most per user.
	BfWindow, BfResolution     int64
	BfMaxJobTest, BfMaxJobUser int
	// BfMaxJobArrayResv is the most reservations one pass makes for the
	// tasks of one array in one partition (bf_max_job_array_resv,
	// arrayresv.go); 0 = no bound.
	BfMaxJobArrayResv int
}

// Input is everything one scheduling cycle looks at: a consistent snapshot
// the caller built. Schedule reads it and never writes to it.
type Input struct {
	// Pending holds PENDING jobs in any order; each has Spec set, Partition
	// chosen and TimeLimit resolved.
	Pending []*model.Job
	// Nodes holds every node; AllocCPUs/AllocMem already count running and
	// completing jobs.
	Nodes      []*model.Node
	Partitions map[string]*model.Partition
	// Jobs gives read access to all jobs still in memory, finished ones
	// included, for dependencies and array throttles. When nil, every
	// dependency but singleton waits and throttles count no running task.
	Jobs JobIndex
	// Limits, when set, are the accounting limits to enforce.
	Limits *Limits
	// Running holds the jobs holding resources (running, suspended,
	// completing): backfill reads when they end (StartTime plus time
	// limit; allocations of jobs not listed count as held forever), and
	// preemption picks its victims among them and counts the preempted
	// ones still ending.
	Running []*model.Job
	// QOS is the QOS table (name → QOS) preempt/qos reads; nil without
	// accounting.
	QOS map[string]*model.QOS
	// Reservations are the advance reservations (scontrol create
	// reservation), active or not; see sched/resv.
	Reservations []*model.Reservation
}

// JobIndex is the read access to jobs the scheduler needs beyond Pending.
type JobIndex interface {
	Job(id model.JobID) *model.Job
	// ArrayTasks returns every task of an array, finished ones included.
	ArrayTasks(arrayJobID model.JobID) []*model.Job
	// ActiveByNameUser returns pending and running jobs (completing
	// included) with that name and user, for --dependency=singleton.
	ActiveByNameUser(name string, uid uint32) []*model.Job
}

// Start is one job to launch on exactly these per-node resources.
type Start struct {
	Job   model.JobID
	Alloc []model.NodeAlloc // in node-table order; Alloc[0] runs the batch script
}

// Plan is the outcome of one cycle, for the leader to verify against the
// newest state and commit.
type Plan struct {
	Starts []Start // in scheduling order
	// Reasons holds the pending reason of every PENDING job of
	// Input.Pending that does not start, whether or not it changed.
	Reasons map[model.JobID]string
	// DepFailed lists jobs newly found to have a dependency that can never
	// be satisfied (jobs already marked DepFailed only get the reason).
	DepFailed []model.JobID
	// Preempts are the running jobs to preempt for waiting ones.
	Preempts []Preemption
	// StartTimes holds, under backfill, the planned start of each waiting
	// job that got a reservation (squeue --start, scontrol StartTime=).
	StartTimes map[model.JobID]int64
	// StartNodes are the nodes each of those reservations holds
	// (squeue --start SCHEDNODES), in placement order.
	StartNodes map[model.JobID][]string
	// PlannedNodes are the nodes those reservations hold for a later
	// start (sinfo's PLANNED state, "mix-").
	PlannedNodes map[string]bool
}

// Schedule decides which pending jobs start now and where, and why the
// others wait. It is a pure function of its arguments: now is the clock.
//
// v0 policy: jobs are taken in order (partition PriorityTier desc, job
// Priority desc, JobID asc); each either passes every gate and is placed
// first-fit, or gets the first reason that stops it. A job that cannot
// start for lack of free resources blocks its partition: lower-ordered jobs
// there wait (reason Priority), and the partition's nodes are withheld from
// lower-ordered jobs of overlapping partitions, which may still start on
// other nodes. Backfill will relax that block by reserving the waiting
// job's start in time; preemption will add a step that frees nodes before a
// Resources wait. Both slot in at consider.
func Schedule(in *Input, now int64, cfg Config) *Plan {
	return schedule(in, now, cfg, nil, nil)
}

// schedule is Schedule, ended early where stop says so, in sc's memory
// (ScheduleUntil).
func schedule(in *Input, now int64, cfg Config, stop StopFunc, sc *Scratch) *Plan {
	s := &scheduler{
		in:      in,
		now:     now,
		cfg:     cfg,
		sc:      sc,
		c:       sc.newCluster(in.Nodes, in.Partitions),
		plan:    sc.newPlan(len(in.Pending)),
		deps:    make(map[model.DepTerm]depResult),
		running: make(map[model.JobID]int),
		started: make(map[nameUser]bool),
		victims: make(map[model.JobID]bool),
		resv:    resv.New(in.Reservations, now),
	}
	sc.begin(s)
	s.lim = newLimiter(in.Limits, cfg, in.Partitions)
	if cfg.Backfill {
		s.initBackfill()
		s.initResvBlocks()
	}
	order := s.order()
	for k, j := range order {
		if stop != nil && stop(order, k, s.plan) {
			break
		}
		s.considerTwin(j)
	}
	sc.end(s)
	return s.plan
}

// scheduler is the state of one Schedule call; caches live only that long.
type scheduler struct {
	in     *Input
	now    int64
	cfg    Config
	sc     *Scratch // memory lent by the caller; nil: none
	c      *cluster
	plan   *Plan
	shapes map[shapeKey]string // empty-cluster verdict per job shape
	// lastShape: shape's last verdict (feasible.go).
	lastShape shapeMemo
	deps      map[model.DepTerm]depResult // per dependee condition
	running   map[model.JobID]int         // running tasks per array (throttle)
	started   map[nameUser]bool           // started this cycle (singleton)
	lim       *limiter                    // nil: no accounting limits
	victims   map[model.JobID]bool        // chosen for preemption this cycle
	resv      *resv.Set                   // reservations at now
	resvIdx   map[resvKey]*resvIdx        // verdicts as node indices (reservations.go)
	// resvParts: partitions narrowed to a reservation (reservations.go).
	resvParts map[resvPartKey]*partState
	// maint: the job being considered is kept off nodes by a MAINT
	// reservation, so Resources reads as Slurm's maintenance reason;
	// confined: it runs only on its reservation's nodes (and is placed
	// in the partition narrowed to them).
	maint, confined bool
	// excFree and excFreePart are the free CPUs (cluster-wide, and in
	// the job's partition) on nodes reservations deny the job: taken off
	// the cheap "nothing free" exits, or a full cluster beside an idle
	// reservation would scan every reserved node for every job.
	excFree, excFreePart int64
	// The backfill search's partition, exclusions and last start for the
	// job being considered (resvplan.go), nil when they are placement's;
	// resvWait, when set, is its pending reason whatever placement says.
	resvID     map[string]int32 // reservation name → index in Input.Reservations
	resvShadow map[int32][]bool // per reservation, the others its jobs may ignore
	bfPS       *partState
	bfExc      []int32
	bfUntil    int64
	resvWait   string
	// allocSlab and nameSlab hold the plan's per-job node lists (Starts'
	// allocations, StartNodes' names), cut from shared arrays: one
	// allocation per job was a tenth of a deep pass's allocations.
	allocSlab []model.NodeAlloc
	nameSlab  []string
	// arrayStarted counts each array's tasks started in this plan, apart
	// from running (their count in Input) for arrayRunning.
	arrayStarted map[model.JobID]int
	// arrayResv counts reservations per array and partition
	// (bf_max_job_array_resv, arrayresv.go).
	arrayResv map[arrayResvKey]int
	// twin is the last job considered when its verdict may be copied
	// (twin.go).
	twin *model.Job
	// lastPart is the last partition partOf looked up.
	lastPart partLookup
	// liveMiss holds the requests whose placement on the live view
	// failed in this pass (backfill.go).
	liveMiss map[liveKey]struct{}
}

// partLookup is a partition's configuration and its cluster state, by
// name (either nil where it has none).
type partLookup struct {
	name string
	p    *model.Partition
	ps   *partState
	ok   bool
}

// partOf is the job partition's configuration and cluster state. Each job
// asked for them by name five times in a pass (eligibility, the twin
// marks before and after, placement), two maps of strings hashed each
// time: a thirteenth of the instructions of the main pass over 50,000
// jobs.
// Jobs in order mostly share a partition, so the last answer is kept;
// neither map changes during a pass.
func (s *scheduler) partOf(name string) (*model.Partition, *partState) {
	if l := &s.lastPart; l.ok && l.name == name {
		return l.p, l.ps
	}
	p, ps := s.in.Partitions[name], s.c.parts[name]
	s.lastPart = partLookup{name: name, p: p, ps: ps, ok: true}
	return p, ps
}

// cutSlab returns a slice of n entries (no room to grow into its
// neighbours) cut from *slab, refilled 1,024 entries at a time.
func cutSlab[E any](slab *[]E, n int) []E {
	if n > 64 {
		return make([]E, n)
	}
	if len(*slab) < n {
		*slab = make([]E, 1024)
	}
	s := (*slab)[:n:n]
	*slab = (*slab)[n:]
	return s
}

type nameUser struct {
	name string
	uid  uint32
}

// order returns the pending jobs in scheduling order, without duplicates
// or non-pending entries (a stale snapshot must not start a job twice).
func (s *scheduler) order() []*model.Job {
	type entry = orderEntry
	entries, out := s.sc.orderBufs(len(s.in.Pending))
	// The tier of the last partition seen: a queue is mostly runs of one
	// partition, and a name compared costs less than one hashed.
	lastPart, lastTier := "", 0
	oneTier := true // every entry's tier is the first one's
	for _, j := range s.in.Pending {
		if j == nil || j.State != model.JobPending {
			continue
		}
		if j.Partition != lastPart || lastPart == "" {
			lastPart, lastTier = j.Partition, 0
			if p := s.in.Partitions[j.Partition]; p != nil {
				lastTier = p.PriorityTier
			}
		}
		entries = append(entries, entry{lastTier, uint64(^j.Priority)<<32 | uint64(j.ID), j})
		oneTier = oneTier && lastTier == entries[0].tier
	}
	sorted := entries
	if oneTier {
		buf := s.sc.sortBuf(len(entries))
		if sorted = radixOrder(entries, buf); len(sorted) > 0 && &sorted[0] == &buf[0] {
			s.sc.keepSortBuf(entries) // the arrays swap roles
		}
	} else {
		slices.SortFunc(entries, func(a, b entry) int {
			if c := cmp.Compare(b.tier, a.tier); c != 0 {
				return c
			}
			return cmp.Compare(a.key, b.key)
		})
	}
	entries = sorted
	for i, e := range entries {
		// A job listed twice sorts next to itself (the ID is the last key).
		if i == 0 || e.j.ID != entries[i-1].j.ID {
			out = append(out, e.j)
		}
	}
	s.sc.keepOrder(entries, out)
	return out
}

// orderEntry is a pending job with its sort keys (order): its
// partition's tier, then key, priority descending and ID ascending in one
// word. Comparing the ID through the job's pointer, on every tie of
// priority, was a cache miss per comparison (sorting 50,000 jobs was a
// tenth of the main pass).
type orderEntry struct {
	tier int
	key  uint64 // ^priority << 32 | ID
	j    *model.Job
}

// radixOrder sorts entries by key (one tier: the key is the whole order),
// a byte at a time from the lowest, between entries and buf (as long),
// and returns the one that holds the result. A byte all entries share is
// not moved on (an ID's upper bytes, mostly). Sorting 50,000 jobs with a
// comparison function was a sixth of the main pass; this reads them nine
// times. Equal keys (a job listed twice) keep their order, which the
// comparison sort did not promise; dropping the second copy is all order
// does with them.
func radixOrder(entries, buf []orderEntry) []orderEntry {
	if len(entries) < 2 {
		return entries
	}
	// On the heap: 8 KB on the goroutine's stack grew it (a copy of the
	// stack) in every pass that started on a small one.
	counts := new([8][256]int32)
	for _, e := range entries {
		for d := range 8 {
			counts[d][byte(e.key>>(8*d))]++
		}
	}
	src, dst := entries, buf[:len(entries)]
	for d := range 8 {
		c := &counts[d]
		if int(c[byte(src[0].key>>(8*d))]) == len(src) {
			continue
		}
		at := int32(0)
		for b, n := range c {
			c[b], at = at, at+n
		}
		for _, e := range src {
			b := byte(e.key >> (8 * d))
			dst[c[b]] = e
			c[b]++
		}
		src, dst = dst, src
	}
	return src
}

// consider runs one job through the gates, cheapest and least
// resource-dependent first, and either starts it or records why not.
func (s *scheduler) consider(j *model.Job) {
	if reason := s.eligible(j); reason != "" {
		s.wait(j, reason)
		return
	}
	if s.waitsForPreemptor(j) {
		s.wait(j, model.ReasonPriority)
		return
	}
	if s.lim != nil {
		if reason := s.lim.check(j); reason != "" {
			s.wait(j, reason)
			return
		}
	}
	_, ps := s.partOf(j.Partition) // eligible checked it exists
	req, exc, valid := s.c.resolveSpec(j.Spec)
	r := newRequest(j.Spec, s.cfg, len(req))
	if r.pack && ps.p.MaxNodes > 0 && (r.maxNodes == 0 || ps.p.MaxNodes < r.maxNodes) {
		r.maxNodes = ps.p.MaxNodes
	}
	if n := r.minNodes(len(req)); (ps.p.MaxNodes > 0 && n > ps.p.MaxNodes) || n < ps.p.MinNodes || n > len(ps.p.Nodes) {
		s.wait(j, model.ReasonPartitionNodes)
		return
	}
	if reason := s.shape(ps, &r, j.Spec, req, exc, valid); reason != "" {
		s.wait(j, reason)
		return
	}
	// Reset before resvExclude can set any of it: a hold it returns must
	// not leave this job's reservation state (resvWait, maint) to the
	// reasons of the jobs considered next.
	defer func() {
		s.maint, s.confined, s.excFree, s.excFreePart = false, false, 0, 0
		s.bfPS, s.bfExc, s.bfUntil, s.resvWait = nil, nil, never, ""
	}()
	var hold string
	if exc, hold, ps = s.resvExclude(j, ps, &r, req, exc); hold != "" {
		s.wait(j, hold)
		return
	}
	if s.cfg.MaxJobsPerCycle > 0 && len(s.plan.Starts) >= s.cfg.MaxJobsPerCycle && s.cfg.Backfill {
		s.wait(j, cmp.Or(j.Reason, model.ReasonNone))
		return
	}
	if s.cfg.Backfill {
		s.considerBackfill(j, ps, &r, req, exc)
		return
	}
	if ps.blocked { // strict order within a partition
		s.wait(j, model.ReasonPriority)
		return
	}
	if s.cfg.MaxJobsPerCycle > 0 && len(s.plan.Starts) >= s.cfg.MaxJobsPerCycle {
		s.wait(j, cmp.Or(j.Reason, model.ReasonNone)) // not evaluated this cycle
		return
	}
	// Cheap exits first: with no CPU left anywhere (the common state of a
	// busy cluster) no node needs to be looked at.
	var picks []pick
	fits := s.c.free-s.excFree >= r.minCPUs() && ps.free-s.excFreePart >= r.minCPUs()
	if fits {
		picks, fits = s.c.place(viewLive, ps, &r, req, exc)
	}
	if !fits {
		// Priority when only nodes held for a higher-ordered job stand in
		// the way; the linear re-check runs at most once per partition.
		reason := model.ReasonResources
		if ps.heldNodes > 0 && ps.free+ps.heldFree >= r.minCPUs() &&
			placeable(s.c, viewIgnoreHolds, ps, &r, req, exc) {
			reason = model.ReasonPriority
		} else if s.cfg.Preempt.Enabled() {
			// The job waits (Resources) while its victims end.
			if v := s.preemptFor(j, &r, req, exc); len(v) > 0 {
				s.plan.Preempts = append(s.plan.Preempts, Preemption{Job: j.ID, Victims: v})
			}
		}
		s.c.block(ps, exc)
		s.wait(j, reason)
		return
	}
	s.c.commit(picks, r.gpuType)
	s.start(j, picks)
}

func (s *scheduler) wait(j *model.Job, reason string) {
	if s.resvWait != "" {
		reason = s.resvWait
	}
	if s.maint && reason == model.ReasonResources {
		reason = model.ReasonResvMaint
	}
	s.plan.Reasons[j.ID] = reason
}

func (s *scheduler) start(j *model.Job, picks []pick) {
	// Node-table order, so the batch host is the allocation's first node
	// as users see it in the node list, not whichever node was found first.
	slices.SortFunc(picks, func(a, b pick) int { return cmp.Compare(a.node, b.node) })
	alloc := cutSlab(&s.allocSlab, len(picks))
	for i, p := range picks {
		alloc[i] = model.NodeAlloc{Node: s.c.nodes[p.node].Name, CPUs: p.cpus, Mem: p.mem, CPUIDs: p.cpuIDs, GPUs: p.gpuIDs}
	}
	s.plan.Starts = append(s.plan.Starts, Start{Job: j.ID, Alloc: alloc})
	if s.lim != nil {
		started := *j
		started.Alloc = alloc
		s.lim.charge(j, allocUsage(&started))
	}
	if j.IsArrayTask() {
		if s.arrayStarted == nil {
			s.arrayStarted = map[model.JobID]int{}
		}
		s.arrayStarted[j.ArrayJobID]++
	}
	s.started[nameUser{j.Name, j.UserID}] = true
}
