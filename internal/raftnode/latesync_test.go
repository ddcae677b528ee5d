package raftnode

import (
	"errors"
	"log/slog"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/raft-wal/types"

	"github.com/drover-hpc/drover/internal/fsm"
	"github.com/drover-hpc/drover/internal/state"
)

// gateFile's Sync blocks until the test lets it through.
type gateFile struct {
	types.WritableFile
	gate  chan error
	syncs atomic.Int32
}

func (f *gateFile) Sync() error {
	err := <-f.gate
	f.syncs.Add(1)
	return err
}

func (f *gateFile) Close() error { return nil }

type recordMeta struct {
	types.MetaStore
	commits chan types.PersistentState
}

func (m *recordMeta) CommitState(st types.PersistentState) error {
	m.commits <- st
	return nil
}

const waitLimit = 10 * time.Second

// A Sync returns before its fsync ran; the WAL's metadata is committed
// only once every fsync asked for before it is done.
func TestLateSyncAnswersFirstAndOrdersMetadata(t *testing.T) {
	s := newLateSync(slog.Default())
	gf := &gateFile{gate: make(chan error)}
	f := &lateFile{WritableFile: gf, s: s}
	meta := &recordMeta{commits: make(chan types.PersistentState, 1)}
	m := s.meta(meta)

	done := make(chan error, 1)
	go func() { done <- f.Sync() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Sync: %v", err)
		}
	case <-time.After(waitLimit):
		t.Fatal("Sync waited for the fsync")
	}

	committed := make(chan error, 1)
	go func() { committed <- m.CommitState(types.PersistentState{NextSegmentID: 7}) }()
	select {
	case <-meta.commits:
		t.Fatal("metadata committed before the pending fsync was done")
	case <-time.After(50 * time.Millisecond):
	}
	gf.gate <- nil // the background fsync
	select {
	case st := <-meta.commits:
		if st.NextSegmentID != 7 {
			t.Fatalf("committed %+v", st)
		}
	case <-time.After(waitLimit):
		t.Fatal("metadata not committed after the fsync")
	}
	if err := <-committed; err != nil {
		t.Fatalf("CommitState: %v", err)
	}
	if n := gf.syncs.Load(); n != 1 {
		t.Fatalf("%d fsyncs, want 1", n)
	}
	close(gf.gate) // nothing else pending; close must not block on it
	if err := s.close(); err != nil {
		t.Fatalf("close: %v", err)
	}
}

// A background fsync that failed is the error of the next Sync and of a
// metadata commit: Raft then steps down and the node reopens its log.
func TestLateSyncReportsFailedFsync(t *testing.T) {
	s := newLateSync(slog.Default())
	gf := &gateFile{gate: make(chan error, 1)}
	f := &lateFile{WritableFile: gf, s: s}
	eio := errors.New("input/output error")
	gf.gate <- eio
	if err := f.Sync(); err != nil {
		t.Fatalf("first Sync: %v", err)
	}
	deadline := time.Now().Add(waitLimit)
	var err error
	for err == nil && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
		err = f.Sync()
	}
	if !errors.Is(err, eio) {
		t.Fatalf("Sync after a failed fsync: %v, want %v", err, eio)
	}
	meta := &recordMeta{commits: make(chan types.PersistentState, 1)}
	if err := s.meta(meta).CommitState(types.PersistentState{}); !errors.Is(err, eio) {
		t.Fatalf("CommitState after a failed fsync: %v", err)
	}
	if len(meta.commits) != 0 {
		t.Fatal("metadata committed after a failed fsync")
	}
	close(gf.gate)
	_ = s.close()
}

// Syncs asked for while one fsync runs share the next one.
func TestLateSyncGroupsFsyncs(t *testing.T) {
	s := newLateSync(slog.Default())
	gf := &gateFile{gate: make(chan error)}
	f := &lateFile{WritableFile: gf, s: s}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	// Wait until the background round holds the file (blocked in Sync).
	deadline := time.Now().Add(waitLimit)
	for {
		s.mu.Lock()
		n := len(s.pending)
		s.mu.Unlock()
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("background fsync did not start")
		}
		time.Sleep(time.Millisecond)
	}
	for range 10 {
		if err := f.Sync(); err != nil {
			t.Fatal(err)
		}
	}
	gf.gate <- nil // the first round
	gf.gate <- nil // one more round for the ten
	if err := s.flush(); err != nil {
		t.Fatal(err)
	}
	if n := gf.syncs.Load(); n != 2 {
		t.Fatalf("%d fsyncs for 11 Syncs, want 2", n)
	}
	close(gf.gate)
	_ = s.close()
}

// The log in both modes, across segment rotations (each seals a segment
// and commits the WAL's metadata): everything acknowledged is there after
// a reopen.
func TestReopenAcrossSegmentsBothSyncModes(t *testing.T) {
	for _, strict := range []bool{false, true} {
		dir := t.TempDir()
		cfg := Config{Dir: dir, ID: "t", MinFree: -1, segmentSize: 32 << 10, LateSync: !strict}
		n, err := Open(cfg, fsm.New(state.New(1), nil))
		if err != nil {
			t.Fatal(err)
		}
		const jobs = 200 // ~100 KiB of entries: several 32 KiB segments
		for i := range jobs {
			if _, err := n.Apply(fsm.TypeSubmit, &fsm.Submit{Spec: spec(), Partition: "p", Now: int64(i)}); err != nil {
				t.Fatalf("strict=%v: submit %d: %v", strict, i, err)
			}
		}
		if err := n.Close(); err != nil {
			t.Fatal(err)
		}
		segs, _ := filepath.Glob(filepath.Join(dir, "wal", "*.wal"))
		if len(segs) < 3 {
			t.Fatalf("strict=%v: %d segments; the test wants rotations", strict, len(segs))
		}
		store := state.New(1)
		n2, err := Open(cfg, fsm.New(store, nil))
		if err != nil {
			t.Fatalf("strict=%v: reopen: %v", strict, err)
		}
		if s := store.Snapshot(); s.NumJobs() != jobs {
			t.Fatalf("strict=%v: %d jobs after reopen, want %d", strict, s.NumJobs(), jobs)
		}
		n2.Close()
	}
}
