package raftnode

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	raftwal "github.com/hashicorp/raft-wal"
	walfs "github.com/hashicorp/raft-wal/fs"
	"github.com/hashicorp/raft-wal/metadb"
	"github.com/hashicorp/raft-wal/segment"
	"github.com/hashicorp/raft-wal/types"

	"github.com/drover-hpc/drover/internal/fsm"
	"github.com/drover-hpc/drover/internal/state"
)

// Node is a running Raft member applying commands to an FSM. When a write
// to its log fails (a full disk), it reopens the log by itself once space
// allows; meanwhile Apply refuses with a clear error and reads, which go to
// the state store, keep working.
type Node struct {
	cfg     Config
	log     *slog.Logger
	adapter *adapter
	space   *spaceGuard

	mu   sync.RWMutex
	inst *instance // nil while reopening
	// closing: Close began; no command reaches Raft any more, and Close
	// waits for those on their way (applying) before it stops Raft, which
	// would fail them though their entries may be written: a caller told
	// to try again would then do a change twice.
	closing  bool
	applying sync.WaitGroup

	broken   chan struct{} // a write failed or leadership was lost
	stop     chan struct{}
	done     chan struct{}
	stopOnce sync.Once
	reopens  atomic.Int64
	riders   riders // commands waiting to ride with the next commit (group.go)
}

// instance is one opening of the log and the Raft member over it.
type instance struct {
	r    *raft.Raft
	wal  *raftwal.WAL
	meta *metadb.BoltMetaDB
	late *lateSync // nil: fsync before the reply
	obs  *raft.Observer
}

// Config says where Raft keeps its data and who this member is.
type Config struct {
	Dir string // <StateSaveLocation>/raft
	ID  string
	Log *slog.Logger
	// SnapshotThreshold is how many log entries trigger a snapshot.
	SnapshotThreshold uint64
	// MinFree is the free space (bytes) the state directory's filesystem
	// must keep for changes to be accepted: 0 picks DefaultMinFree's rule,
	// a negative value turns the guard off.
	MinFree int64
	// LateSync commits once the log is written and fsyncs right after
	// (safe against a crash of the controller, not of the machine; see
	// latesync.go). The zero value waits for the fsync, as Raft expects.
	LateSync bool

	// Test hooks: segment size, the WAL's file system, free-space probe,
	// Close's wait for commands on their way (0: closeWait).
	segmentSize int
	vfs         types.VFS
	statfs      func(dir string) (free, size uint64, err error)
	closeWait   time.Duration
}

// Open starts (or resumes) a single-voter Raft member over the FSM and
// waits until it leads.
func Open(cfg Config, f *fsm.FSM) (*Node, error) {
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return nil, err
	}
	log := cfg.Log
	if log == nil {
		log = slog.Default()
	}
	n := &Node{
		cfg: cfg, log: log, adapter: &adapter{fsm: f},
		space:  newSpaceGuard(cfg.Dir, cfg.MinFree, cfg.statfs, log),
		broken: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}),
	}
	inst, err := n.open(false)
	if err != nil {
		return nil, err
	}
	n.inst = inst
	go n.watch()
	return n, nil
}

