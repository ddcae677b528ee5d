package raftnode

import (
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/raft-wal/types"
	"golang.org/x/sys/unix"
)

// Log segments written over zeros, synced with fdatasync.
//
// raft-wal preallocates each segment with fallocate, which leaves the
// blocks "unwritten": the first write into each block changes the
// file's extent tree, so every fsync of the log had to commit the
// filesystem journal (ext4, XFS). A journal commit carries everything
// other processes changed on that filesystem meanwhile and, in ext4's
// ordered mode, first writes out their dirty data. While jobs ran (spool
// files, accounting, the jobs' own writes) a submission's fsync took
// 1.0–1.4 ms instead of ~0.5 ms held alone, and a sequential sbatch
// waited on it. Blocks that already hold zeros on disk are overwritten in
// place. Then fdatasync has no metadata to commit (the size was fixed at
// creation), so it writes the log's own bytes and flushes the disk
// cache, and nothing else.
//
// So a background goroutine per segment writes zeros a few MiB ahead of
// the log's last write, and fdatasyncs them there, off the commit path.
// Zeros not yet synced are on a commit's path (the log's fdatasync writes
// out every dirty page of the file): a few MiB at a time spreads that
// over the segment's life, where zeroing a new segment whole would put
// 64 MiB of it in the second after its creation (and into every cluster
// start). In the seq loop both beat fallocate alone; neither beat the
// other beyond the noise.
//
// The log's Sync is an fdatasync. That is as durable as fsync for what
// Raft needs: fdatasync also commits any metadata needed to read the
// data back, such as a block the log reached before the zeros did. Only
// the file's times are left out. The first Sync of a new segment goes
// through the file system's own Sync, which also syncs the directory
// that names the file.
//
// The zeros never cover what the log wrote. A range is picked only
// beyond the end of the log's last write, and a write into a range
// being zeroed waits until those zeros are written. raft-wal writes a
// segment front to back.
const (
	zeroChunk = 1 << 20 // bytes zeroed and synced per step
	zeroAhead = 4 << 20 // how far ahead of the log's last write
)

// zeros is what is written ahead (read only; its pages are the kernel's
// shared zero page until something writes them, and nothing does).
var zeros [zeroChunk]byte

type zeroVFS struct {
	types.VFS
	log *slog.Logger
}

func newZeroVFS(v types.VFS, log *slog.Logger) types.VFS { return &zeroVFS{VFS: v, log: log} }

func (v *zeroVFS) Create(dir, name string, size uint64) (types.WritableFile, error) {
	f, err := v.VFS.Create(dir, name, size)
	if err != nil {
		return nil, err
	}
	return newZeroFile(f, int64(size), false, v.log), nil
}

func (v *zeroVFS) OpenWriter(dir, name string) (types.WritableFile, error) {
	f, err := v.VFS.OpenWriter(dir, name)
	if err != nil {
		return nil, err
	}
	size := int64(0)
	if st, ok := f.(interface {
		Seek(int64, int) (int64, error)
	}); ok {
		if n, err := st.Seek(0, io.SeekEnd); err == nil {
			size = n
		}
	}
	// A reopened tail segment was synced before (its directory entry
	// too).
	return newZeroFile(f, size, true, v.log), nil
}

type zeroFile struct {
	types.WritableFile
	fd     int // -1: the file system gives no descriptor (a test's); plain Sync, no zeros
	size   int64
	synced atomic.Bool // a Sync went through the inner file already
	log    *slog.Logger

	mu      sync.Mutex
	cond    sync.Cond
	high    int64 // end of the log's last write; -1 before its first
	zeroed  int64 // zeros written and synced up to here
	busy    bool  // zeros being written to [zeroed, busyEnd)
	busyEnd int64
	closed  bool
	failed  bool // a zero write failed: stop zeroing (the log is unaffected)
	waiting int  // log writes waiting for zeros to be written (tests)
	// syncErr: an fdatasync of the zeros failed. It may have been the
	// write-back of the log's own pages, and Linux reports such an error
	// once per open file: the log's next fdatasync on this descriptor
	// would succeed with its bytes lost. Every later Sync returns it.
	syncErr error
	kick    chan struct{}
	done    chan struct{}

	beforeZeros func()             // test hook: a range is picked, its zeros not written yet
	fdatasync   func(fd int) error // unix.Fdatasync (tests: a failing one)
}

func newZeroFile(f types.WritableFile, size int64, synced bool, log *slog.Logger) *zeroFile {
	z := &zeroFile{WritableFile: f, fd: -1, size: size, log: log, high: -1,
		kick: make(chan struct{}, 1), done: make(chan struct{}), fdatasync: unix.Fdatasync}
	z.synced.Store(synced)
	z.cond.L = &z.mu
	if d, ok := f.(interface{ Fd() uintptr }); ok && size > 0 {
		z.fd = int(d.Fd())
		go z.run()
	} else {
		close(z.done)
	}
	return z
}

func (z *zeroFile) WriteAt(p []byte, off int64) (int, error) {
	end := off + int64(len(p))
	z.mu.Lock()
	for z.busy && off < z.busyEnd && end > z.zeroed {
		z.waiting++
		z.cond.Wait()
		z.waiting--
	}
	if end > z.high {
		z.high = end
	}
	want := z.fd >= 0 && !z.failed && z.zeroed < min(z.size, z.high+zeroAhead/2)
	z.mu.Unlock()
	if want {
		select {
		case z.kick <- struct{}{}:
		default:
		}
	}
	return z.WritableFile.WriteAt(p, off)
}

func (z *zeroFile) Sync() error {
	z.mu.Lock()
	err := z.syncErr
	z.mu.Unlock()
	if err != nil {
		return err
	}
	if z.fd < 0 || !z.synced.Load() {
		err := z.WritableFile.Sync()
		z.synced.Store(err == nil)
		return err
	}
	return z.fdatasync(z.fd)
}

func (z *zeroFile) Close() error {
	z.mu.Lock()
	z.closed = true
	z.mu.Unlock()
	select {
	case z.kick <- struct{}{}:
	default:
	}
	<-z.done
	return z.WritableFile.Close()
}

// run writes zeros ahead of the log until the segment ends or closes.
func (z *zeroFile) run() {
	defer close(z.done)
	for range z.kick {
		for {
			z.mu.Lock()
			if z.closed || z.failed {
				z.mu.Unlock()
				return
			}
			start := max(z.zeroed, z.high)
			end := min(z.size, start+zeroChunk)
			if z.high < 0 || start >= min(z.size, z.high+zeroAhead) || start >= end {
				z.mu.Unlock()
				break
			}
			z.zeroed, z.busy, z.busyEnd = start, true, end
			z.mu.Unlock()
			if z.beforeZeros != nil {
				z.beforeZeros()
			}

			_, err := z.WritableFile.WriteAt(zeros[:end-start], start)
			if err == io.EOF {
				err = nil // written up to the file's end
			}
			synced := false
			if err == nil {
				err, synced = z.fdatasync(z.fd), true
			}

			z.mu.Lock()
			z.busy = false
			if err != nil {
				z.failed = true
				if synced {
					z.syncErr = fmt.Errorf("raft log: fdatasync (writing zeros ahead): %w", err)
				}
			} else {
				z.zeroed = end
			}
			z.cond.Broadcast()
			z.mu.Unlock()
			if err != nil {
				z.log.Warn("raft log: writing zeros ahead of the log failed; its syncs stay slower", "err", err)
				return
			}
		}
	}
}
