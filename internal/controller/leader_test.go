package controller

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/drover-hpc/drover/internal/api"
	"github.com/drover-hpc/drover/internal/clock"
	"github.com/drover-hpc/drover/internal/fsm"
	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/service"
	"github.com/drover-hpc/drover/internal/state"
)

// fakeLeadership is a leadership source a test flips by hand.
type fakeLeadership struct {
	mu      sync.Mutex
	leads   bool
	leader  string
	changed chan struct{}
}

func newFakeLeadership() *fakeLeadership { return &fakeLeadership{changed: make(chan struct{})} }

func (f *fakeLeadership) IsLeader() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.leads
}

func (f *fakeLeadership) Leader() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.leader
}

func (f *fakeLeadership) LeadershipChanged() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.changed
}

func (f *fakeLeadership) set(leads bool, leader string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.leads, f.leader = leads, leader
	close(f.changed)
	f.changed = make(chan struct{})
}

// proposals counts the commands that reach the log, by type.
type proposals struct {
	next service.Committer
	mu   sync.Mutex
	n    map[fsm.Type]int
}

func (p *proposals) Apply(t fsm.Type, body any) (any, error) {
	p.mu.Lock()
	p.n[t]++
	p.mu.Unlock()
	return p.next.Apply(t, body)
}

func (p *proposals) count(t fsm.Type) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.n[t]
}

func (p *proposals) total() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, v := range p.n {
		n += v
	}
	return n
}

// waitFor polls cond (the loops react on their own goroutines), up to a
// bound that names what it waited for.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// Leadership gained starts the leader loops, lost stops them (their
// timers with them) and nothing more is proposed, regained resumes them;
// a follower's mutating RPC is refused with the leader's address.
func TestLeadershipStartsAndStopsLeaderLoops(t *testing.T) {
	st := state.New(1)
	d := &direct{f: fsm.New(st, nil)}
	props := &proposals{next: d, n: map[fsm.Type]int{}}
	lead := newFakeLeadership()
	lead.set(false, "ctl-b:6817")
	clk := clock.NewFake(time.Unix(100_000, 0))
	commit := LeaderOnly(props, lead)
	c := New(slog.New(slog.NewTextHandler(io.Discard, nil)), st, commit, clk)
	c.SetLeadership(lead)
	settings := &service.Settings{
		ClusterName: "c", MaxArraySize: 1001, FirstJobID: 1, KillWait: 30, SlurmdTimeout: 300, MinJobAge: 300,
		Nodes: []*model.Node{{Name: "n1", CPUs: 2, Memory: 1000}},
		Partitions: []*model.Partition{{Name: "p", Nodes: []string{"n1"}, Default: true, MaxTime: model.Unlimited,
			DefaultTime: model.Unset, MaxNodes: model.Unlimited}},
		Priority: service.PriorityConfig{Multifactor: true, CalcPeriod: 60},
	}
	svc := service.New(nil, st, commit, clk, c, settings)
	c.SetService(svc)
	if err := svc.InstallConfig(settings); err == nil {
		t.Fatal("a follower installed a configuration")
	}
	lead.set(true, "ctl-a:6817")
	if err := svc.InstallConfig(settings); err != nil {
		t.Fatal(err)
	}
	lead.set(false, "ctl-b:6817")
	submit := func() {
		t.Helper()
		spec := &model.JobSpec{Name: "j", Script: "#!/bin/sh\n", TimeLimit: model.Unset, MinNodes: model.Unset,
			NTasks: model.Unset, CPUsPerTask: model.Unset, MemPerNode: model.Unset}
		if _, err := d.Apply(fsm.TypeSubmit, &fsm.Submit{Spec: spec, Partition: "p", User: "u", Now: clk.Now().Unix()}); err != nil {
			t.Fatal(err)
		}
	}
	submit() // in the accounting outbox: a leader acknowledges it at once

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	done := make(chan struct{})
	go func() { c.Run(ctx); close(done) }()
	loops := int32(len(c.leaderLoops()))

	// A follower: no loops, and its RPCs name the leader.
	caller := api.WithIdentity(context.Background(), &api.Identity{UID: 1000, GID: 1000, User: "u"})
	_, err := svc.SubmitJob(caller, &model.JobSpec{Script: "#!/bin/sh\ntrue\n", WorkDir: "/tmp", TimeLimit: model.Unset,
		TimeMin: model.Unset, MinNodes: model.Unset, MaxNodes: model.Unset, NTasks: model.Unset, CPUsPerTask: model.Unset,
		TasksPerNode: model.Unset, MemPerNode: model.Unset, MemPerCPU: model.Unset})
	if nl, ok := service.IsNotLeader(err); !ok || nl.Leader != "ctl-b:6817" {
		t.Fatalf("a follower's sbatch: %v, want a NotLeaderError naming ctl-b:6817", err)
	}
	if c.Leading() || c.loopsUp.Load() != 0 {
		t.Fatal("a follower runs the leader loops")
	}

	// Gained: every loop runs and proposes (the outbox is acknowledged,
	// the priority loop recalculates after its period).
	lead.set(true, "ctl-a:6817")
	waitFor(t, "the leader loops to start", func() bool { return c.loopsUp.Load() == loops })
	waitFor(t, "the outbox acknowledged", func() bool { return props.count(fsm.TypeAcctAck) > 0 })
	// Six timers: the schedule loop's ticker and its rest after the
	// first pass, housekeeping's ticker, the priority period, the
	// accounting loop's pause after its write, the gang slice ticker.
	if err := clk.BlockUntil(ctx, 6); err != nil {
		t.Fatalf("the loops never armed their timers (%d armed)", clk.Waiters())
	}
	clk.Advance(time.Minute)
	waitFor(t, "a priority recalculation", func() bool { return props.count(fsm.TypePriorities) > 0 })

	// Lost: the loops stop and disarm their timers; nothing is proposed
	// whatever happens next.
	lead.set(false, "ctl-b:6817")
	waitFor(t, "the leader loops to stop", func() bool { return c.loopsUp.Load() == 0 })
	if c.Leading() {
		t.Fatal("still leading after losing leadership")
	}
	if n := clk.Waiters(); n != 0 {
		t.Fatalf("%d timers still armed after the loops stopped", n)
	}
	before := props.total()
	submit()
	c.Kick()
	clk.Advance(time.Hour)
	if after := props.total(); after != before {
		t.Fatalf("%d commands proposed after leadership was lost", after-before)
	}

	// Regained: they resume and catch up.
	acks := props.count(fsm.TypeAcctAck)
	lead.set(true, "ctl-a:6817")
	waitFor(t, "the leader loops to restart", func() bool { return c.loopsUp.Load() == loops })
	waitFor(t, "the new outbox entry acknowledged", func() bool { return props.count(fsm.TypeAcctAck) > acks })

	cancel()
	<-done
	if c.loopsUp.Load() != 0 || c.Leading() {
		t.Fatal("loops still running after Run returned")
	}
}