// open opens the log and starts Raft over it. resume is set when the FSM
// already holds everything the log acknowledged (a reopen in this
// process): the snapshot is not restored and replayed entries are skipped.
func (n *Node) open(resume bool) (*instance, error) {
	cfg := n.cfg
	hl := hclog.New(&hclog.LoggerOptions{Name: "raft", Level: hclog.Warn, Output: os.Stderr})
	walDir := filepath.Join(cfg.Dir, "wal")
	if err := os.MkdirAll(walDir, 0o700); err != nil {
		return nil, err
	}
	// Keep our own handle on the meta store: WAL.Close leaves it (and its
	// file lock) open, which would block reopening in the same process.
	meta := &metadb.BoltMetaDB{}
	size := raftwal.DefaultSegmentSize
	if cfg.segmentSize > 0 {
		size = cfg.segmentSize
	}
	vfs := newZeroVFS(walfs.New(), n.log)
	if cfg.vfs != nil {
		vfs = cfg.vfs
	}
	var metaStore types.MetaStore = meta
	var late *lateSync
	if cfg.LateSync {
		late = newLateSync(n.log)
		vfs, metaStore = late.vfs(vfs), late.meta(meta)
	}
	wal, err := raftwal.Open(walDir, raftwal.WithLogger(hl), raftwal.WithMetaStore(metaStore),
		raftwal.WithSegmentSize(size), raftwal.WithSegmentFiler(segment.NewFiler(walDir, vfs)))
	if err != nil {
		if late != nil {
			late.close()
		}
		meta.Close()
		return nil, fmt.Errorf("open raft log: %w", err)
	}
	inst := &instance{wal: wal, meta: meta, late: late}
	snaps, err := raft.NewFileSnapshotStoreWithLogger(cfg.Dir, 2, hl)
	if err != nil {
		inst.close()
		return nil, fmt.Errorf("open snapshot store: %w", err)
	}
	opened := time.Now()
	rc := raft.DefaultConfig()
	rc.LocalID = raft.ServerID(cfg.ID)
	rc.Logger = hl
	rc.SnapshotThreshold = n.threshold()
	// Raft looks every interval (randomised up to twice it) whether
	// SnapshotThreshold entries have gathered: a restart replays up to the
	// threshold plus what a burst commits in two intervals. At 30 s, a
	// fill of 800 submissions a second left ~50,000 entries to replay
	// (seconds of JSON decoding at a restart); a look is a comparison,
	// and a snapshot of 100,000 jobs is ~0.15 s (version 4).
	rc.SnapshotInterval = 5 * time.Second
	rc.TrailingLogs = 4096
	// One voter: no peers to wait for, so elect immediately.
	rc.HeartbeatTimeout = 50 * time.Millisecond
	rc.ElectionTimeout = 50 * time.Millisecond
	rc.LeaderLeaseTimeout = 50 * time.Millisecond
	rc.CommitTimeout = 5 * time.Millisecond
	// No BatchApplyCh: its buffered queue hands Apply a future before
	// Raft's loop took the entry, and a shutdown (Close, or the watcher
	// reopening a failed log) drops what is still queued unanswered, so
	// the caller waited forever. Unbuffered, an entry is either taken (and
	// answered, committed or not) or refused at shutdown. Concurrent
	// submissions still share a log write: the leader's group commit
	// takes every sender waiting on the queue.
	// (TestApplyAnsweredWhenLogCloses)
	rc.MaxAppendEntries = 256
	rc.NoSnapshotRestoreOnStart = resume

	addr, trans := raft.NewInmemTransport(raft.ServerAddress(cfg.ID))
	has, err := raft.HasExistingState(wal, wal, snaps)
	if err != nil {
		inst.close()
		return nil, err
	}
	if !has {
		boot := raft.Configuration{Servers: []raft.Server{{ID: rc.LocalID, Address: addr}}}
		if err := raft.BootstrapCluster(rc, wal, wal, snaps, trans, boot); err != nil {
			inst.close()
			return nil, fmt.Errorf("bootstrap raft: %w", err)
		}
	}
	r, err := raft.NewRaft(rc, n.adapter, wal, wal, snaps, trans)
	if err != nil {
		inst.close()
		return nil, err
	}
	inst.r = r
	// A single voter stops leading only when its own log refused a write:
	// tell the watcher at once.
	obsCh := make(chan raft.Observation, 8)
	inst.obs = raft.NewObserver(obsCh, false, func(o *raft.Observation) bool {
		_, ok := o.Data.(raft.RaftState)
		return ok
	})
	deadline := time.Now().Add(30 * time.Second)
	for r.State() != raft.Leader {
		if time.Now().After(deadline) {
			inst.close()
			return nil, errors.New("raft: no leadership after 30s")
		}
		time.Sleep(5 * time.Millisecond)
	}
	// Wait until the replayed log is applied, so reads see every
	// acknowledged job before the controller serves anyone.
	if err := r.Barrier(30 * time.Second).Error(); err != nil {
		inst.close()
		return nil, fmt.Errorf("raft barrier: %w", err)
	}
	// What a restart cost (bench/scale100k.sh reads this line).
	n.log.Info("raft state loaded", "restore_ms", n.adapter.restoreMs.Load(), "replayed", n.adapter.replayed.Load(),
		"ms", time.Since(opened).Milliseconds(), "jobs", n.adapter.fsm.Store().Snapshot().NumJobs())
	r.RegisterObserver(inst.obs)
	go n.observe(obsCh, r)
	return inst, nil
}

