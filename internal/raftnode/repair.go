package raftnode

import (
	"errors"
	"time"

	"github.com/hashicorp/raft"
)

// watch repairs the member when a log write failed: hashicorp/raft steps
// down after a failed append, and raft-wal keeps refusing appends after a
// failed segment rotation or a half-written batch ("segment is sealed",
// "non-monotonic append") until the log is reopened. So the watcher waits
// until the state directory has room again, then closes the log and
// reopens it; committed state in memory is kept and nothing is replayed
// twice. It also checks every second, in case a signal was missed.
func (n *Node) watch() {
	defer close(n.done)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-n.stop:
			return
		case <-n.broken:
		case <-tick.C:
			if n.IsLeader() {
				n.snapshotIfManyJobs()
				continue
			}
		}
		n.repair()
	}
}

// repair reopens the log, waiting (with backoff) for space and retrying
// failed openings until it leads again or the node is closed.
func (n *Node) repair() {
	n.mu.RLock()
	inst := n.inst
	n.mu.RUnlock()
	// Leading again after a step-down proves nothing (raft re-elects
	// itself over a log that refuses every append); a barrier is a write.
	if inst != nil && n.waitLeader(inst.r, time.Second) && inst.r.Barrier(5*time.Second).Error() == nil {
		return
	}
	n.log.Error("raft log write failed: changes are refused until the log is reopened", "dir", n.cfg.Dir)
	n.mu.Lock()
	old := n.inst
	n.inst = nil
	n.mu.Unlock()
	if old != nil {
		if err := old.close(); err != nil {
			n.log.Warn("closing the failed raft log", "err", err)
		}
	}
	backoff := time.Second
	waiting := false
	for {
		if n.space.low() {
			if !waiting {
				n.log.Warn("waiting for free space in the state directory before reopening the raft log",
					"err", n.space.check())
				waiting = true
			}
		} else {
			inst, err := n.open(true)
			if err == nil {
				n.mu.Lock()
				n.inst = inst
				n.mu.Unlock()
				n.reopens.Add(1)
				n.log.Info("raft log reopened: changes are accepted again", "dir", n.cfg.Dir)
				// Drop a stale signal from the failed instance.
				select {
				case <-n.broken:
				default:
				}
				return
			}
			n.log.Error("reopening the raft log", "err", err, "retry_in", backoff)
		}
		select {
		case <-n.stop:
			return
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 10*time.Second)
	}
}

// waitLeader reports whether r leads within d.
func (n *Node) waitLeader(r *raft.Raft, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		if r.State() == raft.Leader {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		select {
		case <-n.stop:
			return true
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// snapshotIfManyJobs takes a snapshot once SnapshotThreshold jobs have
// been created since the last one. Raft counts log entries, and one entry
// can create 10,000 jobs (an array): ten such arrays never reached the
// threshold, and a restart re-applied all 100,000 tasks from the log
// (3.9 s) instead of restoring them from a snapshot (~0.3 s).
func (n *Node) snapshotIfManyJobs() {
	next := uint64(n.adapter.fsm.Store().Snapshot().NextJobID)
	last := n.adapter.snapNextID.Load()
	if next < last { // ids wrapped past MaxJobId
		n.adapter.snapNextID.Store(next)
		return
	}
	if next-last < n.threshold() {
		return
	}
	if err := n.Snapshot(); err != nil && !errors.Is(err, raft.ErrNothingNewToSnapshot) {
		n.log.Warn("snapshot after many new jobs", "err", err)
	}
}
