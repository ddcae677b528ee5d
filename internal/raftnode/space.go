package raftnode

import (
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"

	"golang.org/x/sys/unix"
)

// ErrNoSpace is wrapped by Apply's error while the state directory is
// short of space: nothing was written, and the change may be retried once
// space is freed.
var ErrNoSpace = errors.New("No space left on device")

// ErrRecovering is Apply's error while the log is being reopened after a
// failed write.
var ErrRecovering = errors.New("Unable to save state: the controller is reopening its log after a failed write, try again")

// ErrClosing is Apply's error once the member is closing: nothing was
// written.
var ErrClosing = errors.New("Unable to save state: the controller is stopping, try again")

// DefaultMinFree is the least free space kept by default when the
// filesystem is large: 1 GiB, or 2% of a smaller filesystem, but never less
// than minReserve.
const DefaultMinFree = 1 << 30

// minReserve is what one more log segment (preallocated, 64 MiB) plus the
// metadata and a small snapshot need: below it a write can fail half-way,
// so the default rule never goes lower.
const minReserve = 80 << 20

// NoSpaceError says how short the state directory is.
type NoSpaceError struct {
	Dir           string
	Free, Reserve uint64
}

func (e *NoSpaceError) Error() string {
	return fmt.Sprintf("StateSaveLocation %s: No space left on device (%s free, %s kept in reserve): "+
		"changes are refused until space is freed", e.Dir, mib(e.Free), mib(e.Reserve))
}

// Is makes errors.Is(err, ErrNoSpace) true.
func (e *NoSpaceError) Is(target error) bool { return target == ErrNoSpace }

func mib(b uint64) string { return fmt.Sprintf("%d MiB", b>>20) }

// spaceGuard refuses changes before the state directory's filesystem is
// so full that a log write could fail half-way.
type spaceGuard struct {
	dir     string
	minFree int64 // 0: default rule; <0: off
	statfs  func(dir string) (free, size uint64, err error)
	log     *slog.Logger

	mu      sync.Mutex
	free    uint64
	reserve uint64
}

func newSpaceGuard(dir string, minFree int64, statfs func(string) (uint64, uint64, error), log *slog.Logger) *spaceGuard {
	if statfs == nil {
		statfs = statDir
	}
	return &spaceGuard{dir: dir, minFree: minFree, statfs: statfs, log: log}
}

// stateDir is StateSaveLocation, the name an administrator knows (the
// log is its raft subdirectory).
func (g *spaceGuard) stateDir() string {
	if filepath.Base(g.dir) == "raft" {
		return filepath.Dir(g.dir)
	}
	return g.dir
}

func statDir(dir string) (free, size uint64, err error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, 0, err
	}
	return st.Bavail * uint64(st.Bsize), st.Blocks * uint64(st.Bsize), nil
}

// refresh reads the free space. A statfs costs about a microsecond, less
// than the commit it guards, so every change reads afresh: writes stop as
// soon as the disk is short and resume as soon as space is freed. An
// unreadable filesystem counts as having room: the write itself will tell.
func (g *spaceGuard) refresh() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.minFree < 0 {
		return
	}
	free, size, err := g.statfs(g.dir)
	if err != nil {
		g.free, g.reserve = 1, 0
		return
	}
	reserve := uint64(g.minFree)
	if g.minFree == 0 {
		reserve = max(min(DefaultMinFree, size/50), minReserve)
	}
	// Say it once per change, not once per refused command.
	was, now := g.free < g.reserve, free < reserve
	g.free, g.reserve = free, reserve
	switch {
	case now && !was:
		g.log.Error("state directory short of space: changes are refused, reads are served",
			"dir", g.dir, "free_mib", free>>20, "reserve_mib", reserve>>20)
	case was && !now:
		g.log.Info("state directory has space again: changes are accepted", "dir", g.dir, "free_mib", free>>20)
	}
}

// low reports whether free space is below the reserve.
func (g *spaceGuard) low() bool {
	g.refresh()
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.free < g.reserve
}

// check returns a *NoSpaceError while free space is below the reserve.
func (g *spaceGuard) check() error {
	g.refresh()
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.free < g.reserve {
		return &NoSpaceError{Dir: g.stateDir(), Free: g.free, Reserve: g.reserve}
	}
	return nil
}

// full is the error for a write the filesystem itself refused (ENOSPC),
// which happens with the guard off or below its reserve.
func (g *spaceGuard) full() error {
	free, _, _ := g.statfs(g.dir)
	g.mu.Lock()
	defer g.mu.Unlock()
	return &NoSpaceError{Dir: g.stateDir(), Free: free, Reserve: g.reserve}
}