// Polled notices a probe's change at its next tick, not before.
func TestPolledLeadership(t *testing.T) {
	probe := newFakeLeadership()
	clk := clock.NewFake(time.Unix(0, 0))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	l := Polled(ctx, probe, clk, 100*time.Millisecond)
	if err := clk.BlockUntil(ctx, 1); err != nil {
		t.Fatal("the poller never armed its ticker")
	}
	changed := l.LeadershipChanged()
	probe.set(true, "me")
	if !l.IsLeader() || l.Leader() != "me" {
		t.Fatal("Polled does not answer live")
	}
	clk.Advance(99 * time.Millisecond)
	select {
	case <-changed:
		t.Fatal("change reported before the poll")
	default:
	}
	clk.Advance(time.Millisecond)
	select {
	case <-changed:
	case <-ctx.Done():
		t.Fatal("the poll did not report the change")
	}
}

// LeaderOnly refuses, naming the leader, while another leads; with no
// leader known the log gives its own answer; a leader commits.
func TestLeaderOnly(t *testing.T) {
	st := state.New(1)
	props := &proposals{next: &direct{f: fsm.New(st, nil)}, n: map[fsm.Type]int{}}
	probe := newFakeLeadership()
	commit := LeaderOnly(props, probe)
	ack := &fsm.AcctAck{}
	probe.set(false, "ctl-b:6817")
	if _, err := commit.Apply(fsm.TypeAcctAck, ack); err == nil || props.total() != 0 {
		t.Fatalf("a follower proposed (err %v, %d proposals)", err, props.total())
	} else if nl, ok := service.IsNotLeader(err); !ok || nl.Leader != "ctl-b:6817" {
		t.Fatalf("a follower's refusal: %v", err)
	}
	probe.set(false, "")
	if _, err := commit.Apply(fsm.TypeAcctAck, ack); err != nil || props.total() != 1 {
		t.Fatalf("with no leader known the command did not reach the log (err %v)", err)
	}
	probe.set(true, "ctl-a:6817")
	if _, err := commit.Apply(fsm.TypeAcctAck, ack); err != nil || props.total() != 2 {
		t.Fatalf("the leader's command: %v", err)
	}
}
