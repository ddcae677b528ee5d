package clock

import (
	"context"
	"errors"
	"testing"
	"time"
)

var t0 = time.Unix(1_000_000, 0)

func received(ch <-chan time.Time) (time.Time, bool) {
	select {
	case v := <-ch:
		return v, true
	default:
		return time.Time{}, false
	}
}

func TestFakeTimerFiresWhenDue(t *testing.T) {
	f := NewFake(t0)
	tm := f.NewTimer(10 * time.Second)
	f.Advance(9 * time.Second)
	if _, ok := received(tm.C); ok {
		t.Fatal("timer fired a second early")
	}
	f.Advance(5 * time.Second)
	v, ok := received(tm.C)
	if !ok || !v.Equal(t0.Add(10*time.Second)) {
		t.Fatalf("fired %v %v, want at +10s", ok, v)
	}
	if now := f.Now(); !now.Equal(t0.Add(14 * time.Second)) {
		t.Fatalf("now %v after advancing 14s", now)
	}
	if f.Waiters() != 0 || tm.Stop() {
		t.Fatal("a fired timer is still armed")
	}
}

func TestFakeTimerStopAndReset(t *testing.T) {
	f := NewFake(t0)
	tm := f.NewTimer(time.Second)
	if !tm.Stop() {
		t.Fatal("Stop of an armed timer reported false")
	}
	f.Advance(time.Hour)
	if _, ok := received(tm.C); ok {
		t.Fatal("a stopped timer fired")
	}
	if tm.Reset(time.Minute) {
		t.Fatal("Reset of a stopped timer reported it armed")
	}
	f.Advance(time.Minute)
	if _, ok := received(tm.C); !ok {
		t.Fatal("a reset timer did not fire")
	}
	// A fired but unread value is dropped by Reset.
	tm.Reset(time.Second)
	f.Advance(time.Second)
	tm.Reset(time.Second)
	if _, ok := received(tm.C); ok {
		t.Fatal("stale value after Reset")
	}
}

// A ticker behind by several periods delivers one tick, then keeps its
// phase; Stop ends it.
func TestFakeTicker(t *testing.T) {
	f := NewFake(t0)
	tk := f.NewTicker(time.Second)
	f.Advance(3500 * time.Millisecond)
	v, ok := received(tk.C)
	if !ok || !v.Equal(t0.Add(time.Second)) {
		t.Fatalf("first tick %v %v", ok, v)
	}
	if _, ok := received(tk.C); ok {
		t.Fatal("ticks piled up")
	}
	f.Advance(500 * time.Millisecond)
	if v, ok := received(tk.C); !ok || !v.Equal(t0.Add(4*time.Second)) {
		t.Fatalf("tick at +4s: %v %v", ok, v)
	}
	tk.Reset(10 * time.Second)
	f.Advance(9 * time.Second)
	if _, ok := received(tk.C); ok {
		t.Fatal("tick before the new interval")
	}
	tk.Stop()
	f.Advance(time.Hour)
	if _, ok := received(tk.C); ok || f.Waiters() != 0 {
		t.Fatal("a stopped ticker ticked or stayed armed")
	}
}

// AfterFuncs run inside Advance in due order, ties in arming order, each
// seeing the clock at its own due time.
func TestFakeAfterFuncOrder(t *testing.T) {
	f := NewFake(t0)
	var got []string
	add := func(name string) func() {
		return func() { got = append(got, name+"@"+f.Now().Sub(t0).String()) }
	}
	f.AfterFunc(3*time.Second, add("c"))
	f.AfterFunc(time.Second, add("a"))
	f.AfterFunc(time.Second, add("b"))
	stopped := f.AfterFunc(2*time.Second, add("x"))
	stopped.Stop()
	// A callback may arm another timer that falls due in the same advance.
	f.AfterFunc(2*time.Second, func() { f.AfterFunc(500*time.Millisecond, add("d")) })
	f.Advance(10 * time.Second)
	want := []string{"a@1s", "b@1s", "d@2.5s", "c@3s"}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
}

// A test waits for the goroutine to reach its sleep, then advances.
func TestFakeSleepAndBlockUntil(t *testing.T) {
	f := NewFake(t0)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- f.Sleep(ctx, time.Minute) }()
	if err := f.BlockUntil(ctx, 1); err != nil {
		t.Fatalf("the sleeper never armed: %v", err)
	}
	f.Advance(time.Minute)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-ctx.Done():
		t.Fatal("Sleep did not return after the advance")
	}
	// A cancelled context cuts the sleep short.
	cctx, ccancel := context.WithCancel(ctx)
	go func() { done <- f.Sleep(cctx, time.Hour) }()
	if err := f.BlockUntil(ctx, 1); err != nil {
		t.Fatal(err)
	}
	ccancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Sleep returned %v, want context.Canceled", err)
		}
	case <-ctx.Done():
		t.Fatal("Sleep ignored its context")
	}
	short, scancel := context.WithTimeout(ctx, 10*time.Millisecond)
	defer scancel()
	if err := f.BlockUntil(short, 1); err == nil {
		t.Fatal("BlockUntil returned with nothing armed")
	}
}

func TestFakeZeroDelay(t *testing.T) {
	var f Fake // the zero value works
	if _, ok := received(f.After(0)); !ok {
		t.Fatal("After(0) did not fire at once")
	}
	ran := make(chan struct{})
	f.AfterFunc(0, func() { close(ran) })
	select {
	case <-ran:
	case <-time.After(10 * time.Second):
		t.Fatal("AfterFunc(0) did not run")
	}
}

func TestReal(t *testing.T) {
	var c Clock = Real{}
	start := c.Now()
	if err := c.Sleep(context.Background(), time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if c.Since(start) < time.Millisecond {
		t.Fatal("Sleep returned early")
	}
	tk := c.NewTicker(time.Millisecond)
	<-tk.C
	tk.Stop()
	fired := make(chan struct{})
	c.AfterFunc(time.Millisecond, func() { close(fired) })
	<-fired
	<-c.After(time.Millisecond)
	tm := c.NewTimer(time.Hour)
	if !tm.Stop() {
		t.Fatal("Stop of an armed real timer reported false")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := c.Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Fatalf("Sleep on a cancelled context: %v", err)
	}
}
