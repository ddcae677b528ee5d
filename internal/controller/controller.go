package controller

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/drover-hpc/drover/internal/acctmgr"
	"github.com/drover-hpc/drover/internal/clock"
	"github.com/drover-hpc/drover/internal/fsm"
	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/nodemsg"
	"github.com/drover-hpc/drover/internal/raftnode"
	"github.com/drover-hpc/drover/internal/sched"
	"github.com/drover-hpc/drover/internal/service"
	"github.com/drover-hpc/drover/internal/state"
)

// Controller owns the leader loops (started and stopped with leadership,
// leader.go) and the connected agents.
type Controller struct {
	log   *slog.Logger
	store *state.Store
	raft  service.Committer
	clock clock.Clock
	svc   *service.Service

	kick chan struct{}

	mu       sync.Mutex
	agents   map[string]*agentConn           // node name → live stream
	launches launchGate                      // step launches against registrations (launch.go)
	planned  atomic.Pointer[map[string]bool] // the last pass's PLANNED nodes (plannednodes.go)
	lastSeen map[string]time.Time
	acked    map[model.JobID]uint32 // the run of each job whose launch an agent confirmed
	// inherited are the jobs (and their runs) already running when this
	// controller began leading: acked knows nothing of their launches.
	inherited map[model.JobID]uint32
	// unregistered are the nodes whose agents have not registered with
	// this controller since it began leading (unregistered.go).
	unregistered map[string]bool
	stats        statCalls // sstat requests awaiting the nodes
	acct         *acctLoop
	sstats       schedStats
	// lastMoved is when planned start times that moved were last
	// republished (bf_interval paces them); only the schedule loop uses it.
	lastMoved time.Time
	// scratch lends each pass the last one's memory: a pass over a large
	// queue otherwise allocated ~50 MB, and collecting it cost a tenth
	// of the pass's CPU time (issue 13). Only the schedule loop uses it,
	// one pass at a time; endTerm drops it. The plan shares its memory
	// until the next pass, so cycle copies what it keeps past that.
	scratch sched.Scratch

	leadership Leadership  // nil: always leads (see leader.go)
	leading    atomic.Bool // the leader loops run
	loopsUp    atomic.Int32
}

// New builds a controller; call SetService before Run.
func New(log *slog.Logger, store *state.Store, raft service.Committer, clk clock.Clock) *Controller {
	c := &Controller{
		log: log, store: store, raft: raft, clock: clk,
		kick:     make(chan struct{}, 1),
		agents:   map[string]*agentConn{},
		lastSeen: map[string]time.Time{},
		acked:    map[model.JobID]uint32{},
		acct:     &acctLoop{groups: map[uint32]string{}},
	}
	c.sstats.s.Started = clk.Now()
	return c
}

// SetService links the API layer (settings, scheduler configuration).
func (c *Controller) SetService(s *service.Service) { c.svc = s }

