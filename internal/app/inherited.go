package app

import (
	"math"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// noInheritedFDs marks every descriptor a daemon inherited past stdin,
// stdout and stderr close-on-exec. Go opens its own descriptors so, but
// not what the daemon's parent left open: a lock held by `flock LOCK drover
// up`, a script's socket. The node supervisors, which outlive the agent
// and run for as long as their jobs, would hold such a descriptor too (a
// supervisor of a cluster long gone kept a test lock taken).
func noInheritedFDs() {
	if unix.CloseRange(3, math.MaxUint32, unix.CLOSE_RANGE_CLOEXEC) == nil {
		return
	}
	// Before Linux 5.11: one by one.
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return
	}
	for _, e := range ents {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			_, _ = unix.FcntlInt(uintptr(fd), unix.F_SETFD, unix.FD_CLOEXEC)
		}
	}
}
