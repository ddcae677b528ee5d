package controller

import (
	"testing"
	"time"
)

func TestPassGap(t *testing.T) {
	for _, c := range []struct {
		configured, last, want time.Duration
	}{
		{0, 0, minPassGap},                                   // quick pass: the floor
		{0, 2 * time.Millisecond, minPassGap},                //
		{0, 40 * time.Millisecond, 40 * time.Millisecond},    // long pass: as long a rest
		{0, time.Minute, maxRestGap},                         // bounded
		{2 * time.Second, time.Millisecond, 2 * time.Second}, // sched_min_interval wins
		{time.Microsecond, 30 * time.Millisecond, 30 * time.Millisecond},
	} {
		if got := passGap(c.configured, c.last); got != c.want {
			t.Errorf("passGap(%v, %v) = %v, want %v", c.configured, c.last, got, c.want)
		}
	}
}