// Kick asks for a scheduling cycle soon.
func (c *Controller) Kick() {
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

func (c *Controller) scheduleLoop(ctx context.Context) {
	timer := c.clock.NewTicker(time.Second)
	defer timer.Stop()
	for {
		t0 := c.clock.Now()
		c.cycle()
		rest := c.clock.NewTimer(passGap(c.svc.Settings().Scheduler.SchedMinInterval, c.clock.Since(t0)))
		select {
		case <-ctx.Done():
			rest.Stop()
			return
		case <-rest.C:
		}
		select {
		case <-ctx.Done():
			return
		case <-c.kick:
		case <-timer.C:
		}
	}
}

// cycle runs the scheduler once over the newest snapshot and commits the
// plan; the FSM re-verifies every start against the state at apply time.
func (c *Controller) cycle() {
	snap := c.store.Snapshot()
	in := &sched.Input{Nodes: c.schedNodes(snap), Partitions: map[string]*model.Partition{}, Jobs: snap,
		Reservations: snap.Reservations()}
	for _, p := range snap.Partitions() {
		in.Partitions[p.Name] = p
	}
	st := c.svc.Settings()
	if st.EnforceLimits {
		db, _ := snap.AcctDB()
		if db == nil {
			db = acctmgr.Init(st.ClusterName)
		}
		in.Limits = &sched.Limits{DB: db, Cluster: st.ClusterName}
	}
	// Indexed walks: a held job's reason was set when it was held and
	// only a release (which kicks a pass) changes it, so a queue of held
	// jobs costs the pass nothing. Sized once: a drain of a large array
	// grew it by doublings on every pass.
	in.Pending = make([]*model.Job, 0, snap.NumQueued())
	snap.EachQueued(func(j *model.Job) bool {
		if !j.DepFailed {
			in.Pending = append(in.Pending, j)
		}
		return true
	})
	// Backfill reads when allocated jobs end; preemption picks victims
	// among them and counts the preempted ones still ending.
	snap.EachAllocated(func(j *model.Job) bool {
		in.Running = append(in.Running, j)
		if in.Limits != nil && j.State == model.JobRunning {
			in.Limits.Running = append(in.Limits.Running, j)
		}
		return true
	})
	if len(in.Pending) == 0 {
		c.setPlanned(nil)
		return
	}
	in.QOS = qosTable(snap, c.svc.SchedConfig().Preempt)
	now := c.clock.Now().Unix()
	t0 := c.clock.Now()
	// No stop: every job's reason and planned start is reported.
	plan := sched.ScheduleUntil(in, now, c.svc.SchedConfig(), nil, &c.scratch)
	// sinfo and scontrol read the published map after the next pass has
	// refilled the plan's.
	c.setPlanned(maps.Clone(plan.PlannedNodes))
	c.sstats.record(c.clock.Since(t0), len(in.Pending))
	cmd := &fsm.Schedule{Now: now}
	for _, id := range plan.DepFailed {
		j := snap.Job(id)
		if j != nil && j.Spec != nil && (j.Spec.KillInvalidDep == model.KillDepYes ||
			(j.Spec.KillInvalidDep == 0 && st.KillInvalidDepend)) {
			cmd.KillDep = append(cmd.KillDep, id)
		} else {
			cmd.DepFailed = append(cmd.DepFailed, id)
		}
	}
	for _, st := range plan.Starts {
		// The FSM stores the Alloc as the job's when the command is
		// applied as it is (one riding in a Group is never decoded), and
		// the next pass writes its own starts over the plan's. The
		// bitmaps inside are the pass's own, never reused.
		cmd.Starts = append(cmd.Starts, fsm.StartEntry{Job: st.Job, Alloc: slices.Clone(st.Alloc)})
	}
	grace := map[model.JobID]int64{}
	for _, p := range plan.Preempts {
		for _, v := range p.Victims {
			cmd.Preempt = append(cmd.Preempt, fsm.PreemptEntry{Job: v.Job, Mode: v.Mode, For: p.Job})
			grace[v.Job] = v.Grace
		}
		c.log.Info("preempting", "for", p.Job, "victims", len(p.Victims))
	}
	// The pass's own pending list, not a snapshot lookup per reason: the
	// plan's reasons are keyed by jobs of in.Pending (the same records),
	// and a drain of a large array runs this over every waiting task on
	// every pass.
	// The planned starts to commit come from the same walk.
	depWait := false
	pp := c.plannedPass(plan, now)
	for _, j := range in.Pending {
		if j == nil {
			continue
		}
		reason, ok := plan.Reasons[j.ID]
		if !ok {
			continue
		}
		depWait = depWait || reason == model.ReasonDependency
		if j.Reason != reason {
			if cmd.Reasons == nil {
				cmd.Reasons = map[model.JobID]string{}
			}
			cmd.Reasons[j.ID] = reason
		}
		pp.job(j)
	}
	cmd.Planned, cmd.PlannedNodes = pp.done()
	if len(cmd.Starts) == 0 && len(cmd.Reasons) == 0 && len(cmd.DepFailed) == 0 && len(cmd.KillDep) == 0 &&
		len(cmd.Preempt) == 0 && len(cmd.Planned) == 0 {
		return
	}
	res, err := c.raft.Apply(fsm.TypeSchedule, cmd)
	if err != nil {
		// A full state directory is reported once, by raftnode, not
		// every cycle.
		if !errors.Is(err, raftnode.ErrNoSpace) {
			c.log.Error("commit schedule", "err", err)
		}
		return
	}
	r := res.(fsm.ScheduleResult)
	c.preempt(r.Preempted, grace)
	c.suspended(r.Suspended)
	started := r.Started
	if len(started) > 0 {
		c.log.Debug("started jobs", "count", len(started))
		after := c.store.Snapshot()
		for _, id := range started {
			c.launch(after.Job(id))
		}
		if moreAfterStarts(len(cmd.Starts), len(started), len(cmd.Preempt), depWait, c.svc.SchedConfig().MaxJobsPerCycle) {
			c.Kick()
		}
	}
}

// moreAfterStarts: a pass that started jobs is followed by another at once
// only when that one may start more: the FSM refused some planned starts
// (what they would have held is free), victims were picked (preemption
// goes on), a pending job waits on a dependency (after: and singleton
// turn on a start this pass made), or the pass stopped at
// MaxJobsPerCycle. Otherwise starts only take resources and raise counts:
// the next pass can start nothing this one did not, and during a drain
// of an array that pass (over every waiting task) came after each pass;
// ends, submissions and releases kick passes of their own.
func moreAfterStarts(planned, started, preempted int, depWait bool, maxPerCycle int) bool {
	return started < planned || preempted > 0 || depWait || (maxPerCycle > 0 && planned >= maxPerCycle)
}

// preempt ends committed victims: SIGTERM at once and the kill sequence
// after their partition's GraceTime, or the kill sequence (which starts
// with SIGTERM) straight away without one. The agents write slurmstepd's
// "DUE TO PREEMPTION" line into the job's error file.
func (c *Controller) preempt(victims []model.JobID, grace map[model.JobID]int64) {
	for _, id := range victims {
		g := grace[id]
		if g <= 0 {
			c.Terminate([]model.JobID{id}, "PREEMPTED")
			continue
		}
		c.Signal([]model.JobID{id}, int(syscall.SIGTERM), service.ScopeFull)
		c.clock.AfterFunc(time.Duration(g)*time.Second, func() {
			if c.Leading() { // only the leader speaks to the nodes
				c.Terminate([]model.JobID{id}, "PREEMPTED")
			}
		})
	}
}

// launch sends a started job to its batch host; an agent that is not
// connected gets it when it registers.
func (c *Controller) launch(j *model.Job) {
	if j == nil {
		return
	}
	st := c.svc.Settings()
	c.send(j.BatchHost(), &nodemsg.Launch{Job: j, Cluster: st.ClusterName, KillWait: st.KillWait})
}

// Terminate tells the nodes of running jobs to kill them (cancel, requeue,
// release). The batch host (or, for an allocation, the first node) reports
// the end; the others only clean up.
func (c *Controller) Terminate(jobs []model.JobID, reason string) {
	c.toJobNodes(jobs, func(j *model.Job) nodemsg.ToNode {
		return &nodemsg.SignalJob{Job: j.ID, Terminate: true, Message: reason, Run: j.Run()}
	})
}

// Suspend freezes (true) or thaws (false) the processes of running jobs
// on every node they hold.
func (c *Controller) Suspend(jobs []model.JobID, suspend bool) {
	c.toJobNodes(jobs, func(j *model.Job) nodemsg.ToNode {
		return &nodemsg.SignalJob{Job: j.ID, Suspend: suspend, Resume: !suspend, Run: j.Run()}
	})
}

// toJobNodes sends each job's message to every node it holds.
func (c *Controller) toJobNodes(jobs []model.JobID, msg func(j *model.Job) nodemsg.ToNode) {
	snap := c.store.Snapshot()
	for _, id := range jobs {
		j := snap.Job(id)
		if j == nil || len(j.Alloc) == 0 {
			continue
		}
		for _, n := range j.NodeNames() {
			c.send(n, msg(j))
		}
	}
}

// Signal delivers a signal to running jobs: by default to their steps
// only (Slurm spares the batch shell signals other than KILL), with
// ScopeBatch to the batch shell only, with ScopeFull to both.
func (c *Controller) Signal(jobs []model.JobID, sig int, scope service.SignalScope) {
	snap := c.store.Snapshot()
	batchOnly := scope == service.ScopeBatch
	stepsOnly := scope == service.ScopeSteps && sig != int(syscall.SIGKILL)
	for _, id := range jobs {
		j := snap.Job(id)
		if j == nil || len(j.Alloc) == 0 {
			continue
		}
		nodes := j.NodeNames()
		if batchOnly {
			nodes = nodes[:1]
		}
		for _, n := range nodes {
			c.send(n, &nodemsg.SignalJob{Job: id, Signal: sig, BatchOnly: batchOnly, StepsOnly: stepsOnly, Run: j.Run()})
		}
	}
}

// Reconfigure tells every connected agent that scontrol reconfigure ran:
// each reads its configuration again (a joined one takes slurmConf first)
// and registers what it finds, as slurmd does.
func (c *Controller) Reconfigure(slurmConf string) {
	c.mu.Lock()
	conns := slices.Collect(maps.Values(c.agents))
	c.mu.Unlock()
	for _, a := range conns {
		a.send(&nodemsg.Reconfigure{SlurmConf: slurmConf})
	}
}

func (c *Controller) send(node string, msg nodemsg.ToNode) {
	c.mu.Lock()
	a := c.agents[node]
	c.mu.Unlock()
	if a != nil {
		a.send(msg)
	}
}

// housekeepingLoop marks silent nodes down and purges old jobs.
func (c *Controller) housekeepingLoop(ctx context.Context) {
	tick := c.clock.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	lastPurge := time.Time{}
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		now := c.clock.Now()
		st := c.svc.Settings()
		c.checkLiveness(now, time.Duration(st.SlurmdTimeout)*time.Second)
		c.reservationTick(now)
		if now.Sub(lastPurge) > 5*time.Second {
			lastPurge = now
			c.purge(now.Unix() - st.MinJobAge)
		}
	}
}