// threshold is how many log entries, or new jobs, trigger a snapshot.
func (n *Node) threshold() uint64 {
	if n.cfg.SnapshotThreshold > 0 {
		return n.cfg.SnapshotThreshold
	}
	return 8192
}

// observe reports the loss of leadership of one instance to the watcher.
func (n *Node) observe(ch <-chan raft.Observation, r *raft.Raft) {
	for {
		select {
		case o := <-ch:
			if s, ok := o.Data.(raft.RaftState); ok && s != raft.Leader && s != raft.Shutdown {
				n.markBroken()
			}
		case <-n.stop:
			return
		}
		if r.State() == raft.Shutdown {
			return
		}
	}
}

func (n *Node) markBroken() {
	select {
	case n.broken <- struct{}{}:
	default:
	}
}

// Apply commits a command and returns the FSM's result. While the state
// directory is short of space it refuses with an error wrapping
// ErrNoSpace, before anything is written.
func (n *Node) Apply(t fsm.Type, body any) (any, error) {
	if err := n.space.check(); err != nil {
		return nil, err
	}
	data, err := fsm.Encode(t, body)
	if err != nil {
		return nil, err
	}
	if q := n.riders.take(); len(q) > 0 {
		return n.applyWith(q, &rider{t: t, body: body, data: data})
	}
	return n.applyData(t, body, data)
}

// applyData commits one encoded command (a Group included).
func (n *Node) applyData(t fsm.Type, body any, data []byte) (any, error) {
	n.mu.RLock()
	inst, closing := n.inst, n.closing
	if inst != nil && !closing {
		n.applying.Add(1)
	}
	n.mu.RUnlock()
	switch {
	case closing:
		return nil, ErrClosing
	case inst == nil:
		return nil, ErrRecovering
	}
	defer n.applying.Done()
	if fsm.EquivalentAfterDecode(t, data) {
		n.adapter.hold(data, t, body)
		defer n.adapter.release(data)
	}
	fut := inst.r.Apply(data, 30*time.Second)
	if err := fut.Error(); err != nil {
		if !errors.Is(err, raft.ErrEnqueueTimeout) {
			n.markBroken()
		}
		if err := n.space.check(); err != nil {
			return nil, err
		}
		if errors.Is(err, syscall.ENOSPC) {
			return nil, n.space.full()
		}
		if errors.Is(err, raft.ErrEnqueueTimeout) {
			return nil, fmt.Errorf("commit: %w", err)
		}
		// The log refused a write (raft then steps down): the watcher
		// reopens it.
		return nil, fmt.Errorf("Unable to save state in %s (%w): the controller reopens its log by itself, try again",
			n.space.stateDir(), err)
	}
	if e, ok := fut.Response().(error); ok {
		return nil, e
	}
	return fut.Response(), nil
}

// IsLeader reports whether this member leads.
func (n *Node) IsLeader() bool {
	n.mu.RLock()
	defer n.mu.RUnlock()
	return n.inst != nil && n.inst.r.State() == raft.Leader
}

// Snapshot asks Raft for a snapshot now.
func (n *Node) Snapshot() error {
	n.mu.RLock()
	inst := n.inst
	n.mu.RUnlock()
	if inst == nil {
		return ErrRecovering
	}
	return inst.r.Snapshot().Error()
}

// closeWait bounds how long Close waits for the commands already on their
// way to Raft (each is bounded by Apply's own 30 s enqueue time-out).
const closeWait = 10 * time.Second

// Close commits the commands waiting for a companion (group.go), refuses
// new ones, waits (closeWait at most) for those already on their way to
// be answered, stops Raft and closes its log.
func (n *Node) Close() error {
	n.flushRiders()
	n.mu.Lock()
	n.closing = true
	n.mu.Unlock()
	wait := closeWait
	if n.cfg.closeWait > 0 {
		wait = n.cfg.closeWait
	}
	applied := make(chan struct{})
	go func() { n.applying.Wait(); close(applied) }()
	select {
	case <-applied:
	case <-time.After(wait):
		n.log.Warn("closing with commands still being committed: their callers may be told they failed", "waited", wait)
	}
	n.stopOnce.Do(func() { close(n.stop) })
	<-n.done
	n.mu.Lock()
	inst := n.inst
	n.inst = nil
	n.mu.Unlock()
	if inst == nil {
		return nil
	}
	return inst.close()
}

