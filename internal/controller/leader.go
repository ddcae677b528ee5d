package controller

import (
	"context"
	"sync"
	"time"

	"github.com/drover-hpc/drover/internal/clock"
	"github.com/drover-hpc/drover/internal/fsm"
	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/sched"
	"github.com/drover-hpc/drover/internal/service"
)

// Probe answers whether this controller leads now, and who does: a Raft
// member (raftnode.Node) is one.
type Probe interface {
	// IsLeader reports whether this controller leads now.
	IsLeader() bool
	// Leader is the leader's address, "" while none is known.
	Leader() string
}

// Leadership is where the controller learns whether it leads, and when
// that changes: Polled over Raft in production, a fake in tests.
type Leadership interface {
	Probe
	// LeadershipChanged returns a channel closed at the next change; the
	// caller then reads IsLeader and Leader again.
	LeadershipChanged() <-chan struct{}
}

// alwaysLeader is the leadership of a controller built without one (unit
// tests that drive the loops directly): it leads, for ever.
type alwaysLeader struct{}

func (alwaysLeader) IsLeader() bool                     { return true }
func (alwaysLeader) Leader() string                     { return "" }
func (alwaysLeader) LeadershipChanged() <-chan struct{} { return nil }

// leaderLoop is one loop that runs only while this controller leads. It
// returns when ctx ends (leadership lost, or shutdown).
type leaderLoop struct {
	name string
	run  func(ctx context.Context)
}

// leaderLoops is the one list of leader-only loops. A new one is a line
// here: it starts when leadership is gained and its ctx is cancelled (and
// waited for) when it is lost. It must propose commands only from inside
// run and stop its timers when ctx ends.
func (c *Controller) leaderLoops() []leaderLoop {
	return []leaderLoop{
		{"schedule", c.scheduleLoop},         // scheduling passes and their pacing
		{"accounting", c.accountingLoop},     // the accounting outbox writer
		{"housekeeping", c.housekeepingLoop}, // dead-node detection, MinJobAge purge
		{"priority", c.priorityLoop},         // multifactor recalculation
		{"slices", c.sliceLoop},              // gang time slices
	}
}

// SetLeadership sets where leadership comes from; before Run. Without it
// the controller leads for ever (one controller, as in unit tests).
func (c *Controller) SetLeadership(l Leadership) { c.leadership = l }

// Leading reports whether the leader loops are running.
func (c *Controller) Leading() bool { return c.leading.Load() }

// Run starts the leader loops whenever this controller gains leadership
// and stops them whenever it loses it, until ctx ends.
func (c *Controller) Run(ctx context.Context) {
	l := c.leadership
	if l == nil {
		l = alwaysLeader{}
	}
	var t *term
	defer func() {
		if t != nil {
			c.endTerm(t)
		}
	}()
	for {
		changed := l.LeadershipChanged() // before reading, so no change is missed
		switch lead := l.IsLeader(); {
		case lead && t == nil:
			t = c.startTerm(ctx)
		case !lead && t != nil:
			c.endTerm(t)
			t = nil
		}
		select {
		case <-ctx.Done():
			return
		case <-changed:
		}
	}
}

// term is one period of leadership: the loops it started and how to end
// them.
type term struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func (c *Controller) startTerm(parent context.Context) *term {
	ctx, cancel := context.WithCancel(parent)
	t := &term{cancel: cancel}
	now := c.clock.Now()
	c.mu.Lock()
	snap := c.store.Snapshot()
	c.inherited = map[model.JobID]uint32{}
	snap.EachActive(func(j *model.Job) bool {
		if j.State == model.JobRunning {
			c.inherited[j.ID] = j.Run()
		}
		return true
	})
	c.unregistered = map[string]bool{}
	for _, n := range snap.Nodes() {
		// Give every agent a full timeout to (re)connect to a new leader.
		c.lastSeen[n.Name] = now
		c.unregistered[n.Name] = true
	}
	c.mu.Unlock()
	loops := c.leaderLoops()
	c.leading.Store(true)
	c.log.Info("leading: leader loops start", "loops", len(loops))
	for _, lp := range loops {
		t.wg.Add(1)
		c.loopsUp.Add(1)
		go func() {
			defer t.wg.Done()
			defer c.loopsUp.Add(-1)
			lp.run(ctx)
		}()
	}
	return t
}

// endTerm stops the term's loops and waits until every one has returned,
// so nothing they started proposes a command after leadership is gone.
func (c *Controller) endTerm(t *term) {
	c.leading.Store(false)
	t.cancel()
	t.wg.Wait()
	c.setPlanned(nil)           // a follower plans nothing
	c.scratch = sched.Scratch{} // nor keeps a pass's arrays
	c.log.Info("not leading: leader loops stopped")
}

// LeaderOnly gates a committer on leadership: a controller that does not
// lead, while another is known to, refuses every command with a
// *service.NotLeaderError naming that leader, before anything reaches the
// log. The service and the controller both commit through it, so a
// follower's RPCs and a stale loop alike are refused. With no leader known
// (an election; a single voter reopening its log after a failed write) the
// command goes on to the log, which refuses it with its own reason.
func LeaderOnly(next service.Committer, l Probe) service.Committer {
	return &leaderOnly{next: next, l: l}
}

type leaderOnly struct {
	next service.Committer
	l    Probe
}

func (g *leaderOnly) Apply(t fsm.Type, body any) (any, error) {
	if !g.l.IsLeader() {
		if leader := g.l.Leader(); leader != "" {
			return nil, &service.NotLeaderError{Leader: leader}
		}
	}
	return g.next.Apply(t, body)
}

// Polled makes a Leadership of a probe by asking it every interval on clk
// until ctx ends: a change is noticed within one interval. IsLeader and
// Leader answer live, so LeaderOnly refuses at once.
func Polled(ctx context.Context, p Probe, clk clock.Clock, every time.Duration) Leadership {
	l := &polled{Probe: p, lead: p.IsLeader(), leader: p.Leader(), changed: make(chan struct{})}
	go l.watch(ctx, clk, every)
	return l
}

type polled struct {
	Probe
	mu      sync.Mutex
	lead    bool
	leader  string
	changed chan struct{}
}

func (l *polled) LeadershipChanged() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.changed
}

func (l *polled) watch(ctx context.Context, clk clock.Clock, every time.Duration) {
	tick := clk.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		lead, leader := l.IsLeader(), l.Leader()
		l.mu.Lock()
		if lead != l.lead || leader != l.leader {
			l.lead, l.leader = lead, leader
			close(l.changed)
			l.changed = make(chan struct{})
		}
		l.mu.Unlock()
	}
}
