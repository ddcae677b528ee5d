package controller

import (
	"context"
	"os/user"
	"strconv"
	"sync"
	"time"

	"github.com/drover-hpc/drover/internal/acct"
	"github.com/drover-hpc/drover/internal/fsm"
	"github.com/drover-hpc/drover/internal/state"
)

// The accounting loop drains the outbox kept in replicated state: it
// writes the queued jobs' current records to the database in the order
// they changed, then commits an AcctAck so they leave the outbox. If the
// database is down, records wait in the outbox (and jobs are not purged)
// while scheduling goes on; a crash between the write and the ack only
// writes the same records again, which the store's upserts absorb.

const (
	acctBatch    = 2000                   // records per database transaction
	acctInterval = 200 * time.Millisecond // gathers bursts into one write
	acctMaxWait  = 10 * time.Second       // longest retry delay while the database is down
)

// AcctStatus is what the accounting loop reports (sdiag, logs).
type AcctStatus struct {
	Backlog   int    // jobs awaiting their write
	Failing   bool   // the last write failed
	LastError string // its error
	Written   uint64 // records written since start
}

type acctLoop struct {
	store   acct.Store // nil: accounting disabled, the outbox is only drained
	cluster string

	mu      sync.Mutex
	status  AcctStatus
	groups  map[uint32]string
	backoff time.Duration
}

// SetAccounting installs the accounting store the loop writes to (nil:
// accounting disabled) and the cluster name records carry; before Run.
func (c *Controller) SetAccounting(st acct.Store, cluster string) {
	c.acct = &acctLoop{store: st, cluster: cluster, groups: map[uint32]string{}}
}

// AcctStatus reports the accounting backlog and health.
func (c *Controller) AcctStatus() AcctStatus {
	snap := c.store.Snapshot()
	c.acct.mu.Lock()
	defer c.acct.mu.Unlock()
	st := c.acct.status
	st.Backlog = snap.OutboxLen()
	return st
}

func (c *Controller) accountingLoop(ctx context.Context) {
	for {
		changed := c.store.Changed()
		snap := c.store.Snapshot()
		if snap.OutboxLen() == 0 {
			select {
			case <-ctx.Done():
				return
			case <-changed:
				continue
			}
		}
		wait := acctInterval
		if err := c.drainOutbox(ctx, snap); err != nil {
			wait = c.acct.failed(c, err, snap.OutboxLen())
		} else if c.store.Snapshot().OutboxLen() >= acctBatch {
			wait = 0 // a backlog: keep going
		}
		t := c.clock.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// drainOutbox writes one batch and acknowledges it.
func (c *Controller) drainOutbox(ctx context.Context, snap *state.Snapshot) error {
	a := c.acct
	var last uint64
	var recs []*acct.Job
	snap.Outbox(acctBatch, func(e state.OutboxEntry) bool {
		last = e.Seq
		if j := snap.Job(e.Job); j != nil && a.store != nil {
			recs = append(recs, acct.FromModel(a.cluster, j, a.group(j.GroupID)))
		}
		return true
	})
	if len(recs) > 0 {
		wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		err := a.store.PutJobs(wctx, recs)
		cancel()
		if err != nil {
			return err
		}
	}
	// A full batch means a backlog: its acknowledgement goes at once.
	var wait time.Duration
	if len(recs) < acctBatch {
		wait = ackWait
	}
	if _, err := applyDeferred(c.raft, fsm.TypeAcctAck, &fsm.AcctAck{Seq: last}, wait); err != nil {
		return err
	}
	a.mu.Lock()
	if a.status.Failing {
		c.log.Info("accounting storage is back", "written", len(recs))
	}
	a.status.Failing, a.status.LastError, a.backoff = false, "", 0
	a.status.Written += uint64(len(recs))
	a.mu.Unlock()
	return nil
}

// failed records a failed write and returns how long to wait before the
// next try: doubling from one second up to acctMaxWait.
func (a *acctLoop) failed(c *Controller, err error, backlog int) time.Duration {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.status.Failing || a.backoff >= acctMaxWait {
		c.log.Warn("accounting storage unavailable; job records are kept until it returns",
			"backlog", backlog, "err", err)
	}
	a.status.Failing, a.status.LastError = true, err.Error()
	a.backoff = min(max(2*a.backoff, time.Second), acctMaxWait)
	return a.backoff
}

// group names a gid, remembering the answer: records carry group names,
// and most jobs share a few groups.
func (a *acctLoop) group(gid uint32) string {
	if name, ok := a.groups[gid]; ok {
		return name
	}
	id := strconv.FormatUint(uint64(gid), 10)
	name := id
	if g, err := user.LookupGroupId(id); err == nil {
		name = g.Name
	}
	a.groups[gid] = name
	return name
}
