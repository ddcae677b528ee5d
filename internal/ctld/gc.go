package ctld

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
)

// The controller's heap goal. GOGC=50 alone keeps the heap within 1.5×
// the live state (every job is in memory), but with a small state that
// goal is a few MiB: every submission's short-lived garbage (a gRPC
// connection, its command's encoding, the accounting record), about
// 60 KiB, then starts a collection every couple of hundred submissions,
// each marking the whole live heap — 14% of the controller's CPU per
// held submission. So the heap may always grow at least heapHeadroom past
// its live size, and half its live size once that is more (from 256 MiB
// live on, the peak is GOGC=50's). A floor on the goal alone (the goal
// was max(1.5× live, 128 MiB)) left 100,000 queued jobs (~100 MiB live)
// only ~50 MiB of headroom: a collection, marking all of it, every
// ~800 submissions, and the collector grew from none to 3.6% of a held
// submission's controller CPU between 0 and 98,000 queued (perf,
// bench/scale100k.sh CTLD_PERF); with the headroom it is a collection
// every ~2,000, for ~80 MiB more peak at 100,000 jobs (target < 400 MiB).
// Go has no such knob: the collector's percentage is turned off and a
// memory limit, recomputed after every collection, plays the goal.
const (
	gcPercent    = 50
	heapHeadroom = 128 << 20
)

// gcGoal is the memory limit after a collection that left live bytes.
func gcGoal(live uint64) int64 {
	return int64(live) + int64(math.Max(float64(live)*gcPercent/100, heapHeadroom))
}

// tuneGC installs the goal; GOGC or GOMEMLIMIT in the environment (an
// operator's choice) leave the runtime's own policy in place.
func tuneGC(env func(string) string) {
	if env("GOGC") != "" || env("GOMEMLIMIT") != "" {
		return
	}
	debug.SetMemoryLimit(heapHeadroom)
	debug.SetGCPercent(-1)
	if !gcTunerOn.Swap(true) {
		armGCTuner()
	}
}

var (
	gcTunes   atomic.Uint64 // limits set after collections (tests)
	gcTunerOn atomic.Bool   // cleared by tests, to stop the tuner
)

// armGCTuner resets the limit after the next collection: the runtime runs
// the cleanup of an object once a collection has found it unreachable,
// and each run arms the next.
func armGCTuner() {
	sentinel := new([16]byte)
	runtime.AddCleanup(sentinel, func(struct{}) {
		if !gcTunerOn.Load() {
			return
		}
		s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		metrics.Read(s)
		if s[0].Value.Kind() == metrics.KindUint64 {
			debug.SetMemoryLimit(gcGoal(s[0].Value.Uint64()))
		}
		gcTunes.Add(1)
		armGCTuner()
	}, struct{}{})
}
