package clock

import (
	"context"
	"sync"
	"time"
)

// Fake is a clock that moves only when a test advances it; see the
// package comment for how timers fire.
type Fake struct {
	advance sync.Mutex // one Advance at a time, so firings stay in order

	mu      sync.Mutex
	now     time.Time
	seq     uint64
	waiters map[*fakeTimer]struct{}
	changed chan struct{} // closed (and replaced) whenever waiters change
}

// NewFake starts a fake clock at t.
func NewFake(t time.Time) *Fake {
	return &Fake{now: t, waiters: map[*fakeTimer]struct{}{}, changed: make(chan struct{})}
}

// fakeTimer is one armed timer, ticker or sleeper.
type fakeTimer struct {
	f      *Fake
	when   time.Time
	seq    uint64        // arming order: ties fire first-armed first
	period time.Duration // > 0: a ticker
	ch     chan time.Time
	fn     func()
}

// Now returns the fake time.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// Since returns the fake time elapsed since t.
func (f *Fake) Since(t time.Time) time.Duration { return f.Now().Sub(t) }

// NewTimer arms a timer; d <= 0 fires at once.
func (f *Fake) NewTimer(d time.Duration) *Timer {
	t := &fakeTimer{f: f, ch: make(chan time.Time, 1)}
	f.mu.Lock()
	f.arm(t, d)
	f.mu.Unlock()
	return &Timer{C: t.ch, impl: t}
}

// NewTicker arms a ticker; d must be positive, as for time.NewTicker.
func (f *Fake) NewTicker(d time.Duration) *Ticker {
	if d <= 0 {
		panic("clock: non-positive interval for NewTicker")
	}
	t := &fakeTimer{f: f, ch: make(chan time.Time, 1), period: d}
	f.mu.Lock()
	f.arm(t, d)
	f.mu.Unlock()
	return &Ticker{C: t.ch, impl: fakeTicker{t}}
}

// After is NewTimer(d).C.
func (f *Fake) After(d time.Duration) <-chan time.Time { return f.NewTimer(d).C }

// AfterFunc calls fn from Advance once d has passed; d <= 0 calls it at
// once on its own goroutine, as time.AfterFunc would.
func (f *Fake) AfterFunc(d time.Duration, fn func()) *Timer {
	t := &fakeTimer{f: f, fn: fn}
	f.mu.Lock()
	f.arm(t, d)
	f.mu.Unlock()
	return &Timer{impl: t}
}

// Sleep waits until the clock has been advanced by d, or ctx ends.
func (f *Fake) Sleep(ctx context.Context, d time.Duration) error {
	t := f.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Advance moves the fake time forward by d, firing every timer that falls
// due on the way in order of its due time.
func (f *Fake) Advance(d time.Duration) {
	f.advance.Lock()
	defer f.advance.Unlock()
	f.mu.Lock()
	target := f.now.Add(d)
	for {
		t := f.next(target)
		if t == nil {
			break
		}
		if t.when.After(f.now) {
			f.now = t.when
		}
		if t.period > 0 {
			t.when = t.when.Add(t.period)
			t.seq = f.nextSeq()
		} else {
			f.disarm(t)
		}
		at := f.now
		f.mu.Unlock()
		t.fire(at)
		f.mu.Lock()
	}
	f.now = target
	f.mu.Unlock()
}

// Waiters is how many timers, tickers and sleepers are armed.
func (f *Fake) Waiters() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.waiters)
}

// BlockUntil waits until at least n timers, tickers or sleepers are armed
// (goroutines under test have reached their wait), or ctx ends.
func (f *Fake) BlockUntil(ctx context.Context, n int) error {
	for {
		f.mu.Lock()
		f.init()
		have, ch := len(f.waiters), f.changed
		f.mu.Unlock()
		if have >= n {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ch:
		}
	}
}

// next is the earliest armed timer due by target; f.mu is held.
func (f *Fake) next(target time.Time) *fakeTimer {
	var best *fakeTimer
	for t := range f.waiters {
		if t.when.After(target) {
			continue
		}
		if best == nil || t.when.Before(best.when) || (t.when.Equal(best.when) && t.seq < best.seq) {
			best = t
		}
	}
	return best
}

func (f *Fake) nextSeq() uint64 { f.seq++; return f.seq }

// arm schedules t d from now, or fires it at once for d <= 0; f.mu is held.
func (f *Fake) arm(t *fakeTimer, d time.Duration) {
	f.init()
	if d <= 0 && t.period == 0 {
		if t.fn != nil {
			go t.fn()
		} else {
			t.fire(f.now)
		}
		return
	}
	t.when, t.seq = f.now.Add(d), f.nextSeq()
	f.waiters[t] = struct{}{}
	f.notify()
}

// disarm forgets t and reports whether it was armed; f.mu is held.
func (f *Fake) disarm(t *fakeTimer) bool {
	if _, ok := f.waiters[t]; !ok {
		return false
	}
	delete(f.waiters, t)
	f.notify()
	return true
}

// init makes the zero Fake usable; f.mu is held.
func (f *Fake) init() {
	if f.waiters == nil {
		f.waiters = map[*fakeTimer]struct{}{}
	}
	if f.changed == nil {
		f.changed = make(chan struct{})
	}
}

func (f *Fake) notify() {
	close(f.changed)
	f.changed = make(chan struct{})
}

// fire delivers one event: a call, or a value its reader may miss (the
// channel holds one, like the standard library's).
func (t *fakeTimer) fire(at time.Time) {
	if t.fn != nil {
		t.fn()
		return
	}
	select {
	case t.ch <- at:
	default:
	}
}

// drain drops an undelivered value: after Stop or Reset no stale time is
// received, as with Go 1.23's timers.
func (t *fakeTimer) drain() {
	if t.ch == nil {
		return
	}
	select {
	case <-t.ch:
	default:
	}
}

func (t *fakeTimer) stop() bool {
	t.f.mu.Lock()
	defer t.f.mu.Unlock()
	t.drain()
	return t.f.disarm(t)
}

func (t *fakeTimer) reset(d time.Duration) bool {
	f := t.f
	f.mu.Lock()
	defer f.mu.Unlock()
	t.drain()
	was := f.disarm(t)
	if t.period > 0 {
		if d <= 0 {
			panic("clock: non-positive interval for Ticker.Reset")
		}
		t.period = d
	}
	f.arm(t, d)
	return was
}

// fakeTicker is a fakeTimer seen through the Ticker's methods.
type fakeTicker struct{ t *fakeTimer }

func (k fakeTicker) stop()                 { k.t.stop() }
func (k fakeTicker) reset(d time.Duration) { k.t.reset(d) }
