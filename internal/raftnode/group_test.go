package raftnode

import (
	"bytes"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/drover-hpc/drover/internal/fsm"
	"github.com/drover-hpc/drover/internal/model"
)

// queued waits (bounded) until n commands wait in the rider queue.
func queued(t *testing.T, nd *Node, n int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		nd.riders.mu.Lock()
		got := len(nd.riders.q)
		nd.riders.mu.Unlock()
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d commands in the rider queue after 30 s, want %d", got, n)
		}
		time.Sleep(time.Millisecond)
	}
}

func lastIndex(nd *Node) uint64 {
	nd.mu.RLock()
	defer nd.mu.RUnlock()
	return nd.inst.r.LastIndex()
}

type answer struct {
	res any
	err error
}

// TestDeferredRidesWithTheNextCommit: commands that may wait are
// committed in the next Apply's log entry (one entry, one fsync), each
// caller gets its own command's result (an error included) only then,
// and a restart replays the entry to the same state: nothing lost,
// nothing applied twice.
func TestDeferredRidesWithTheNextCommit(t *testing.T) {
	dir := t.TempDir()
	n, store := open(t, dir)
	if _, err := n.Apply(fsm.TypeSubmit, &fsm.Submit{Spec: spec(), Partition: "p", Now: 1}); err != nil {
		t.Fatal(err)
	}
	before := lastIndex(n)
	answers := make(chan answer, 3)
	go func() { // a rider
		res, err := n.ApplyDeferred(fsm.TypeSubmit, &fsm.Submit{Spec: spec(), Partition: "p", Now: 2}, time.Hour)
		answers <- answer{res, err}
	}()
	queued(t, n, 1)
	go func() { // a rider whose command fails on its own
		res, err := n.ApplyDeferred(fsm.TypeSetAcctDB, &fsm.SetAcctDB{DB: &model.AcctDB{}, Base: 42}, time.Hour)
		answers <- answer{res, err}
	}()
	queued(t, n, 2)
	select {
	case a := <-answers:
		t.Fatalf("a deferred command was answered before any commit: %+v", a)
	default:
	}
	res, err := n.Apply(fsm.TypeSubmit, &fsm.Submit{Spec: spec(), Partition: "p", Now: 3})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.(fsm.SubmitResult).JobID; got != 3 {
		t.Errorf("the committing Submit got job %d, want 3 (after the rider's)", got)
	}
	var ok, failed int
	for range 2 {
		a := <-answers
		switch {
		case a.err == nil && a.res.(fsm.SubmitResult).JobID == 2:
			ok++
		case errors.Is(a.err, fsm.ErrAcctDBChanged):
			failed++
		default:
			t.Errorf("unexpected answer to a deferred command: %+v", a)
		}
	}
	if ok != 1 || failed != 1 {
		t.Errorf("answers: %d submit, %d SetAcctDB refusal; want one each", ok, failed)
	}
	if got := lastIndex(n) - before; got != 1 {
		t.Errorf("three commands took %d log entries, want 1", got)
	}
	if got := store.Snapshot().NumJobs(); got != 3 {
		t.Fatalf("%d jobs, want 3", got)
	}
	var want bytes.Buffer
	if err := fsm.WriteSnapshot(store.Snapshot(), &want); err != nil {
		t.Fatal(err)
	}
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	n2, store2 := open(t, dir)
	defer n2.Close()
	var got bytes.Buffer
	if err := fsm.WriteSnapshot(store2.Snapshot(), &got); err != nil {
		t.Fatal(err)
	}
	if got.String() != want.String() {
		t.Fatalf("replayed state differs from the leader's:\n%s\n%s", got.String(), want.String())
	}
	if next := store2.Snapshot().NextJobID; next != 4 {
		t.Errorf("next job id %d after the replay, want 4", next)
	}
}

// TestDeferredCommitsAloneWhenNothingFollows: a deferred command with no
// companion is committed on its own once its wait passes.
func TestDeferredCommitsAloneWhenNothingFollows(t *testing.T) {
	n, store := open(t, t.TempDir())
	defer n.Close()
	done := make(chan answer, 1)
	go func() {
		res, err := n.ApplyDeferred(fsm.TypeSubmit, &fsm.Submit{Spec: spec(), Partition: "p", Now: 1}, 5*time.Millisecond)
		done <- answer{res, err}
	}()
	select {
	case a := <-done:
		if a.err != nil || a.res.(fsm.SubmitResult).JobID != 1 {
			t.Fatalf("answer %+v, want job 1", a)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a deferred command with nothing after it was not committed in 30 s")
	}
	if store.Snapshot().NumJobs() != 1 {
		t.Fatal("the job is not in the state")
	}
}

// TestDeferredCommittedAtClose: a command still waiting when the node
// closes is committed first, not dropped nor left hanging.
func TestDeferredCommittedAtClose(t *testing.T) {
	dir := t.TempDir()
	n, _ := open(t, dir)
	done := make(chan answer, 1)
	go func() {
		res, err := n.ApplyDeferred(fsm.TypeSubmit, &fsm.Submit{Spec: spec(), Partition: "p", Now: 1}, time.Hour)
		done <- answer{res, err}
	}()
	queued(t, n, 1)
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case a := <-done:
		if a.err != nil {
			t.Fatalf("a command waiting at Close failed: %v", a.err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a deferred command was never answered after Close")
	}
	n2, store := open(t, dir)
	defer n2.Close()
	if store.Snapshot().NumJobs() != 1 {
		t.Fatal("the command committed at Close is not there after a restart")
	}
}

// TestCloseAnswersTheTruth: commands (ridden or not) that race Close are
// either answered ok and there after a restart, or answered an error and
// not there: none is refused after its entry was written (a caller told
// "try again" that did would submit its job twice).
func TestCloseAnswersTheTruth(t *testing.T) {
	for round := range 24 {
		dir := t.TempDir()
		n, _ := open(t, dir)
		var wg sync.WaitGroup
		var ok atomic.Int64
		for i := range 64 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var err error
				body := &fsm.Submit{Spec: spec(), Partition: "p", Now: int64(i)}
				if i%4 == 0 {
					_, err = n.Apply(fsm.TypeSubmit, body)
				} else {
					_, err = n.ApplyDeferred(fsm.TypeSubmit, body, 20*time.Millisecond)
				}
				if err == nil {
					ok.Add(1)
				}
			}()
		}
		// Close lands before, among or after the commits, from round to
		// round (no moment is waited for: any of them must hold).
		time.Sleep(time.Duration(round%8) * time.Millisecond)
		if err := n.Close(); err != nil {
			t.Logf("round %d: Close: %v", round, err)
		}
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Fatalf("round %d: callers still waiting 30 s after Close", round)
		}
		n2, store := open(t, dir)
		got := store.Snapshot().NumJobs()
		n2.Close()
		if int64(got) != ok.Load() {
			t.Errorf("round %d: %d commands answered ok, %d in the log after a restart", round, ok.Load(), got)
		}
	}
}
