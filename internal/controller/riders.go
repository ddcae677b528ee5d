package controller

import (
	"time"

	"github.com/drover-hpc/drover/internal/fsm"
	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/service"
)

// Some of the controller's commits may wait a few milliseconds for the
// next commit and share its log write (raftnode.ApplyDeferred): a job's
// end while nothing waits for what it frees, and the accounting
// acknowledgement. During a stream of trivial jobs submitted one by one,
// a job's end otherwise took an fsync of its own, often just as the next
// submission needed one; now it rides with that submission (or with a
// start), and the submission no longer queues behind it. A command is
// still answered only once committed: an end is acknowledged to its agent
// after the entry holding it is on disk.

// endWait bounds how long a job's end waits for a companion commit; a
// stream of submissions from one shell comes every few milliseconds.
const endWait = 25 * time.Millisecond

// ackWait bounds the wait of an accounting acknowledgement (it only lets
// written records leave the outbox).
const ackWait = 50 * time.Millisecond

// deferrer is a committer that can hold a command for the next commit
// (raftnode.Node).
type deferrer interface {
	ApplyDeferred(t fsm.Type, body any, wait time.Duration) (any, error)
}

// ApplyDeferred refuses on a follower as Apply does, and hands the command
// to a committer that can hold it (else commits it at once).
func (g *leaderOnly) ApplyDeferred(t fsm.Type, body any, wait time.Duration) (any, error) {
	if !g.l.IsLeader() {
		if leader := g.l.Leader(); leader != "" {
			return nil, &service.NotLeaderError{Leader: leader}
		}
	}
	return applyDeferred(g.next, t, body, wait)
}

func applyDeferred(c service.Committer, t fsm.Type, body any, wait time.Duration) (any, error) {
	if d, ok := c.(deferrer); ok && wait > 0 {
		return d.ApplyDeferred(t, body, wait)
	}
	return c.Apply(t, body)
}

// endsMayWait reports whether job ends may wait for a companion commit:
// only while no queued job may be waiting for what they free. A job no
// pass has looked at yet (reason None: just submitted or released) gets
// a pass of its own, which commits its start or its reason, and the ends
// ride with that commit; one a pass left waiting (Resources, Priority,
// ...) might start only once the ends are committed, so they go at once
// and a queue on a full cluster keeps its pace.
func (c *Controller) endsMayWait() bool {
	snap := c.store.Snapshot()
	if snap.NumQueued() > maxFreshQueue {
		return false
	}
	fresh := true
	snap.EachQueued(func(j *model.Job) bool {
		fresh = j.Reason == model.ReasonNone
		return fresh
	})
	return fresh
}

// maxFreshQueue bounds the queued jobs endsMayWait looks at: a stream of
// submissions from one shell keeps one or two queued at a time.
const maxFreshQueue = 8
