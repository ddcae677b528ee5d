package controller

import (
	"context"
	"github.com/drover-hpc/drover/internal/acctmgr"
	"log/slog"
	"slices"
	"sync"
	"time"

	pb "github.com/drover-hpc/drover/api/drover/v1"
	"github.com/drover-hpc/drover/internal/clock"
	"github.com/drover-hpc/drover/internal/fsm"
	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/sched"
	"github.com/drover-hpc/drover/internal/service"
	"github.com/drover-hpc/drover/internal/state"
	"github.com/drover-hpc/drover/internal/wire"
)

// Controller owns the leader loops and the connected agents.
type Controller struct {
	log   *slog.Logger
	store *state.Store
	raft  service.Committer
	clock clock.Clock
	svc   *service.Service

	kick chan struct{}

	mu       sync.Mutex
	agents   map[string]*agentConn // node name → live stream
	lastSeen map[string]time.Time
	acked    map[model.JobID]bool // launches an agent confirmed
	stats    statCalls            // sstat requests awaiting the nodes
	acct     *acctLoop
	sstats   schedStats
}

// New builds a controller; call SetService before Run.
func New(log *slog.Logger, store *state.Store, raft service.Committer, clk clock.Clock) *Controller {
	c := &Controller{
		log: log, store: store, raft: raft, clock: clk,
		kick:     make(chan struct{}, 1),
		agents:   map[string]*agentConn{},
		lastSeen: map[string]time.Time{},
		acked:    map[model.JobID]bool{},
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

// Run starts the loops and blocks until ctx ends.
func (c *Controller) Run(ctx context.Context) {
	now := c.clock.Now()
	c.mu.Lock()
	for _, n := range c.store.Snapshot().Nodes() {
		// Give every agent a full timeout to reconnect after a restart.
		c.lastSeen[n.Name] = now
	}
	c.mu.Unlock()
	var wg sync.WaitGroup
	wg.Add(3)
	go func() { defer wg.Done(); c.scheduleLoop(ctx) }()
	go func() { defer wg.Done(); c.accountingLoop(ctx) }()
	go func() { defer wg.Done(); c.housekeepingLoop(ctx) }()
	wg.Wait()
}

func (c *Controller) scheduleLoop(ctx context.Context) {
	timer := time.NewTicker(time.Second)
	defer timer.Stop()
	for {
		t0 := time.Now()
		c.cycle()
		// sched_min_interval (once slurm.conf's value reaches Settings)
		// goes in place of the 0.
		rest := time.NewTimer(passGap(0, time.Since(t0)))
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
	in := &sched.Input{Nodes: snap.Nodes(), Partitions: map[string]*model.Partition{}, Jobs: snap}
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
	// jobs costs the pass nothing.
	snap.EachQueued(func(j *model.Job) bool {
		if !j.DepFailed {
			in.Pending = append(in.Pending, j)
		}
		return true
	})
	if in.Limits != nil {
		snap.EachAllocated(func(j *model.Job) bool {
			if j.State == model.JobRunning {
				in.Limits.Running = append(in.Limits.Running, j)
			}
			return true
		})
	}
	if len(in.Pending) == 0 {
		return
	}
	now := c.clock.Now().Unix()
	t0 := time.Now()
	plan := sched.Schedule(in, now, c.svc.SchedConfig())
	c.sstats.record(time.Since(t0), len(in.Pending))
	cmd := &fsm.Schedule{Now: now, DepFailed: plan.DepFailed}
	for _, st := range plan.Starts {
		cmd.Starts = append(cmd.Starts, fsm.StartEntry{Job: st.Job, Alloc: st.Alloc})
	}
	for id, reason := range plan.Reasons {
		if j := snap.Job(id); j != nil && j.Reason != reason {
			if cmd.Reasons == nil {
				cmd.Reasons = map[model.JobID]string{}
			}
			cmd.Reasons[id] = reason
		}
	}
	if len(cmd.Starts) == 0 && len(cmd.Reasons) == 0 && len(cmd.DepFailed) == 0 {
		return
	}
	res, err := c.raft.Apply(fsm.TypeSchedule, cmd)
	if err != nil {
		c.log.Error("commit schedule", "err", err)
		return
	}
	started := res.(fsm.ScheduleResult).Started
	if len(started) > 0 {
		c.log.Debug("started jobs", "count", len(started))
		after := c.store.Snapshot()
		for _, id := range started {
			c.launch(after.Job(id))
		}
		c.Kick() // more may fit now that reasons and counts changed
	}
}

// launch sends a started job to its batch host; an agent that is not
// connected gets it when it registers.
func (c *Controller) launch(j *model.Job) {
	if j == nil {
		return
	}
	st := c.svc.Settings()
	c.send(j.BatchHost(), &pb.ControllerMessage{Msg: &pb.ControllerMessage_Launch{Launch: &pb.Launch{
		Job: wire.JobToPB(j, wire.Full), Cluster: st.ClusterName, KillWait: st.KillWait,
	}}})
}

// Terminate tells the nodes of running jobs to kill them (cancel, requeue,
// release). The batch host (or, for an allocation, the first node) reports
// the end; the others only clean up.
func (c *Controller) Terminate(jobs []model.JobID, reason string) {
	snap := c.store.Snapshot()
	for _, id := range jobs {
		j := snap.Job(id)
		if j == nil || len(j.Alloc) == 0 {
			continue
		}
		for _, n := range j.NodeNames() {
			c.send(n, &pb.ControllerMessage{Msg: &pb.ControllerMessage_Signal{Signal: &pb.SignalJob{
				JobId: uint32(id), Terminate: true, Message: reason,
			}}})
		}
	}
}

// Signal delivers a signal to running jobs: the batch shell, and unless
// batchOnly every step on every node.
func (c *Controller) Signal(jobs []model.JobID, sig int, batchOnly bool) {
	snap := c.store.Snapshot()
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
			c.send(n, &pb.ControllerMessage{Msg: &pb.ControllerMessage_Signal{Signal: &pb.SignalJob{
				JobId: uint32(id), Signal: int32(sig), BatchOnly: batchOnly,
			}}})
		}
	}
}

func (c *Controller) send(node string, msg *pb.ControllerMessage) {
	c.mu.Lock()
	a := c.agents[node]
	c.mu.Unlock()
	if a != nil {
		a.send(msg)
	}
}

// housekeepingLoop marks silent nodes down and purges old jobs.
func (c *Controller) housekeepingLoop(ctx context.Context) {
	tick := time.NewTicker(500 * time.Millisecond)
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
	snap.EachJob(func(j *model.Job) bool {
		if j.Finished() && j.EndTime > 0 && j.EndTime < before && !snap.InOutbox(j.ID) {
			old = append(old, j.ID)
		}
		return len(old) < 5000
	})
	if len(old) == 0 {
		return
	}
	if _, err := c.raft.Apply(fsm.TypePurge, &fsm.Purge{Jobs: old}); err != nil {
		c.log.Error("commit purge", "err", err)
	}
	c.mu.Lock()
	for _, id := range old {
		delete(c.acked, id)
	}
	c.mu.Unlock()
}
