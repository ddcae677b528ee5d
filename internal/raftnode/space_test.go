package raftnode

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	walfs "github.com/hashicorp/raft-wal/fs"
	"github.com/hashicorp/raft-wal/types"

	"github.com/drover-hpc/drover/internal/fsm"
	"github.com/drover-hpc/drover/internal/state"
)

// TestFullDiskRefusesChangesKeepsReads: below the reserve, Apply refuses
// with ENOSPC's words before writing anything, reads keep working, and
// changes are accepted again as soon as space is freed.
func TestFullDiskRefusesChangesKeepsReads(t *testing.T) {
	var free atomic.Uint64
	free.Store(1 << 30)
	store := state.New(1)
	n, err := Open(Config{Dir: t.TempDir(), ID: "t", MinFree: 100 << 20,
		statfs: func(string) (uint64, uint64, error) { return free.Load(), 10 << 30, nil }}, fsm.New(store, nil))
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	submit := func() error {
		_, err := n.Apply(fsm.TypeSubmit, &fsm.Submit{Spec: spec(), Partition: "p", Now: 1})
		return err
	}
	if err := submit(); err != nil {
		t.Fatal(err)
	}
	free.Store(50 << 20)
	err = submit()
	if !errors.Is(err, ErrNoSpace) || !strings.Contains(err.Error(), "No space left on device (50 MiB free, 100 MiB kept in reserve)") {
		t.Fatalf("submit on a full disk: %v", err)
	}
	if s := store.Snapshot(); s.NumJobs() != 1 {
		t.Fatalf("reads while full: %d jobs, want 1", s.NumJobs())
	}
	free.Store(200 << 20)
	if err := submit(); err != nil {
		t.Fatalf("submit once space is back: %v", err)
	}
	if s := store.Snapshot(); s.NumJobs() != 2 || s.NextJobID != 3 {
		t.Fatalf("after recovery: %d jobs, next id %d", s.NumJobs(), s.NextJobID)
	}
}

// faultFS is the WAL's file system with a switch that makes creating a
// segment (its preallocation) and, if writes is set, every write fail with
// ENOSPC, as a full disk does.
type faultFS struct {
	*walfs.FS
	full, writes atomic.Bool
}

func (f *faultFS) Create(dir, name string, size uint64) (types.WritableFile, error) {
	if f.full.Load() {
		// The real preallocation leaves the file it could not grow behind.
		if fh, err := os.OpenFile(filepath.Join(dir, name), os.O_CREATE|os.O_EXCL|os.O_RDWR, 0o644); err == nil {
			fh.Close()
		}
		return nil, &os.PathError{Op: "fallocate", Path: name, Err: syscall.ENOSPC}
	}
	w, err := f.FS.Create(dir, name, size)
	if err != nil {
		return nil, err
	}
	return &faultFile{WritableFile: w, fs: f}, nil
}

func (f *faultFS) OpenWriter(dir, name string) (types.WritableFile, error) {
	w, err := f.FS.OpenWriter(dir, name)
	if err != nil {
		return nil, err
	}
	return &faultFile{WritableFile: w, fs: f}, nil
}

type faultFile struct {
	types.WritableFile
	fs *faultFS
}

func (f *faultFile) WriteAt(p []byte, off int64) (int, error) {
	if f.fs.full.Load() && f.fs.writes.Load() {
		return 0, syscall.ENOSPC
	}
	return f.WritableFile.WriteAt(p, off)
}

// TestLogWriteFailureRecovers: with the guard off, the disk fills under the
// log itself (a segment cannot be created, or a batch cannot be written).
// Raft then refuses every commit ("segment is sealed", "node is not the
// leader") until restarted. The node must reopen its log by itself once
// space is back, losing and duplicating nothing that was acknowledged.
func TestLogWriteFailureRecovers(t *testing.T) {
	for _, writes := range []bool{false, true} {
		name := "rotation"
		if writes {
			name = "write"
		}
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			vfs := &faultFS{FS: walfs.New()}
			vfs.writes.Store(writes)
			store := state.New(1)
			n, err := Open(Config{Dir: dir, ID: "t", MinFree: -1, segmentSize: 32 << 10, vfs: vfs}, fsm.New(store, nil))
			if err != nil {
				t.Fatal(err)
			}
			defer func() { n.Close() }()
			acked := 0
			submit := func() error {
				_, err := n.Apply(fsm.TypeSubmit, &fsm.Submit{Spec: spec(), Partition: "p", Now: 1})
				if err == nil {
					acked++
				}
				return err
			}
			for range 10 {
				if err := submit(); err != nil {
					t.Fatal(err)
				}
			}
			vfs.full.Store(true)
			failed := false
			for range 2000 {
				if err := submit(); err != nil {
					failed = true
					break
				}
			}
			if !failed {
				t.Fatal("no commit failed on a full disk")
			}
			for range 3 {
				if err := submit(); err == nil {
					t.Fatal("a commit succeeded while the disk was still full")
				}
			}
			if s := store.Snapshot(); s.NumJobs() != acked {
				t.Fatalf("reads while full: %d jobs, %d acknowledged", s.NumJobs(), acked)
			}
			vfs.full.Store(false)
			deadline := time.Now().Add(20 * time.Second)
			for {
				last := submit()
				if last == nil {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("commits still refused 20s after space came back: %v", last)
				}
				time.Sleep(20 * time.Millisecond)
			}
			for range 300 { // several more segment rotations
				if err := submit(); err != nil {
					t.Fatalf("after recovery: %v", err)
				}
			}
			if s := store.Snapshot(); s.NumJobs() != acked || int(s.NextJobID) != acked+1 {
				t.Fatalf("after recovery: %d jobs, next id %d, %d acknowledged", s.NumJobs(), s.NextJobID, acked)
			}
			if n.reopens.Load() == 0 {
				t.Error("recovered without reopening the log")
			}
			if err := n.Close(); err != nil {
				t.Fatal(err)
			}
			n2, store2 := open(t, dir)
			defer n2.Close()
			if s := store2.Snapshot(); s.NumJobs() != acked || int(s.NextJobID) != acked+1 {
				t.Fatalf("after restart: %d jobs, next id %d, %d acknowledged", s.NumJobs(), s.NextJobID, acked)
			}
		})
	}
}