func (c *Controller) checkLiveness(now time.Time, timeout time.Duration) {
	if timeout <= 0 {
		return
	}
	for _, n := range c.store.Snapshot().Nodes() {
		if n.State != model.NodeUp || !n.Responding {
			continue
		}
		c.mu.Lock()
		seen, ok := c.lastSeen[n.Name]
		if !ok {
			seen, c.lastSeen[n.Name] = now, now
		}
		c.mu.Unlock()
		if now.Sub(seen) > timeout {
			c.log.Warn("node not responding", "node", n.Name, "silent", now.Sub(seen).Round(time.Second))
			var hit []*model.Job
			c.store.Snapshot().EachActive(func(j *model.Job) bool {
				if j.State == model.JobRunning && slices.Contains(j.NodeNames(), n.Name) {
					hit = append(hit, j)
				}
				return true
			})
			defer func() {
				for _, j := range hit {
					c.cleanup(j, n.Name)
				}
			}()
			if _, err := c.raft.Apply(fsm.TypeNodeDown, &fsm.NodeDown{Node: n.Name, Reason: fsm.ReasonNotResponding, Now: now.Unix()}); err != nil {
				c.log.Error("commit node down", "node", n.Name, "err", err)
			}
			c.Kick()
		}
	}
}

func (c *Controller) purge(before int64) {
	var old []model.JobID
	snap := c.store.Snapshot()
	// Only the finished jobs: walking every job made this look, every
	// 5 s, grow with the queue.
	snap.EachFinished(func(j *model.Job) bool {
		if j.EndTime > 0 && j.EndTime < before && !snap.InOutbox(j.ID) {
			old = append(old, j.ID)
		}
		return len(old) < 5000
	})
	if len(old) == 0 {
		return
	}
	if _, err := c.raft.Apply(fsm.TypePurge, &fsm.Purge{Jobs: old}); err != nil && !errors.Is(err, raftnode.ErrNoSpace) {
		c.log.Error("commit purge", "err", err)
	}
	c.mu.Lock()
	for _, id := range old {
		delete(c.acked, id)
	}
	c.mu.Unlock()
}
