package controller

import "time"

// minPassGap is the least time between two scheduling passes: triggers
// (every submission, end, release, node change) that arrive meanwhile are
// coalesced into the next pass, so a burst of submissions costs a few
// passes, not one each. A trigger on an idle controller is served at once;
// the gap only follows a pass.
const minPassGap = 5 * time.Millisecond

// maxRestGap bounds the rest that follows a long pass, so a slow pass
// over a huge queue never delays the next one by more than this.
const maxRestGap = time.Second

// passGap is how long the loop rests after a pass that took last:
// sched_min_interval when slurm.conf sets one (configured), never less than
// minPassGap, and at least as long as the pass itself (up to maxRestGap)
// so that scheduling takes at most about half the controller's CPU
// whatever the queue holds.
func passGap(configured, last time.Duration) time.Duration {
	return max(configured, min(max(minPassGap, last), maxRestGap))
}
