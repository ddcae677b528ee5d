package ctld

import (
	"runtime"
	"runtime/debug"
	"testing"
)

func TestGCGoal(t *testing.T) {
	for _, c := range []struct {
		live uint64
		want int64
	}{
		{0, heapHeadroom},
		{30 << 20, 158 << 20},                // 10,000 jobs: live + the headroom
		{100 << 20, 228 << 20},               // 100,000 jobs: the same
		{2 * heapHeadroom, 3 * heapHeadroom}, // where the two meet
		{400 << 20, 600 << 20},               // past it: 1.5× live, as GOGC=50
	} {
		if got := gcGoal(c.live); got != c.want {
			t.Errorf("gcGoal(%d MiB) = %d MiB, want %d MiB", c.live>>20, got>>20, c.want>>20)
		}
	}
}

// TestTuneGCFollowsTheLiveHeap: with the tuner installed, a collection
// sets the limit from the live heap: live plus the headroom.
func TestTuneGCFollowsTheLiveHeap(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	defer gcTunerOn.Store(false)
	tuneGC(func(string) string { return "" })
	if p := debug.SetGCPercent(-1); p != -1 {
		t.Fatalf("GC percent %d, want off (-1) under the tuner", p)
	}
	keep := make([][]byte, 0, 200)
	for range 200 { // 200 MiB live
		keep = append(keep, make([]byte, 1<<20))
	}
	// The cleanup runs after the collection that freed its object: await
	// two tunes, for at most 1,000 collections.
	before := gcTunes.Load()
	for i := 0; gcTunes.Load() < before+2; i++ {
		if i == 1000 {
			t.Fatal("no limit set after 1,000 collections")
		}
		runtime.GC()
		runtime.Gosched()
	}
	limit := debug.SetMemoryLimit(-1)
	debug.SetMemoryLimit(limit)
	if limit < 310<<20 || limit > 350<<20 {
		t.Errorf("limit %d MiB with 200 MiB live, want about 328", limit>>20)
	}
	runtime.KeepAlive(keep)
	if !skipped(func(string) string { return "100" }) {
		t.Error("GOGC in the environment did not leave the runtime's policy")
	}
}

// skipped reports whether tuneGC left the runtime alone under env.
func skipped(env func(string) string) bool {
	debug.SetGCPercent(77)
	tuneGC(env)
	return debug.SetGCPercent(100) == 77
}
