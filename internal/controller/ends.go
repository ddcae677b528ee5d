package controller

import (
	"sync"
	"time"

	"github.com/drover-hpc/drover/internal/fsm"
	"github.com/drover-hpc/drover/internal/nodemsg"
)

// An agent's stream is read by its own goroutine into a queue, so that the
// job ends that arrived while an earlier commit was on disk are committed
// together: their Raft commands are applied concurrently, which Raft
// writes as one batch (one fsync) instead of one after the other. Order
// is kept where it matters: a batch holds only consecutive JobEnded
// messages, and whatever came after them is handled after the batch.

// maxEndBatch bounds the ends committed together (Raft's MaxAppendEntries).
const maxEndBatch = 256

// received is one message of an agent's stream, or the error that ended it.
type received struct {
	msg nodemsg.FromNode
	err error
}

// readStream reads stream into out until it fails (the error is the last
// item) or done closes.
func readStream(stream nodemsg.Stream, out chan<- received, done <-chan struct{}) {
	for {
		m, err := stream.Recv()
		select {
		case out <- received{msg: m, err: err}:
		case <-done:
			return
		}
		if err != nil {
			return
		}
	}
}

// moreEnds adds to batch the JobEnded messages already queued in in,
// stopping at the first other item, which it returns (nil: none taken).
func moreEnds(batch []*nodemsg.JobEnded, in <-chan received) ([]*nodemsg.JobEnded, *received) {
	for len(batch) < maxEndBatch {
		select {
		case r := <-in:
			if e, ok := r.msg.(*nodemsg.JobEnded); ok && r.err == nil {
				batch = append(batch, e)
				continue
			}
			return batch, &r
		default:
			return batch, nil
		}
	}
	return batch, nil
}

// jobsEnded commits the ends node reported, acknowledges each committed
// one (the agent resends the others after it reconnects; a repeated end
// is applied as a no-op), and frees what they held. An error is the first
// commit that failed: the stream ends on it.
func (c *Controller) jobsEnded(conn *agentConn, node string, batch []*nodemsg.JobEnded) error {
	ends := batch[:0:0]
	for _, e := range batch {
		if !c.endsHere(node, e.Job) {
			// Only the node that runs a job's batch script ends it:
			// another node's (or a forged) report never does. Acked,
			// so that an agent holding a stale record stops resending.
			c.log.Warn("ignoring the end of a job this node does not hold", "node", node, "job", e.Job)
			conn.send(&nodemsg.EndAck{Job: e.Job})
			continue
		}
		ends = append(ends, e)
	}
	type outcome struct {
		res any
		err error
	}
	out := make([]outcome, len(ends))
	mayWait := c.endsMayWait()
	apply := func(i int) {
		e := ends[i]
		// A requeue (a launch that failed on the node) goes at once: the
		// job is back in the queue before anything else the node says
		// next (its drain, its health) is committed.
		var wait time.Duration
		if mayWait && !e.Requeue {
			wait = endWait
		}
		end := e.EndTime
		if end == 0 {
			end = c.clock.Now().Unix()
		}
		out[i].res, out[i].err = applyDeferred(c.raft, fsm.TypeJobEnded, &fsm.JobEnded{
			Job: e.Job, ExitCode: e.ExitCode, Signal: e.Signal,
			State: e.State, Reason: e.Reason, Now: end, StartTime: e.StartTime,
			Usage: e.Usage, Requeue: e.Requeue, Run: e.Run,
		}, wait)
	}
	if len(ends) == 1 {
		apply(0)
	} else {
		var wg sync.WaitGroup
		for i := range ends {
			wg.Add(1)
			go func() {
				defer wg.Done()
				apply(i)
			}()
		}
		wg.Wait()
	}
	var firstErr error
	freed := false
	for i, e := range ends {
		if err := out[i].err; err != nil {
			c.log.Error("commit job end", "job", e.Job, "err", err)
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		conn.send(&nodemsg.EndAck{Job: e.Job, Run: e.Run})
		if r, _ := out[i].res.(fsm.JobEndedResult); !r.Applied {
			// A duplicate, or the end of a stale run (the job was
			// requeued and may run elsewhere now): nothing to clean up,
			// and above all not the job's current run.
			c.log.Info("ignoring the end of a stale run or a repeated end", "job", e.Job, "run", e.Run, "node", node)
			continue
		}
		c.cleanup(c.store.Snapshot().Job(e.Job), node)
		c.resumed(out[i].res)
		freed = true
	}
	if freed {
		c.Kick()
	}
	return firstErr
}
