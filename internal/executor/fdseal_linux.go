package executor

import (
	"math"

	"golang.org/x/sys/unix"
)

const fdDir = "/proc/self/fd"

// sealFDsFast sets close-on-exec on fds 3 and up in one call (Linux 5.11).
func sealFDsFast() bool {
	return unix.CloseRange(3, math.MaxUint32, unix.CLOSE_RANGE_CLOEXEC) == nil
}
