package state

import (
	"github.com/benbjohnson/immutable"

	"github.com/drover-hpc/drover/internal/model"
)

// The accounting outbox is the set of jobs whose record changed since the
// accounting database last confirmed it. Every PutJob marks its job with
// the next sequence number, so the outbox is both ordered (by seq) and
// deduplicated (one entry per job, the newest). It lives in replicated
// state: a controller that fails over, or a database that is down for
// hours, loses no record, and a job in the outbox is never purged.

// outbox is part of Snapshot; its maps are replaced, never changed.
type outbox struct {
	seq   uint64
	byJob *immutable.SortedMap[model.JobID, uint64]
	bySeq *immutable.SortedMap[uint64, model.JobID]
}

func newOutbox() outbox {
	return outbox{
		byJob: immutable.NewSortedMap[model.JobID, uint64](jobIDs{}),
		bySeq: immutable.NewSortedMap[uint64, model.JobID](seqs{}),
	}
}

func (o *outbox) mark(id model.JobID) {
	if old, ok := o.byJob.Get(id); ok {
		o.bySeq = o.bySeq.Delete(old)
	}
	o.seq++
	o.byJob = o.byJob.Set(id, o.seq)
	o.bySeq = o.bySeq.Set(o.seq, id)
}

// OutboxEntry is one job awaiting its accounting write.
type OutboxEntry struct {
	Seq uint64      `json:"seq"`
	Job model.JobID `json:"job"`
}

// Outbox calls fn for up to limit entries in sequence order (0: all).
func (s *Snapshot) Outbox(limit int, fn func(OutboxEntry) bool) {
	it := s.acct.bySeq.Iterator()
	for n := 0; !it.Done() && (limit <= 0 || n < limit); n++ {
		seq, id, _ := it.Next()
		if !fn(OutboxEntry{Seq: seq, Job: id}) {
			return
		}
	}
}

// OutboxLen is the number of jobs awaiting their accounting write.
func (s *Snapshot) OutboxLen() int { return s.acct.bySeq.Len() }

// OutboxSeq is the sequence number of the newest change.
func (s *Snapshot) OutboxSeq() uint64 { return s.acct.seq }

// InOutbox reports whether a job's latest change is not yet written.
func (s *Snapshot) InOutbox(id model.JobID) bool {
	_, ok := s.acct.byJob.Get(id)
	return ok
}

// AckOutbox drops the entries the database confirmed: those with a
// sequence number up to seq. An entry re-marked since (higher seq) stays.
func (t *Txn) AckOutbox(seq uint64) {
	o := &t.snap.acct
	it := o.bySeq.Iterator()
	for !it.Done() {
		s, id, _ := it.Next()
		if s > seq {
			break
		}
		o.bySeq = o.bySeq.Delete(s)
		o.byJob = o.byJob.Delete(id)
	}
}

// RestoreOutbox replaces the outbox with entries read from a snapshot.
func (t *Txn) RestoreOutbox(seq uint64, entries []OutboxEntry) {
	byJob := immutable.NewSortedMapBuilder[model.JobID, uint64](jobIDs{})
	bySeq := immutable.NewSortedMapBuilder[uint64, model.JobID](seqs{})
	for _, e := range entries {
		byJob.Set(e.Job, e.Seq)
		bySeq.Set(e.Seq, e.Job)
		seq = max(seq, e.Seq)
	}
	o := outbox{byJob: byJob.Map(), bySeq: bySeq.Map(), seq: seq}
	t.snap.acct = o
}
