// Package clock is the only source of time for server code: a real clock in
// production and a fake one tests move by hand.
//
// Everything in the controller, the service and the scheduler that waits
// or measures asks a Clock: Now and Since for reading it, NewTimer,
// NewTicker, After and AfterFunc for waking later, Sleep for a pause that
// a context can cut short. Timer and Ticker have a C field like the
// standard library's, so a loop converts by changing only the constructor
// (time.NewTicker(d) → c.clock.NewTicker(d)).
//
// Fake never moves by itself. Advance(d) moves it forward and fires, in
// order of their due time, every timer, ticker tick and AfterFunc that
// falls due on the way: a ticker that would have ticked several times
// delivers one tick (its channel holds one, like time.Ticker's), and an
// AfterFunc runs synchronously inside Advance, so when Advance returns its
// effects are there. A test that starts a goroutine which will wait on
// the clock calls BlockUntil(ctx, n) before Advance, so the advance is not
// lost to a goroutine that has not armed its timer yet. Waiters counts
// the armed timers, tickers and sleepers.
//
// What stays on package time: network and RPC deadlines (context.WithTimeout
// around a database write, gRPC keepalives), Raft's own timing, and process
// shutdown grace periods — none of them drive scheduling behaviour, and a
// fake clock could only hang them. internal/archtest enforces the rule for
// controller, service and sched.
//
// clock uses the standard library only.
package clock
