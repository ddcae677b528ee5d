package raftnode

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	raftwal "github.com/hashicorp/raft-wal"
	"github.com/hashicorp/raft-wal/metadb"

	"github.com/drover-hpc/drover/internal/fsm"
	"github.com/drover-hpc/drover/internal/state"
)

// Node is a running Raft member applying commands to an FSM.
type Node struct {
	Raft *raft.Raft
	wal  *raftwal.WAL
	meta *metadb.BoltMetaDB
	fsm  *fsm.FSM
}

// Config says where Raft keeps its data and who this member is.
type Config struct {
	Dir string // <StateSaveLocation>/raft
	ID  string
	Log *slog.Logger
	// SnapshotThreshold is how many log entries trigger a snapshot.
	SnapshotThreshold uint64
}

// Open starts (or resumes) a single-voter Raft member over the FSM and
// waits until it leads.
func Open(cfg Config, f *fsm.FSM) (*Node, error) {
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return nil, err
	}
	hl := hclog.New(&hclog.LoggerOptions{Name: "raft", Level: hclog.Warn, Output: os.Stderr})
	walDir := filepath.Join(cfg.Dir, "wal")
	if err := os.MkdirAll(walDir, 0o700); err != nil {
		return nil, err
	}
	// Keep our own handle on the meta store: WAL.Close leaves it (and its
	// file lock) open, which would block reopening in the same process.
	meta := &metadb.BoltMetaDB{}
	wal, err := raftwal.Open(walDir, raftwal.WithLogger(hl), raftwal.WithMetaStore(meta))
	if err != nil {
		return nil, fmt.Errorf("open raft log: %w", err)
	}
	snaps, err := raft.NewFileSnapshotStoreWithLogger(cfg.Dir, 2, hl)
	if err != nil {
		return nil, fmt.Errorf("open snapshot store: %w", err)
	}
	rc := raft.DefaultConfig()
	rc.LocalID = raft.ServerID(cfg.ID)
	rc.Logger = hl
	rc.SnapshotThreshold = 8192
	if cfg.SnapshotThreshold > 0 {
		rc.SnapshotThreshold = cfg.SnapshotThreshold
	}
	rc.SnapshotInterval = 30 * time.Second
	rc.TrailingLogs = 4096
	// One voter: no peers to wait for, so elect immediately.
	rc.HeartbeatTimeout = 50 * time.Millisecond
	rc.ElectionTimeout = 50 * time.Millisecond
	rc.LeaderLeaseTimeout = 50 * time.Millisecond
	rc.CommitTimeout = 5 * time.Millisecond
	rc.BatchApplyCh = true
	rc.MaxAppendEntries = 256

	addr, trans := raft.NewInmemTransport(raft.ServerAddress(cfg.ID))
	has, err := raft.HasExistingState(wal, wal, snaps)
	if err != nil {
		return nil, err
	}
	if !has {
		boot := raft.Configuration{Servers: []raft.Server{{ID: rc.LocalID, Address: addr}}}
		if err := raft.BootstrapCluster(rc, wal, wal, snaps, trans, boot); err != nil {
			return nil, fmt.Errorf("bootstrap raft: %w", err)
		}
	}
	r, err := raft.NewRaft(rc, &adapter{fsm: f}, wal, wal, snaps, trans)
	if err != nil {
		return nil, err
	}
	n := &Node{Raft: r, wal: wal, meta: meta, fsm: f}
	deadline := time.Now().Add(30 * time.Second)
	for r.State() != raft.Leader {
		if time.Now().After(deadline) {
			n.Close()
			return nil, errors.New("raft: no leadership after 30s")
		}
		time.Sleep(5 * time.Millisecond)
	}
	// Wait until the replayed log is applied, so reads see every
	// acknowledged job before the controller serves anyone.
	if err := r.Barrier(30 * time.Second).Error(); err != nil {
		n.Close()
		return nil, fmt.Errorf("raft barrier: %w", err)
	}
	return n, nil
}

// Apply commits a command and returns the FSM's result.
func (n *Node) Apply(t fsm.Type, body any) (any, error) {
	data, err := fsm.Encode(t, body)
	if err != nil {
		return nil, err
	}
	fut := n.Raft.Apply(data, 30*time.Second)
	if err := fut.Error(); err != nil {
		return nil, fmt.Errorf("commit: %w", err)
	}
	if e, ok := fut.Response().(error); ok {
		return nil, e
	}
	return fut.Response(), nil
}

// IsLeader reports whether this member leads.
func (n *Node) IsLeader() bool { return n.Raft.State() == raft.Leader }

// Close stops Raft and closes its log.
func (n *Node) Close() error {
	err := n.Raft.Shutdown().Error()
	if cerr := n.wal.Close(); err == nil {
		err = cerr
	}
	if cerr := n.meta.Close(); err == nil {
		err = cerr
	}
	return err
}

type adapter struct{ fsm *fsm.FSM }

func (a *adapter) Apply(l *raft.Log) any {
	if l.Type != raft.LogCommand {
		return nil
	}
	return a.fsm.Apply(l.Index, l.Data)
}

func (a *adapter) Snapshot() (raft.FSMSnapshot, error) {
	return &snapshot{snap: a.fsm.Store().Snapshot()}, nil
}

func (a *adapter) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	return a.fsm.Restore(rc, 0)
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
