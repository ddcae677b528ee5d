package sched

import (
	"math/rand"
	"testing"
)

// TestNodeStepsPeak checks the cached step function (built at once, or
// grown reservation by reservation) and both ways of reading its peak
// against the sum of overlapping reservations at every instant.
func TestNodeStepsPeak(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for round := range 300 {
		var res []reserve
		var grown nodeSteps
		var buf []resEvent
		grown.build(nil, nil, &buf)
		for range rng.Intn(12) {
			from := int64(rng.Intn(50))
			rv := reserve{from: from, to: from + 1 + int64(rng.Intn(30)), cpu: int32(1 + rng.Intn(4)), mem: int64(rng.Intn(100))}
			res = append(res, rv)
			grown.addReserve(rv)
		}
		var built nodeSteps
		built.build(nil, res, &buf)
		brute := func(a, b int64) (int32, int64) {
			var pc int32
			var pm int64
			for tt := a; tt < b && tt < 100; tt++ {
				var sc int32
				var sm int64
				for _, r := range res {
					if r.from <= tt && tt < r.to {
						sc += r.cpu
						sm += r.mem
					}
				}
				pc, pm = max(pc, sc), max(pm, sm)
			}
			return pc, pm
		}
		var sw nodeSweep
		sw.reset(&built)
		a, lastB := int64(0), int64(0)
		for range 20 {
			a += int64(rng.Intn(6))
			b := a + 1 + int64(rng.Intn(40))
			wc, wm := brute(a, b)
			for name, st := range map[string]*nodeSteps{"built": &built, "grown": &grown} {
				if c, m := st.peakOver(a, b); c != wc || m != wm {
					t.Fatalf("round %d %s: peakOver(%d, %d) = %d, %d; want %d, %d (res %+v)", round, name, a, b, c, m, wc, wm, res)
				}
			}
			// The sweep needs both ends to move forward only.
			if b >= lastB {
				lastB = b
				if c, m := sw.peak(a, b); c != wc || m != wm {
					t.Fatalf("round %d: sweep peak(%d, %d) = %d, %d; want %d, %d (res %+v)", round, a, b, c, m, wc, wm, res)
				}
			}
		}
	}
}
