package controller

import (
	"sync"
	"time"
)

// SchedStats are the main scheduler's figures since the controller
// started (sdiag's "Main schedule statistics").
type SchedStats struct {
	Last, Max, Total time.Duration
	Cycles           uint64
	DepthSum         uint64 // jobs looked at, summed over cycles
	LastQueue        int    // pending jobs in the last cycle
	Started          time.Time
}

type schedStats struct {
	mu sync.Mutex
	s  SchedStats
}

func (st *schedStats) record(d time.Duration, depth int) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.s.Last = d
	st.s.Max = max(st.s.Max, d)
	st.s.Total += d
	st.s.Cycles++
	st.s.DepthSum += uint64(depth)
	st.s.LastQueue = depth
}

// SchedStats reports the scheduler's figures.
func (c *Controller) SchedStats() SchedStats {
	c.sstats.mu.Lock()
	defer c.sstats.mu.Unlock()
	return c.sstats.s
}

// ResetSchedStats starts the scheduler's figures afresh (sdiag -r).
func (c *Controller) ResetSchedStats() {
	c.sstats.mu.Lock()
	defer c.sstats.mu.Unlock()
	c.sstats.s = SchedStats{Started: c.clock.Now()}
}
