package controller

import (
	"testing"
	"time"

	"github.com/drover-hpc/drover/internal/fsm"
	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/state"
)

// TestPurgeTakesOldFinishedJobsOnly: the purge (MinJobAge) removes the
// finished jobs that ended before its bound and whose accounting write is
// done, and nothing else: not a job that ended since, not one still in the
// outbox, not a pending one. (It walks the finished jobs' index, not the
// whole queue.)
func TestPurgeTakesOldFinishedJobsOnly(t *testing.T) {
	st := state.New(1)
	d := &direct{f: fsm.New(st, nil)}
	c, run := oneJobFixture(t, st, d, 1)
	now := time.Now().Unix()
	apply := func(typ fsm.Type, body any) {
		t.Helper()
		if _, err := d.Apply(typ, body); err != nil {
			t.Fatal(err)
		}
	}
	spec := func() *model.JobSpec {
		return &model.JobSpec{Name: "j", Script: "#!/bin/sh\n", TimeLimit: model.Unset, MinNodes: model.Unset,
			NTasks: model.Unset, CPUsPerTask: model.Unset, MemPerNode: model.Unset}
	}
	apply(fsm.TypeSubmit, &fsm.Submit{Spec: spec(), Partition: "p", User: "u", Now: now}) // 2
	apply(fsm.TypeSchedule, &fsm.Schedule{Now: now, Starts: []fsm.StartEntry{{Job: 2, Alloc: []model.NodeAlloc{{Node: "n1", CPUs: 1}}}}})
	held := spec()
	held.Hold = true
	apply(fsm.TypeSubmit, &fsm.Submit{Spec: held, Partition: "p", User: "u", Now: now - 1000}) // 3
	apply(fsm.TypeJobEnded, &fsm.JobEnded{Job: 1, Run: run, Now: now - 1000})
	apply(fsm.TypeJobEnded, &fsm.JobEnded{Job: 2, Run: st.Snapshot().Job(2).Run(), Now: now})
	apply(fsm.TypeAcctAck, &fsm.AcctAck{Seq: st.Snapshot().OutboxSeq()})
	if got := st.Snapshot().NumFinished(); got != 2 {
		t.Fatalf("%d finished jobs, want 2", got)
	}

	c.purge(now - 300)
	snap := st.Snapshot()
	if snap.Job(1) != nil || snap.Job(2) == nil || snap.Job(3) == nil {
		t.Fatalf("after the purge: jobs 1 %v, 2 %v, 3 %v; want only job 1 gone", snap.Job(1) != nil, snap.Job(2) != nil, snap.Job(3) != nil)
	}
	if got := snap.NumFinished(); got != 1 {
		t.Fatalf("%d finished jobs after the purge, want 1", got)
	}

	// Job 2 ends up old enough, but its accounting record changes again
	// and is not written yet: it stays until it is.
	j := snap.Job(2).Clone()
	j.Comment = "changed after its end"
	txn := st.Begin()
	txn.PutJob(j)
	txn.Commit(snap.Index + 1)
	c.purge(now + 1)
	if st.Snapshot().Job(2) == nil {
		t.Fatal("job 2 purged while its accounting record was in the outbox")
	}
	apply(fsm.TypeAcctAck, &fsm.AcctAck{Seq: st.Snapshot().OutboxSeq()})
	c.purge(now + 1)
	if snap := st.Snapshot(); snap.Job(2) != nil || snap.Job(3) == nil || snap.NumFinished() != 0 {
		t.Fatalf("after the last purge: job 2 %v, job 3 %v, %d finished", snap.Job(2) != nil, snap.Job(3) != nil, snap.NumFinished())
	}
}
