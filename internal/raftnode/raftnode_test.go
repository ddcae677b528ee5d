package raftnode

import (
	"testing"
	"time"

	"github.com/drover-hpc/drover/internal/fsm"
	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/state"
)

func open(t testing.TB, dir string) (*Node, *state.Store) {
	store := state.New(1)
	n, err := Open(Config{Dir: dir, ID: "t"}, fsm.New(store, nil))
	if err != nil {
		t.Fatal(err)
	}
	return n, store
}

func spec() *model.JobSpec {
	return &model.JobSpec{Name: "j", Script: "#!/bin/sh\ntrue\n", WorkDir: "/tmp", TimeLimit: model.Unset}
}

// TestReopenKeepsCommittedState: what Apply acknowledged is there after a
// restart, replayed from the log.
func TestReopenKeepsCommittedState(t *testing.T) {
	dir := t.TempDir()
	n, _ := open(t, dir)
	for i := 0; i < 5; i++ {
		if _, err := n.Apply(fsm.TypeSubmit, &fsm.Submit{Spec: spec(), Partition: "p", Now: int64(i)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	n2, store := open(t, dir)
	defer n2.Close()
	if s := store.Snapshot(); s.NumJobs() != 5 || s.NextJobID != 6 {
		t.Fatalf("after reopen: %d jobs, next id %d", s.NumJobs(), s.NextJobID)
	}
}

func BenchmarkApplySubmit(b *testing.B) {
	n, _ := open(b, b.TempDir())
	defer n.Close()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := n.Apply(fsm.TypeSubmit, &fsm.Submit{Spec: spec(), Partition: "p", Now: 1}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestRestartFromSnapshot: state in a snapshot plus the log after it is
// all there after a restart.
func TestRestartFromSnapshot(t *testing.T) {
	dir := t.TempDir()
	n, _ := open(t, dir)
	arr := spec()
	arr.Array = &model.ArraySpec{Raw: "1-3", TaskIDs: []int{1, 2, 3}}
	if _, err := n.Apply(fsm.TypeSubmit, &fsm.Submit{Spec: arr, Partition: "p", Now: 1}); err != nil {
		t.Fatal(err)
	}
	if err := n.Snapshot(); err != nil {
		t.Fatal(err)
	}
	if _, err := n.Apply(fsm.TypeSubmit, &fsm.Submit{Spec: spec(), Partition: "p", Now: 2}); err != nil {
		t.Fatal(err)
	}
	n.Close()
	n2, store := open(t, dir)
	defer n2.Close()
	s := store.Snapshot()
	if s.NumJobs() != 4 || s.NextJobID != 5 || s.Job(3).Spec != s.Job(1).Spec || s.Job(3).Spec.Array.Raw != "1-3" {
		t.Fatalf("after restore: %d jobs, next %d", s.NumJobs(), s.NextJobID)
	}
}

// TestSnapshotAfterManyJobs: one command creating more jobs than the
// snapshot threshold (an array) brings a snapshot, so that a restart
// restores them rather than re-applying the log.
func TestSnapshotAfterManyJobs(t *testing.T) {
	dir := t.TempDir()
	store := state.New(1)
	n, err := Open(Config{Dir: dir, ID: "t", SnapshotThreshold: 100}, fsm.New(store, nil))
	if err != nil {
		t.Fatal(err)
	}
	arr := spec()
	arr.Array = &model.ArraySpec{Raw: "0-299"}
	for i := range 300 {
		arr.Array.TaskIDs = append(arr.Array.TaskIDs, i)
	}
	if _, err := n.Apply(fsm.TypeSubmit, &fsm.Submit{Spec: arr, Partition: "p", Now: 1}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for n.adapter.snapNextID.Load() != 301 {
		if time.Now().After(deadline) {
			t.Fatalf("no snapshot 30 s after 300 new jobs (last at next id %d)", n.adapter.snapNextID.Load())
		}
		time.Sleep(10 * time.Millisecond)
	}
	n.Close()
	store = state.New(1)
	n2, err := Open(Config{Dir: dir, ID: "t", SnapshotThreshold: 100}, fsm.New(store, nil))
	if err != nil {
		t.Fatal(err)
	}
	defer n2.Close()
	if got := store.Snapshot().NumJobs(); got != 300 {
		t.Fatalf("after restart: %d jobs", got)
	}
}

// BenchmarkApplySubmitParallel: concurrent submissions share commits
// (Raft's BatchApplyCh takes every queued entry into one log write and
// one fsync), so with 8 submitters an op costs a fraction of a fsync.
// Compare ns/op and fsyncs/op with BenchmarkApplySubmit.
func BenchmarkApplySubmitParallel(b *testing.B) {
	n, _ := open(b, b.TempDir())
	defer n.Close()
	b.SetParallelism(4) // 4 × GOMAXPROCS submitters
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := n.Apply(fsm.TypeSubmit, &fsm.Submit{Spec: spec(), Partition: "p", Now: 1}); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
