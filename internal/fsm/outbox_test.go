package fsm

import (
	"bytes"
	"testing"

	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/state"
)

func outbox(s *state.Snapshot) []state.OutboxEntry {
	var out []state.OutboxEntry
	s.Outbox(0, func(e state.OutboxEntry) bool { out = append(out, e); return true })
	return out
}

// Every job change queues the job once, at its newest position; an ack
// drops what the database took and keeps what changed after; a job still
// queued is not purged; the outbox survives a snapshot.
func TestAccountingOutbox(t *testing.T) {
	h := newHarness(t)
	h.apply(TypeSubmit, &Submit{Spec: spec(), Partition: "p", Now: 1})
	h.apply(TypeSubmit, &Submit{Spec: spec(), Partition: "p", Now: 1})
	if got := outbox(h.snap()); len(got) != 2 || got[0].Job != 1 || got[1].Job != 2 {
		t.Fatalf("after submit: %+v", got)
	}
	h.apply(TypeSchedule, &Schedule{Now: 5, Starts: []StartEntry{{Job: 1, Alloc: []model.NodeAlloc{{Node: "n1", CPUs: 1}}}}})
	got := outbox(h.snap())
	if len(got) != 2 || got[0].Job != 2 || got[1].Job != 1 {
		t.Fatalf("after start, job 1 must move behind job 2: %+v", got)
	}
	seq := h.snap().OutboxSeq()
	h.apply(TypeJobEnded, &JobEnded{Job: 1, Now: 9})
	h.apply(TypeAcctAck, &AcctAck{Seq: seq})
	if got := outbox(h.snap()); len(got) != 1 || got[0].Job != 1 || !h.snap().InOutbox(1) || h.snap().InOutbox(2) {
		t.Fatalf("an ack must keep the change made after it: %+v", got)
	}
	h.apply(TypePurge, &Purge{Jobs: []model.JobID{1}})
	if h.snap().Job(1) == nil {
		t.Fatal("a job whose record is not written yet was purged")
	}

	var buf bytes.Buffer
	if err := WriteSnapshot(h.snap(), &buf); err != nil {
		t.Fatal(err)
	}
	g := New(state.New(1), nil)
	if err := g.Restore(&buf, 99); err != nil {
		t.Fatal(err)
	}
	if got, want := outbox(g.Store().Snapshot()), outbox(h.snap()); len(got) != 1 || got[0] != want[0] ||
		g.Store().Snapshot().OutboxSeq() != h.snap().OutboxSeq() {
		t.Fatalf("restored outbox %+v seq %d, want %+v seq %d", got, g.Store().Snapshot().OutboxSeq(), want, h.snap().OutboxSeq())
	}

	h.apply(TypeAcctAck, &AcctAck{Seq: h.snap().OutboxSeq()})
	h.apply(TypePurge, &Purge{Jobs: []model.JobID{1}})
	if h.snap().Job(1) != nil || h.snap().OutboxLen() != 0 {
		t.Fatal("a written, finished job must be purged")
	}
}
