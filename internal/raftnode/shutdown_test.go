package raftnode

import (
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	walfs "github.com/hashicorp/raft-wal/fs"
	"github.com/hashicorp/raft-wal/types"

	"github.com/drover-hpc/drover/internal/fsm"
	"github.com/drover-hpc/drover/internal/state"
)

// holdFS is the WAL's file system whose fsyncs wait, once hold is set,
// until release is closed: Raft's main loop stays inside one log write.
type holdFS struct {
	*walfs.FS
	hold    atomic.Bool
	held    atomic.Int32
	release chan struct{}
}

func (f *holdFS) Create(dir, name string, size uint64) (types.WritableFile, error) {
	w, err := f.FS.Create(dir, name, size)
	return &holdFile{WritableFile: w, fs: f}, err
}

func (f *holdFS) OpenWriter(dir, name string) (types.WritableFile, error) {
	w, err := f.FS.OpenWriter(dir, name)
	return &holdFile{WritableFile: w, fs: f}, err
}

type holdFile struct {
	types.WritableFile
	fs *holdFS
}

func (f *holdFile) Sync() error {
	if f.fs.hold.Load() {
		f.fs.held.Add(1)
		<-f.fs.release
	}
	return f.WritableFile.Sync()
}

// waitingOnRaft counts goroutines inside Apply that wait for Raft: to take
// their entry, or to answer it.
func waitingOnRaft() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	count := 0
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "raftnode.(*Node).Apply") &&
			(strings.Contains(g, "raft.(*deferError).Error") || strings.Contains(g, "raft.(*Raft).ApplyLog")) {
			count++
		}
	}
	return count
}

// TestApplyAnsweredWhenLogCloses: submissions that arrive while Raft is
// inside a log write, and whose log is then closed (Close, or the watcher
// reopening a failed log), are each answered. Raft's buffered apply queue
// (BatchApplyCh) took them and dropped them unanswered at shutdown: the
// callers waited forever (a raftnode test hung 10 minutes under load, in
// TestLogWriteFailureRecovers, while the watcher reopened the log).
func TestApplyAnsweredWhenLogCloses(t *testing.T) {
	vfs := &holdFS{FS: walfs.New(), release: make(chan struct{})}
	// Close first waits for the commands on their way, which the held
	// write keeps from ever being answered: keep that wait short.
	n, err := Open(Config{Dir: t.TempDir(), ID: "t", MinFree: -1, vfs: vfs, closeWait: 200 * time.Millisecond}, fsm.New(state.New(1), nil))
	if err != nil {
		t.Fatal(err)
	}
	released := false
	defer func() {
		if !released {
			close(vfs.release)
		}
		n.Close()
	}()
	submit := func() error {
		_, err := n.Apply(fsm.TypeSubmit, &fsm.Submit{Spec: spec(), Partition: "p", Now: 1})
		return err
	}
	if err := submit(); err != nil {
		t.Fatal(err)
	}
	inst := n.inst
	vfs.hold.Store(true)
	const later = 20
	answered := make(chan error, later+1)
	go func() { answered <- submit() }()
	await := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(waitLimit)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	await("the first submission's log write to start", func() bool { return vfs.held.Load() > 0 })
	for range later {
		go func() { answered <- submit() }()
	}
	await("every submission to wait on Raft", func() bool { return waitingOnRaft() == later+1 })
	closed := make(chan error, 1)
	go func() { closed <- n.Close() }()
	await("Raft to shut down", func() bool { return inst.r.State() == raft.Shutdown })
	close(vfs.release)
	released = true
	deadline := time.After(waitLimit)
	for i := range later + 1 {
		select {
		case <-answered:
		case <-deadline:
			t.Fatalf("%d of %d submissions never answered after their log closed", later+1-i, later+1)
		}
	}
	select {
	case <-closed:
	case <-deadline:
		t.Fatal("Close did not return")
	}
}
