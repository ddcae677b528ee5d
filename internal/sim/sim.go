package sim

import (
	"container/heap"
	"fmt"
	"math/rand"
	"slices"
	"time"

	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/sched"
)

// Options select the machine and the policy of one run.
type Options struct {
	// Procs is the machine size: Procs nodes of one CPU each. A job asking
	// for more processors asks for the whole machine.
	Procs int
	// Sched is the scheduler configuration (Backfill selects the policy).
	Sched sched.Config
	// Priority, when set, gives each pending job its priority at now
	// (nil: all equal, so jobs go in submission order).
	Priority func(j *Job, now int64) uint32
}

// Result is what one run measured.
type Result struct {
	Jobs int
	// AvgBoundedSlowdown is the mean over jobs of
	// max(1, (wait+run) / max(run, 10 s)).
	AvgBoundedSlowdown float64
	AvgWait            float64 // seconds
	// Utilization is processor-seconds used over Procs × Makespan.
	Utilization float64
	Makespan    int64 // first submission to last end, seconds
	Passes      int   // scheduling passes run
	Wall        time.Duration
}

// JobsPerSecond is how fast the run simulated.
func (r Result) JobsPerSecond() float64 {
	if r.Wall <= 0 {
		return 0
	}
	return float64(r.Jobs) / r.Wall.Seconds()
}

func (r Result) String() string {
	return fmt.Sprintf("jobs=%d avg_bsld=%.2f avg_wait=%.0fs util=%.3f makespan=%ds passes=%d jobs/s=%.0f",
		r.Jobs, r.AvgBoundedSlowdown, r.AvgWait, r.Utilization, r.Makespan, r.Passes, r.JobsPerSecond())
}

// BoundedSlowdownThreshold is the run time below which slowdown is
// measured as if the job ran this long (the usual 10 s).
const BoundedSlowdownThreshold = 10

type ending struct {
	end int64
	job *model.Job
}

type endHeap []ending

func (h endHeap) Len() int { return len(h) }
func (h endHeap) Less(i, j int) bool {
	if h[i].end != h[j].end {
		return h[i].end < h[j].end
	}
	return h[i].job.ID < h[j].job.ID
}
func (h endHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *endHeap) Push(x any)   { *h = append(*h, x.(ending)) }
func (h *endHeap) Pop() (x any) { old := *h; x = old[len(old)-1]; *h = old[:len(old)-1]; return x }
func (h endHeap) peek() int64   { return h[0].end }

// Run replays trace jobs (sorted by submission) on an empty machine of
// o.Procs one-CPU nodes (see Workload.Simulate). A job asks -n procs;
// it ends at its actual run time; its requested time is its time limit.
func Run(jobs []Job, o Options) (Result, error) {
	w, err := traceWorkload(jobs, o)
	if err != nil {
		return Result{}, err
	}
	return w.Simulate(o.Sched)
}

// traceWorkload builds the trace model: o.Procs one-CPU nodes in one
// partition, a job asking -n procs with its requested time as limit.
func traceWorkload(jobs []Job, o Options) (*Workload, error) {
	if o.Procs <= 0 {
		return nil, fmt.Errorf("sim: machine size %d: want at least one processor", o.Procs)
	}
	names := make([]string, o.Procs)
	nodes := make([]*model.Node, o.Procs)
	for i := range nodes {
		names[i] = fmt.Sprintf("n%d", i+1)
		nodes[i] = &model.Node{Name: names[i], CPUs: 1, Sockets: 1, Cores: 1, Threads: 1, Memory: 1,
			State: model.NodeUp, Responding: true, Weight: 1}
	}
	part := &model.Partition{Name: "sim", Nodes: names, Default: true, MaxTime: model.Unlimited,
		DefaultTime: model.Unset, State: model.PartUp, PriorityTier: 1, MaxNodes: model.Unlimited}
	w := &Workload{Nodes: nodes, Partitions: map[string]*model.Partition{"sim": part}}
	for i := range jobs {
		spec := &model.JobSpec{Name: "sim", TimeLimit: jobs[i].Limit, TimeMin: model.Unset,
			MinNodes: model.Unset, MaxNodes: model.Unset, NTasks: min(jobs[i].Procs, o.Procs),
			CPUsPerTask: model.Unset, TasksPerNode: model.Unset, MemPerNode: model.Unset, MemPerCPU: model.Unset}
		w.Jobs = append(w.Jobs, &model.Job{ID: model.JobID(i + 1), ArrayTaskID: model.NoArrayTask, Spec: spec,
			UserID: uint32(max(0, jobs[i].User)), Partition: "sim", State: model.JobPending, Priority: 1,
			TimeLimit: jobs[i].Limit, SubmitTime: jobs[i].Submit})
		w.Run = append(w.Run, jobs[i].Run)
		w.need = append(w.need, min(jobs[i].Procs, o.Procs))
	}
	if o.Priority != nil {
		w.Priority = func(j *model.Job, now int64) uint32 { return o.Priority(&jobs[j.ID-1], now) }
	}
	return w, nil
}

