package clock

import (
	"context"
	"time"
)

// Clock tells the time and wakes callers later.
type Clock interface {
	Now() time.Time
	// Since is Now().Sub(t).
	Since(t time.Time) time.Duration
	// NewTimer fires once on its C after d.
	NewTimer(d time.Duration) *Timer
	// NewTicker sends on its C every d (d > 0), dropping ticks a slow
	// reader misses.
	NewTicker(d time.Duration) *Ticker
	// After is NewTimer(d).C.
	After(d time.Duration) <-chan time.Time
	// AfterFunc calls f once after d; the returned Timer's C is nil.
	AfterFunc(d time.Duration, f func()) *Timer
	// Sleep waits d, or less if ctx ends first (then it returns ctx.Err()).
	Sleep(ctx context.Context, d time.Duration) error
}

// Timer is a single event; C receives the time it fired (nil for
// AfterFunc).
type Timer struct {
	C    <-chan time.Time
	impl timerImpl
}

type timerImpl interface {
	stop() bool
	reset(d time.Duration) bool
}

// Stop prevents the timer from firing; it reports whether it was armed.
func (t *Timer) Stop() bool { return t.impl.stop() }

// Reset arms the timer again to fire after d; it reports whether it was
// armed.
func (t *Timer) Reset(d time.Duration) bool { return t.impl.reset(d) }

// Ticker delivers ticks on C at an interval.
type Ticker struct {
	C    <-chan time.Time
	impl tickerImpl
}

type tickerImpl interface {
	stop()
	reset(d time.Duration)
}

// Stop turns the ticker off; no more ticks are sent.
func (t *Ticker) Stop() { t.impl.stop() }

// Reset changes the interval to d and restarts the count from now.
func (t *Ticker) Reset(d time.Duration) { t.impl.reset(d) }

// Real is the system clock.
type Real struct{}

// Now returns time.Now().
func (Real) Now() time.Time { return time.Now() }

// Since returns time.Since(t).
func (Real) Since(t time.Time) time.Duration { return time.Since(t) }

// NewTimer wraps time.NewTimer.
func (Real) NewTimer(d time.Duration) *Timer {
	t := time.NewTimer(d)
	return &Timer{C: t.C, impl: realTimer{t}}
}

// NewTicker wraps time.NewTicker.
func (Real) NewTicker(d time.Duration) *Ticker {
	t := time.NewTicker(d)
	return &Ticker{C: t.C, impl: realTicker{t}}
}

// After wraps time.After.
func (Real) After(d time.Duration) <-chan time.Time { return time.After(d) }

// AfterFunc wraps time.AfterFunc.
func (Real) AfterFunc(d time.Duration, f func()) *Timer {
	return &Timer{impl: realTimer{time.AfterFunc(d, f)}}
}

// Sleep waits d or until ctx ends.
func (Real) Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

type realTimer struct{ t *time.Timer }

func (r realTimer) stop() bool                 { return r.t.Stop() }
func (r realTimer) reset(d time.Duration) bool { return r.t.Reset(d) }

type realTicker struct{ t *time.Ticker }

func (r realTicker) stop()                 { r.t.Stop() }
func (r realTicker) reset(d time.Duration) { r.t.Reset(d) }
