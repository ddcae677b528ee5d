package raftnode

import (
	"fmt"
	"sync"
	"time"

	"github.com/drover-hpc/drover/internal/fsm"
)

// Commands that may wait a little ride with the next one. Every commit
// costs the log an fsync, and Raft shares one only among the commands
// that reach it while the previous write is on disk. A stream of trivial
// jobs made three commits per job at different moments — the
// submission, the start, the end — and a submission often waited behind
// the previous job's end. ApplyDeferred queues a command (a job's end,
// an accounting acknowledgement) until the next Apply, which commits the
// queue and its own command as one fsm.Group entry (one write, one
// fsync), or until the command's wait runs out, when the queue commits
// on its own.
//
// Nothing is answered before it is on disk: each queued caller gets its
// own command's result once the entry holding it is committed, exactly as
// from Apply; a failed commit fails every command of the entry. The queue
// lives in memory only: a crash loses what was not yet answered, which the
// callers already handle (an agent resends an unacknowledged end).

// maxRiders bounds the commands queued for one entry (Raft's
// MaxAppendEntries bounded a batch of separate entries alike).
const maxRiders = 256

type rider struct {
	t    fsm.Type
	body any
	data []byte
	done chan riderResult
}

type riderResult struct {
	res any
	err error
}

// riders is the queue of commands waiting to ride with the next commit.
type riders struct {
	mu    sync.Mutex
	q     []*rider
	timer *time.Timer
}

// take empties the queue.
func (rs *riders) take() []*rider {
	rs.mu.Lock()
	q := rs.q
	rs.q = nil
	if rs.timer != nil {
		rs.timer.Stop()
		rs.timer = nil
	}
	rs.mu.Unlock()
	return q
}

// ApplyDeferred commits a command with the next Apply, or on its own once
// wait has passed, whichever comes first, and returns its result as Apply
// does. Use it for commands whose effect may come a few milliseconds
// later without harm, never for one a user waits on.
func (n *Node) ApplyDeferred(t fsm.Type, body any, wait time.Duration) (any, error) {
	if t == fsm.TypeGroup {
		return nil, fmt.Errorf("a group of commands cannot wait for another")
	}
	if err := n.space.check(); err != nil {
		return nil, err
	}
	data, err := fsm.Encode(t, body)
	if err != nil {
		return nil, err
	}
	r := &rider{t: t, body: body, data: data, done: make(chan riderResult, 1)}
	rs := &n.riders
	rs.mu.Lock()
	rs.q = append(rs.q, r)
	full := len(rs.q) >= maxRiders
	if !full && rs.timer == nil {
		// The first command's wait bounds the queue's: later ones
		// wait less, never more.
		rs.timer = time.AfterFunc(wait, n.flushRiders)
	}
	rs.mu.Unlock()
	if full {
		n.flushRiders()
	}
	out := <-r.done
	return out.res, out.err
}

// flushRiders commits the queued commands on their own.
func (n *Node) flushRiders() {
	q := n.riders.take()
	if len(q) == 0 {
		return
	}
	if len(q) == 1 {
		res, err := n.applyData(q[0].t, q[0].body, q[0].data)
		q[0].done <- riderResult{res, err}
		return
	}
	n.applyWith(q, nil)
}

// applyWith commits the queued commands q and, when own is not nil, the
// caller's command after them, as one Group entry; it answers every rider
// and returns own's result.
func (n *Node) applyWith(q []*rider, own *rider) (any, error) {
	all := q
	if own != nil {
		all = append(q[:len(q):len(q)], own)
	}
	entries := make([][]byte, len(all))
	bodies := make([]any, len(all))
	for i, r := range all {
		entries[i], bodies[i] = r.data, r.body
	}
	g := fsm.NewGroup(entries, bodies)
	data, err := fsm.Encode(fsm.TypeGroup, g)
	var res any
	if err == nil {
		res, err = n.applyData(fsm.TypeGroup, g, data)
	}
	var results []any
	if err == nil {
		results = res.(fsm.GroupResult).Results
	}
	var ownRes riderResult
	for i, r := range all {
		out := riderResult{err: err}
		if err == nil {
			out.res = results[i]
			if e, ok := out.res.(error); ok {
				out = riderResult{err: e}
			}
		}
		if r == own {
			ownRes = out
			continue
		}
		r.done <- out
	}
	return ownRes.res, ownRes.err
}
