package controller

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/drover-hpc/drover/internal/acct"
	"github.com/drover-hpc/drover/internal/clock"
	"github.com/drover-hpc/drover/internal/fsm"
	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/state"
)

// direct commits straight to an FSM: the loop's logic without Raft.
type direct struct {
	mu    sync.Mutex
	f     *fsm.FSM
	index uint64
}

func (d *direct) Apply(t fsm.Type, body any) (any, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	data, err := fsm.Encode(t, body)
	if err != nil {
		return nil, err
	}
	d.index++
	res := d.f.Apply(d.index, data)
	if err, ok := res.(error); ok {
		return nil, err
	}
	return res, nil
}

// memStore is an accounting database in memory that can be "down".
type memStore struct {
	mu     sync.Mutex
	down   bool
	jobs   map[uint32]*acct.Job
	writes int
}

func (m *memStore) PutJobs(_ context.Context, jobs []*acct.Job) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.down {
		return acct.ErrUnavailable
	}
	for _, j := range jobs {
		m.jobs[j.JobID] = j
	}
	m.writes++
	return nil
}
func (m *memStore) Jobs(context.Context, acct.Query) ([]*acct.Job, error) { return nil, nil }
func (m *memStore) Ping(context.Context) error                            { return nil }
func (m *memStore) Close() error                                          { return nil }

func (m *memStore) get(id uint32) *acct.Job {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.jobs[id]
}

func (m *memStore) setDown(down bool) {
	m.mu.Lock()
	m.down = down
	m.mu.Unlock()
}

func newAcctController(t *testing.T, clk clock.Clock) (*Controller, *direct, *memStore) {
	st := state.New(1)
	d := &direct{f: fsm.New(st, nil)}
	c := New(slog.New(slog.NewTextHandler(io.Discard, nil)), st, d, clk)
	mem := &memStore{jobs: map[uint32]*acct.Job{}}
	c.SetAccounting(mem, "test")
	spec := &model.JobSpec{Name: "j", Script: "#!/bin/sh\n", TimeLimit: model.Unset, MinNodes: model.Unset,
		NTasks: model.Unset, CPUsPerTask: model.Unset, MemPerNode: model.Unset}
	for range 3 {
		if _, err := d.Apply(fsm.TypeSubmit, &fsm.Submit{Spec: spec, Partition: "p", User: "u", Now: 1}); err != nil {
			t.Fatal(err)
		}
	}
	return c, d, mem
}

// While the database is down nothing leaves the outbox; when it returns
// every job is written once, in its newest state.
func TestAccountingOutboxDrain(t *testing.T) {
	c, d, mem := newAcctController(t, clock.Real{})
	mem.setDown(true)
	if err := c.drainOutbox(context.Background(), c.store.Snapshot()); err == nil {
		t.Fatal("a write to a database that is down succeeded")
	}
	if n := c.store.Snapshot().OutboxLen(); n != 3 {
		t.Fatalf("outbox %d after a failed write, want 3", n)
	}
	if _, err := d.Apply(fsm.TypeCancel, &fsm.Cancel{Jobs: []model.JobID{2}, By: 0, Now: 5}); err != nil {
		t.Fatal(err)
	}
	mem.setDown(false)
	if err := c.drainOutbox(context.Background(), c.store.Snapshot()); err != nil {
		t.Fatal(err)
	}
	if n := c.store.Snapshot().OutboxLen(); n != 0 {
		t.Fatalf("outbox %d after the write", n)
	}
	if len(mem.jobs) != 3 || mem.get(2).State != "CANCELLED" || mem.get(1).State != "PENDING" || mem.get(1).Cluster != "test" {
		t.Fatalf("stored %+v", mem.jobs)
	}
	if st := c.AcctStatus(); st.Backlog != 0 || st.Written != 3 {
		t.Fatalf("status %+v", st)
	}
}

// The loop writes what changes, and keeps going after an outage. On a
// fake clock: after each write (or failed write) the loop arms one timer,
// so waiting for that timer is waiting for the write.
func TestAccountingLoop(t *testing.T) {
	clk := clock.NewFake(time.Unix(1000, 0))
	c, d, mem := newAcctController(t, clk)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	done := make(chan struct{})
	go func() { c.accountingLoop(ctx); close(done) }()
	settled := func(what string) {
		t.Helper()
		if err := clk.BlockUntil(ctx, 1); err != nil {
			t.Fatalf("timed out waiting for %s (status %+v)", what, c.AcctStatus())
		}
	}
	settled("the first write")
	if mem.get(3) == nil || c.store.Snapshot().OutboxLen() != 0 {
		t.Fatalf("first records not written: outbox %d", c.store.Snapshot().OutboxLen())
	}
	mem.setDown(true)
	if _, err := d.Apply(fsm.TypeCancel, &fsm.Cancel{Jobs: []model.JobID{1}, Now: 7}); err != nil {
		t.Fatal(err)
	}
	clk.Advance(acctInterval)
	settled("the failed write")
	if st := c.AcctStatus(); !st.Failing || st.Backlog != 1 {
		t.Fatalf("status %+v during the outage, want failing with a backlog of 1", st)
	}
	// The retry waits a second; nothing is written before it.
	clk.Advance(time.Second - time.Millisecond)
	if st := c.AcctStatus(); !st.Failing {
		t.Fatalf("retried before the backoff: %+v", st)
	}
	mem.setDown(false)
	clk.Advance(time.Millisecond)
	settled("the write after the outage")
	if j := mem.get(1); j == nil || j.State != "CANCELLED" {
		t.Fatalf("record after the outage: %+v", j)
	}
	if st := c.AcctStatus(); st.Failing || st.Backlog != 0 {
		t.Fatalf("status %+v after the outage", st)
	}
	cancel()
	<-done
}