func (i *instance) close() error {
	var err error
	if i.r != nil {
		if i.obs != nil {
			i.r.DeregisterObserver(i.obs)
		}
		err = i.r.Shutdown().Error()
	}
	if cerr := i.wal.Close(); err == nil {
		err = cerr
	}
	if i.late != nil {
		if cerr := i.late.close(); err == nil {
			err = cerr
		}
	}
	if cerr := i.meta.Close(); err == nil {
		err = cerr
	}
	return err
}

// adapter feeds committed entries to the FSM. It remembers the last index
// applied so that a log reopened in the same process replays nothing twice.
type adapter struct {
	fsm     *fsm.FSM
	applied atomic.Uint64
	// For the log line after opening: the last restore's duration and
	// the commands applied since.
	restoreMs, replayed atomic.Int64
	// snapNextID is the next job id when the last snapshot was taken or
	// restored (see snapshotIfManyJobs).
	snapNextID atomic.Uint64

	// own holds the bodies of commands this member is committing, keyed
	// by their encoded bytes' first byte: on the leader, Raft hands the
	// FSM the very slice given to Apply, so the body need not be decoded
	// again (8% of the controller's CPU per submission). Entries read
	// back from the log (a follower, a restart) are other slices and are
	// decoded.
	mu     sync.Mutex
	own    map[*byte]owned
	direct atomic.Uint64 // entries applied from a held body (tests)
}

type owned struct {
	t    fsm.Type
	body any
}

func (a *adapter) hold(data []byte, t fsm.Type, body any) {
	a.mu.Lock()
	if a.own == nil {
		a.own = make(map[*byte]owned)
	}
	a.own[&data[0]] = owned{t, body}
	a.mu.Unlock()
}

func (a *adapter) release(data []byte) {
	a.mu.Lock()
	delete(a.own, &data[0])
	a.mu.Unlock()
}

// take returns the held body of data (once) when data is a slice this
// member gave to Apply.
func (a *adapter) take(data []byte) (owned, bool) {
	if len(data) == 0 {
		return owned{}, false
	}
	a.mu.Lock()
	o, ok := a.own[&data[0]]
	if ok {
		delete(a.own, &data[0])
	}
	a.mu.Unlock()
	return o, ok
}

func (a *adapter) Apply(l *raft.Log) any {
	if l.Index <= a.applied.Load() {
		return nil
	}
	a.applied.Store(l.Index)
	if l.Type != raft.LogCommand {
		return nil
	}
	a.replayed.Add(1)
	if o, ok := a.take(l.Data); ok {
		a.direct.Add(1)
		return a.fsm.ApplyDecoded(l.Index, o.t, o.body)
	}
	return a.fsm.Apply(l.Index, l.Data)
}

func (a *adapter) Snapshot() (raft.FSMSnapshot, error) {
	snap := a.fsm.Store().Snapshot()
	a.snapNextID.Store(uint64(snap.NextJobID))
	return &snapshot{snap: snap}, nil
}

func (a *adapter) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	// Raft goes on from the snapshot's index, which the FSM does not
	// know: forget ours, or entries after the snapshot would be skipped.
	a.applied.Store(0)
	t0 := time.Now()
	err := a.fsm.Restore(rc, 0)
	a.restoreMs.Store(time.Since(t0).Milliseconds())
	a.replayed.Store(0)
	a.snapNextID.Store(uint64(a.fsm.Store().Snapshot().NextJobID))
	return err
}

type snapshot struct{ snap *state.Snapshot }

func (s *snapshot) Persist(sink raft.SnapshotSink) error {
	if err := fsm.WriteSnapshot(s.snap, sink); err != nil {
		sink.Cancel()
		return err
	}
	return sink.Close()
}

func (s *snapshot) Release() {}