// Workload is a cluster and the jobs to replay on it: Jobs are pending,
// sorted by SubmitTime, with IDs 1..n in that order, Spec and Partition
// set and TimeLimit resolved; Run[k] is how long job k+1 runs once started.
// Simulate fills in each job's StartTime and EndTime.
type Workload struct {
	Nodes      []*model.Node
	Partitions map[string]*model.Partition
	Jobs       []*model.Job
	Run        []int64
	// Priority, when set, gives a pending job its priority at now.
	Priority func(j *model.Job, now int64) uint32

	// need[k] is the CPUs job k+1 needs, set only in the trace model
	// (Run): it lets passes that can start nothing be skipped (gate.go).
	need []int
	// everyPass runs the passes the gate would skip and fails when one
	// starts a job, each pass whole and without a Scratch (tests: the
	// reference replay).
	everyPass bool
	// planSkips is how many passes the gate's plan rule skipped (tests).
	planSkips int
	// shadowSkips: likewise for the shadow rule (shadow.go).
	shadowSkips int
	// tailStops: passes the tail ended early (tail.go; tests).
	tailStops int
}

// Simulate replays w: every instant at which a job arrives or ends,
// finished jobs give their resources back, arrivals join the queue, and
// one sched.Schedule pass runs at that time; its starts are applied as
// the controller would commit them. A job ends at its run time.
func (w *Workload) Simulate(cfg sched.Config) (Result, error) {
	t0 := time.Now()
	index := newNodeIndex(w.Nodes)
	free, total := 0, 0
	for _, n := range w.Nodes {
		if n.Usable() {
			free += n.CPUs - n.AllocCPUs
			total += n.CPUs
		}
	}
	in := &sched.Input{Nodes: w.Nodes, Partitions: w.Partitions}
	var g *gate
	if w.need != nil {
		g = newGate(w.need, len(w.Nodes), cfg, w.Priority == nil)
	}
	var tl *tail // backfill passes end once the rest provably waits (tail.go)
	if g != nil && cfg.Backfill {
		tl = newTail(w.need, index)
	}
	var (
		ends    endHeap
		pending []*model.Job
		running []*model.Job // in no particular order
		next    = 0
		done    = 0
		res     = Result{Jobs: len(w.Jobs)}
		waitSum float64
		bsldSum float64
		work    float64
		first   = int64(-1)
		last    int64
		jobs    = w.Jobs
		reasons map[model.JobID]string // of the last pass run
		// scratch lends each pass the last one's memory; a plan is read
		// before the next pass (what a job keeps of it is copied).
		scratch sched.Scratch
	)
	for done < len(jobs) {
		now := int64(-1)
		if next < len(jobs) {
			now = jobs[next].SubmitTime
		}
		if ends.Len() > 0 && (now < 0 || ends.peek() < now) {
			now = ends.peek()
		}
		if now < 0 {
			// Nothing runs and nothing arrives: the rest can never start.
			return res, neverStarts(in, pending, last, cfg, reasons)
		}
		if first < 0 {
			first = now
		}
		ended := false
		for ends.Len() > 0 && ends.peek() <= now {
			ended = true
			e := heap.Pop(&ends).(ending)
			for _, a := range e.job.Alloc {
				n := w.Nodes[index.of(a.Node)]
				n.AllocCPUs -= a.CPUs
				n.AllocMem -= a.Mem
				n.AllocCores = n.AllocCores.AndNot(a.CPUIDs)
				n.AllocGPUs = n.AllocGPUs.AndNot(a.GPUs)
				free += a.CPUs
			}
			e.job.State, e.job.EndTime = model.JobCompleted, e.end
			k := slices.Index(running, e.job)
			running[k] = running[len(running)-1]
			running = running[:len(running)-1]
			done++
			last = max(last, e.end)
		}
		for next < len(jobs) && jobs[next].SubmitTime <= now {
			pending = append(pending, jobs[next])
			if g != nil {
				g.add(jobs[next])
			}
			next++
		}
		if ended && g != nil {
			g.changed()
		}
		// With no CPU free no job can start: skip the pass (its reasons
		// and planned starts are not measured), and likewise when the
		// gate proves no job can start.
		skip := free == 0 || (g != nil && g.skip(pending, ended, free, running, now))
		prioSet := false
		if !skip && g != nil && g.moving && w.Priority != nil && len(pending) > 0 {
			for _, j := range pending {
				j.Priority = w.Priority(j, now)
			}
			prioSet = true
			skip = g.shadowedMoving(pending, free, running, now)
		}
		if len(pending) == 0 || (skip && !w.everyPass) {
			if next >= len(jobs) && ends.Len() == 0 && len(pending) > 0 {
				return res, fmt.Errorf("sim: %d jobs can never start (first: job %d)", len(pending), pending[0].ID)
			}
			continue
		}
		if w.Priority != nil && !prioSet {
			for _, j := range pending {
				j.Priority = w.Priority(j, now)
			}
		}
		in.Pending, in.Running = pending, running
		if g != nil && !w.everyPass {
			in.Pending = g.cut(pending, free, running, now)
		}
		var plan *sched.Plan
		switch {
		case w.everyPass:
			// The reference the gate's tests compare with: whole passes,
			// as the controller runs them (no stop, no Scratch).
			plan = sched.Schedule(in, now, cfg)
		case tl != nil:
			tl.begin(now, w.Nodes)
			plan = sched.ScheduleUntil(in, now, cfg, tl.stop, &scratch)
		default:
			plan = sched.ScheduleUntil(in, now, cfg, nil, &scratch)
		}
		res.Passes++
		if skip && len(plan.Starts) > 0 {
			return res, fmt.Errorf("sim: at %d the pass the gate skips starts job %d", now, plan.Starts[0].Job)
		}
		// The reasons are kept for the error below, not copied to every
		// job: with queues tens of thousands deep that copy cost more
		// than the pass.
		reasons = plan.Reasons
		if len(plan.Starts) == 0 {
			if next >= len(jobs) && ends.Len() == 0 {
				return res, neverStarts(in, pending, now, cfg, reasons)
			}
			if g != nil {
				g.ran(now, len(pending), running, plan, jobs, w.Nodes, index)
			}
			continue
		}
		for _, s := range plan.Starts {
			j := jobs[s.Job-1]
			if j.State != model.JobPending {
				return res, fmt.Errorf("sim: job %d started twice", s.Job)
			}
			cpus := 0
			for _, a := range s.Alloc {
				n := w.Nodes[index.of(a.Node)]
				if n.AllocCPUs+a.CPUs > n.CPUs {
					return res, fmt.Errorf("sim: node %s oversubscribed by job %d", a.Node, s.Job)
				}
				n.AllocCPUs += a.CPUs
				n.AllocMem += a.Mem
				n.AllocCores = n.AllocCores.Or(a.CPUIDs)
				n.AllocGPUs = n.AllocGPUs.Or(a.GPUs)
				free -= a.CPUs
				cpus += a.CPUs
			}
			// A copy: the plan cuts each start's list from an array it
			// shares with other starts (sched's slabs), which the replay
			// would otherwise keep alive with every job it remembers.
			j.State, j.StartTime, j.Alloc, j.Reason = model.JobRunning, now, slices.Clone(s.Alloc), ""
			running = append(running, j)
			if g != nil {
				g.remove(j)
			}
			run := w.Run[s.Job-1]
			heap.Push(&ends, ending{now + run, j})
			wait := float64(now - j.SubmitTime)
			waitSum += wait
			bsldSum += max(1, (wait+float64(run))/float64(max(run, BoundedSlowdownThreshold)))
			work += float64(run) * float64(cpus)
		}
		kept := pending[:0]
		for _, j := range pending {
			if j.State == model.JobPending {
				kept = append(kept, j)
			}
		}
		clear(pending[len(kept):])
		pending = kept
		if g != nil {
			g.ran(now, len(pending), running, plan, jobs, w.Nodes, index)
		}
	}
	if g != nil {
		w.planSkips, w.shadowSkips = g.planSkips, g.shadowSkips
	}
	if tl != nil {
		w.tailStops = tl.stops
	}
	if len(jobs) > 0 {
		res.AvgBoundedSlowdown = bsldSum / float64(len(jobs))
		res.AvgWait = waitSum / float64(len(jobs))
		res.Makespan = last - first
		if res.Makespan > 0 && total > 0 {
			res.Utilization = work / (float64(total) * float64(res.Makespan))
		}
	}
	res.Wall = time.Since(t0)
	return res, nil
}

