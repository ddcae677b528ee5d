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
// held submission. Below heapFloor the collector waits for the heap to
// reach the floor; above it, the goal is 1.5× live as before, so the peak
// with 100,000 jobs does not change. Go has no such knob: the collector's
// percentage is turned off and a memory limit, recomputed after every
// collection, plays the goal.
const (
	gcPercent = 50
	heapFloor = 128 << 20
)

// gcGoal is the memory limit after a collection that left live bytes.
func gcGoal(live uint64) int64 {
	goal := float64(live) * (100 + gcPercent) / 100
	return int64(math.Max(goal, heapFloor))
}

// tuneGC installs the goal; GOGC or GOMEMLIMIT in the environment (an
// operator's choice) leave the runtime's own policy in place.
func tuneGC(env func(string) string) {
	if env("GOGC") != "" || env("GOMEMLIMIT") != "" {
		return
	}
	debug.SetMemoryLimit(heapFloor)
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
