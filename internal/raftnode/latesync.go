package raftnode

import (
	"errors"
	"log/slog"
	"sync"

	"github.com/hashicorp/raft-wal/types"
)

// The log's fsync after the reply. raft-wal writes every batch of entries
// into the page cache and then fsyncs it before Raft counts the entries
// as committed; the fsync was most of a submission's time in the
// controller (0.3–0.9 ms here, more while the disk is busy; the handler
// without it ~0.2 ms). What a controller crash (SIGKILL, a panic, the OOM
// killer) must not lose is already safe once the write returned: the page
// cache belongs to the kernel, not to the process. Only a crash of the
// machine itself can lose what was not yet synced. So, when
// Config.LateSync is set, a batch's Sync only asks a background
// goroutine to fsync, and returns: the command is applied and answered
// while its bytes are being flushed, and the batches that arrive during
// one fsync share the next (group commit). The window a power loss can
// lose is one fsync, a few milliseconds; Slurm's slurmctld saves its job
// state seconds after answering.
//
// Ordering the WAL relies on is kept: before the WAL's metadata records a
// change (a sealed segment, a new one, a truncation), every pending fsync
// is done, so the metadata never names bytes that are not on disk; the
// same before a file is closed. A failed background fsync is returned by
// the next Sync, which makes Raft step down and the node reopen its log,
// as a failed synchronous fsync did.
type lateSync struct {
	round sync.Mutex // held while files are being fsynced

	mu      sync.Mutex
	pending map[*lateFile]struct{}
	err     error // the first background fsync that failed
	kick    chan struct{}
	stop    chan struct{}
	done    chan struct{}
	log     *slog.Logger
}

func newLateSync(log *slog.Logger) *lateSync {
	s := &lateSync{pending: map[*lateFile]struct{}{}, kick: make(chan struct{}, 1),
		stop: make(chan struct{}), done: make(chan struct{}), log: log}
	go s.run()
	return s
}

func (s *lateSync) run() {
	defer close(s.done)
	for {
		select {
		case <-s.stop:
			return
		case <-s.kick:
			_ = s.flush()
		}
	}
}

// request queues f's fsync and returns the error of an earlier one, if
// any failed.
func (s *lateSync) request(f *lateFile) error {
	s.mu.Lock()
	err := s.err
	if err == nil {
		s.pending[f] = struct{}{}
	}
	s.mu.Unlock()
	if err != nil {
		return err
	}
	select {
	case s.kick <- struct{}{}:
	default:
	}
	return nil
}

// flush fsyncs every file whose Sync came before it was called: it waits
// for a round in progress (its files left pending when it began), then
// syncs what is still pending.
func (s *lateSync) flush() error {
	s.round.Lock()
	defer s.round.Unlock()
	s.mu.Lock()
	files := make([]*lateFile, 0, len(s.pending))
	for f := range s.pending {
		files = append(files, f)
	}
	clear(s.pending)
	s.mu.Unlock()
	var errs []error
	for _, f := range files {
		if err := f.WritableFile.Sync(); err != nil {
			errs = append(errs, err)
		}
	}
	err := errors.Join(errs...)
	s.mu.Lock()
	if err != nil && s.err == nil {
		s.err = err
		s.log.Error("raft log: fsync failed; the log is reopened", "err", err)
	}
	err = s.err
	s.mu.Unlock()
	return err
}

// close syncs what is pending and stops the goroutine.
func (s *lateSync) close() error {
	err := s.flush()
	close(s.stop)
	<-s.done
	return err
}

// vfs wraps the WAL's file system: the files it writes sync late.
func (s *lateSync) vfs(v types.VFS) types.VFS { return &lateVFS{VFS: v, s: s} }

// meta wraps the WAL's metadata store: a commit of the metadata waits
// for the data it describes.
func (s *lateSync) meta(m types.MetaStore) types.MetaStore { return &lateMeta{MetaStore: m, s: s} }

type lateVFS struct {
	types.VFS
	s *lateSync
}

func (v *lateVFS) Create(dir, name string, size uint64) (types.WritableFile, error) {
	f, err := v.VFS.Create(dir, name, size)
	if err != nil {
		return nil, err
	}
	return &lateFile{WritableFile: f, s: v.s}, nil
}

func (v *lateVFS) OpenWriter(dir, name string) (types.WritableFile, error) {
	f, err := v.VFS.OpenWriter(dir, name)
	if err != nil {
		return nil, err
	}
	return &lateFile{WritableFile: f, s: v.s}, nil
}

func (v *lateVFS) Delete(dir, name string) error {
	if err := v.s.flush(); err != nil {
		return err
	}
	return v.VFS.Delete(dir, name)
}

type lateFile struct {
	types.WritableFile
	s *lateSync
}

func (f *lateFile) Sync() error { return f.s.request(f) }

func (f *lateFile) Close() error {
	err := f.s.flush()
	if cerr := f.WritableFile.Close(); err == nil {
		err = cerr
	}
	return err
}

type lateMeta struct {
	types.MetaStore
	s *lateSync
}

func (m *lateMeta) CommitState(st types.PersistentState) error {
	if err := m.s.flush(); err != nil {
		return err
	}
	return m.MetaStore.CommitState(st)
}
