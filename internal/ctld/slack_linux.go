package ctld

import (
	"os"
	"runtime"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The controller runs with a timer slack of 1 ms instead of Linux's
// default 50 µs. While any of its threads has work, the Go runtime's
// monitor thread (sysmon) sleeps 20 µs at a time between its rounds
// (looking for system calls and goroutines that run long), and the
// scheduler's threads that look for work sleep a few µs between tries: a
// held submission (~0.5 ms of work, an fsync among it) woke them dozens
// of times: the monitor's thread alone was ~15% of the controller's CPU
// per submission, which a CPU profile does not show (it runs no
// goroutine). With 1 ms, bench/held.sh's controller CPU per submission
// went from 580–660 µs to 510–552 µs (alternated in one sitting, a
// loaded machine). The slack lets the kernel group
// those wake-ups; only sleeps with a deadline are affected: a request
// or an fsync that ends wakes its thread at once. Timers fire up to
// 1 ms late: the controller's shortest (the pause between scheduling
// passes) is 5 ms, and Go rounds its poller's waits to 1 ms anyway.
//
// A thread inherits its slack from the thread that creates it, and the
// runtime has started the monitor before any of our code runs: so the
// controller sets the slack on one thread and executes itself again
// (the same process id, arguments and environment; descriptors past
// stderr were marked close-on-exec before, and the controller uses none
// it inherits), so that every thread of the new image has it. A slack already at least as large (a
// systemd unit's TimerSlackNSec=) is kept, and DROVER_CTLD_TIMERSLACK
// (a duration; 0 keeps what the controller inherited) overrides the
// value.
const defaultTimerSlack = time.Millisecond

// UseTimerSlack re-executes the controller's process with its timer
// slack (see above) when the slack it has is smaller; it returns only
// when nothing needs to change or the re-execution failed. Call it
// first, before the process has opened anything.
func UseTimerSlack(env func(string) string) {
	want, ok := timerSlack(env("DROVER_CTLD_TIMERSLACK"))
	if !ok {
		return
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	have, err := unix.PrctlRetInt(unix.PR_GET_TIMERSLACK, 0, 0, 0, 0)
	if err != nil || time.Duration(have) >= want {
		return
	}
	if unix.Prctl(unix.PR_SET_TIMERSLACK, uintptr(want), 0, 0, 0) != nil {
		return
	}
	// Exec keeps this thread's slack; the new image's threads inherit it.
	_ = syscall.Exec("/proc/self/exe", os.Args, os.Environ())
	_ = unix.Prctl(unix.PR_SET_TIMERSLACK, uintptr(have), 0, 0, 0)
}

// timerSlack is the slack DROVER_CTLD_TIMERSLACK asks for (the default
// when unset); false: leave the inherited one.
func timerSlack(v string) (time.Duration, bool) {
	if v == "" {
		return defaultTimerSlack, true
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, false
	}
	return d, true
}