// neverStarts is the error for pending jobs nothing will ever let start,
// with the first one's reason from the last pass (reasons), or from a
// pass over the whole queue when that one did not see it (gate.cut).
func neverStarts(in *sched.Input, pending []*model.Job, now int64, cfg sched.Config, reasons map[model.JobID]string) error {
	why, ok := reasons[pending[0].ID]
	if !ok {
		in.Pending = pending
		why = sched.Schedule(in, now, cfg).Reasons[pending[0].ID]
	}
	return fmt.Errorf("sim: %d jobs can never start (first: job %d, %s)", len(pending), pending[0].ID, why)
}

// SampleStarts picks count start indices of sequences of length jobs out
// of n, uniformly with a seeded generator (math/rand, source seed): the
// same seed gives the same sequences on every machine.
func SampleStarts(n, length, count int, seed int64) []int {
	if n < length {
		return []int{0}
	}
	rng := rand.New(rand.NewSource(seed))
	out := make([]int, count)
	for i := range out {
		out[i] = rng.Intn(n - length + 1)
	}
	return out
}

// Slice returns jobs[start:start+length] with submit times rebased so
// the first arrives at 0 (each sequence starts on an empty machine).
func Slice(jobs []Job, start, length int) []Job {
	end := min(len(jobs), start+length)
	out := make([]Job, end-start)
	copy(out, jobs[start:end])
	if len(out) > 0 {
		base := out[0].Submit
		for i := range out {
			out[i].Submit -= base
		}
	}
	return out
}

// nodeIndex finds a node's position by name. The trace model names node k
// "n(k+1)" (traceWorkload), and the names a plan holds are the nodes' own
// strings, so the name's number, checked against that node's name, finds
// it without hashing (a replay looks up every node of every start and
// reservation); other names go through the map.
type nodeIndex struct {
	pos   map[string]int
	names []string
}

func newNodeIndex(nodes []*model.Node) *nodeIndex {
	x := &nodeIndex{pos: make(map[string]int, len(nodes)), names: make([]string, len(nodes))}
	for i, n := range nodes {
		x.pos[n.Name], x.names[i] = i, n.Name
	}
	return x
}

// of is name's position (0 for an unknown name, as the map reads).
func (x *nodeIndex) of(name string) int {
	if len(name) > 1 && name[0] == 'n' {
		k := 0
		for i := 1; i < len(name) && k <= len(x.names); i++ {
			c := name[i]
			if c < '0' || c > '9' {
				k = 0
				break
			}
			k = 10*k + int(c-'0')
		}
		if k >= 1 && k <= len(x.names) && x.names[k-1] == name {
			return k - 1
		}
	}
	return x.pos[name]
}
