package localapi

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/drover-hpc/drover/client/local"
	"github.com/drover-hpc/drover/internal/acct"
	"github.com/drover-hpc/drover/internal/api"
	"github.com/drover-hpc/drover/internal/localwire"
	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/rpcstats"
)

// The hostile local user: every test here is a client that misbehaves on
// purpose, and what it must not get is a goroutine, memory or a wait of
// the controller's beyond the limits, or another user's turn.

// serveServer is serve with the server itself at hand.
func serveServer(t *testing.T, svc Backend, lim Limits) (string, *Server) {
	t.Helper()
	sock, srv, _ := start(t, svc, lim)
	return sock, srv
}

// waitUntil polls cond for up to 10 s; what says what it waited for.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("after 10 s: %s", what)
		}
	}
}

// header sends a frame header claiming n bytes and the first k of them.
func header(t *testing.T, c net.Conn, n, k int) {
	t.Helper()
	b := binary.BigEndian.AppendUint32(nil, uint32(n))
	if _, err := c.Write(append(b, make([]byte, k)...)); err != nil {
		t.Fatal(err)
	}
}

// TestAUsersRequestsInFlightHoldBoundedMemory: while one large request
// of a user is being served, the same user's next large request waits
// for its memory, and is refused (try again) when none frees up within
// the I/O timeout; a half-sent request's share comes back when the I/O
// timeout ends it.
func TestAUsersRequestsInFlightHoldBoundedMemory(t *testing.T) {
	const big = 4 << 20
	f := newFake()
	f.block = make(chan struct{})
	sock, srv := serveServer(t, f, Limits{IO: 300 * time.Millisecond, PerUserMemory: requestCost(big) + requestCost(64)})
	uid := uint32(os.Getuid())
	a := raw(t, sock)
	req, _ := localwire.Encode(&localwire.Request{Method: "Ping", Body: make([]byte, big-16)})
	_ = localwire.WriteFrame(a, req)
	<-f.caller // served, and held there until f.block closes
	if got, want := srv.mem.inFlight(uid), requestCost(len(req)); got != want {
		t.Errorf("a request in flight holds %d, want %d", got, want)
	}
	b := raw(t, sock)
	header(t, b, big, 0)
	if msg := lastAnswer(t, b); msg != api.ErrTryAgain.Error() {
		t.Errorf("a second large request past the bound answered %q", msg)
	}
	close(f.block)
	if _, err := localwire.ReadFrame(a, localwire.MaxAnswer); err != nil {
		t.Fatalf("the first request's answer: %v", err)
	}
	waitUntil(t, "the served request's share to come back", func() bool { return srv.mem.inFlight(uid) == 0 })
	c := raw(t, sock)
	header(t, c, big, 1000)
	waitUntil(t, "a half-sent request to take its share", func() bool { return srv.mem.inFlight(uid) != 0 })
	waitUntil(t, "the stalled request's share to come back", func() bool { return srv.mem.inFlight(uid) == 0 })
	cl := local.Dial(sock)
	defer cl.Close()
	if _, err := cl.Ping(context.Background()); err != nil {
		t.Errorf("a call after the hostile ones: %v", err)
	}
}

// TestBudgetIsPerUser: one user at its bound makes only its own requests
// wait, and a share that comes back wakes a waiter.
func TestBudgetIsPerUser(t *testing.T) {
	b := newBudget(100, func(uid uint32) bool { return uid == 0 })
	soon := time.Now().Add(50 * time.Millisecond)
	if !b.take(1, 100, soon) || b.take(1, 1, soon) {
		t.Fatal("uid 1 took past its bound")
	}
	if !b.take(2, 100, soon) || !b.take(0, 1<<40, soon) {
		t.Fatal("uid 1 at its bound held up uid 2 or root")
	}
	got := make(chan bool)
	go func() { got <- b.take(1, 60, time.Now().Add(10*time.Second)) }()
	b.give(1, 100)
	if !<-got || b.inFlight(1) != 60 {
		t.Errorf("a waiter was not woken by the share that came back (in flight %d)", b.inFlight(1))
	}
	// One request larger than the bound still goes, alone.
	b.give(1, 60)
	if !b.take(1, 1000, soon) {
		t.Error("a user with nothing in flight could not send one large request")
	}
}

// bigFake answers ListPartitions with more than a socket buffer holds
// (about 200 KiB).
type bigFake struct{ *fake }

func (f bigFake) ListPartitions(ctx context.Context) ([]*model.Partition, error) {
	return []*model.Partition{{Name: strings.Repeat("p", 2<<20)}}, nil
}

// TestClientsThatNeverReadOrLeaveEarlyPinNothing: a client that sends
// calls and never reads their answers, one that leaves in the middle of
// a call, and ones that stop inside a frame or say nothing: the
// controller's goroutines for them all end (within the I/O and idle
// timeouts), their memory shares come back, and another client is served
// meanwhile.
func TestClientsThatNeverReadOrLeaveEarlyPinNothing(t *testing.T) {
	f := newFake()
	f.block = make(chan struct{})
	sock, srv := serveServer(t, bigFake{f}, Limits{IO: time.Second, Idle: 1500 * time.Millisecond})
	base := runtime.NumGoroutine()
	uid := uint32(os.Getuid())
	var conns []net.Conn
	// Never reads: the answer's write times out and ends the connection.
	c := raw(t, sock)
	req, _ := localwire.Encode(&localwire.Request{Method: "ListPartitions"})
	for range 3 {
		_ = localwire.WriteFrame(c, req)
	}
	conns = append(conns, c)
	// Leaves in the middle of a call (Ping blocks until f.block closes).
	c = raw(t, sock)
	ping, _ := localwire.Encode(&localwire.Request{Method: "Ping"})
	_ = localwire.WriteFrame(c, ping)
	<-f.caller
	c.Close()
	// Stops inside a frame; says nothing after its preface; says nothing.
	c = raw(t, sock)
	header(t, c, 100, 10)
	conns = append(conns, c, raw(t, sock))
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	conns = append(conns, c)
	// Another client is served while those hang on.
	other := local.Dial(sock)
	defer other.Close()
	if _, err := other.ListPartitions(context.Background()); err != nil {
		t.Errorf("another client beside the hostile ones: %v", err)
	}
	close(f.block)
	waitUntil(t, "every hostile connection's goroutines to end", func() bool {
		return runtime.NumGoroutine() <= base && srv.mem.inFlight(uid) == 0
	})
	for _, c := range conns {
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, err := io.Copy(io.Discard, c)
		if err != nil && !errors.Is(err, net.ErrClosed) && !strings.Contains(err.Error(), "reset") {
			t.Errorf("a hostile connection was not closed by the controller: %v", err)
		}
	}
}

// TestLargeAnswersAreChargedToTheCaller: an answer over 64 KiB waits for
// room in its caller's bound (a user whose connections ask for listings
// and never read them holds only so many), and is dropped, its
// connection closed, when none comes within the I/O timeout; small
// answers and other users' are not held up.
func TestLargeAnswersAreChargedToTheCaller(t *testing.T) {
	srv := New(context.Background(), newFake(), Limits{IO: 100 * time.Millisecond, PerUserMemory: 1 << 20},
		rpcstats.New(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	big := &localwire.Answer{Body: make([]byte, 600<<10)}
	small := &localwire.Answer{Body: []byte("ok")}
	if !srv.mem.take(7, 1<<20, time.Now()) {
		t.Fatal("an empty budget refused")
	}
	for name, c := range map[string]struct {
		uid  uint32
		a    *localwire.Answer
		want error
	}{
		"large, caller at its bound": {7, big, errOverBudget},
		"small, caller at its bound": {7, small, nil},
		"large, another caller":      {8, big, nil},
	} {
		client, server := net.Pipe()
		go func() { _, _ = io.Copy(io.Discard, client) }()
		if err := srv.answer(&userConn{Conn: server, uid: c.uid}, c.a); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", name, err, c.want)
		}
		server.Close()
		client.Close()
	}
	srv.mem.give(7, 1<<20)
	if n := srv.mem.inFlight(8) + srv.mem.inFlight(7); n != 0 {
		t.Errorf("%d bytes still charged after the answers", n)
	}
}

// slowLists is a service whose ListPartitions stays in the handler until
// release closes, counting the calls inside it.
type slowLists struct {
	*fake
	release      chan struct{}
	inside, most atomic.Int32
}

func (f *slowLists) ListPartitions(ctx context.Context) ([]*model.Partition, error) {
	n := f.inside.Add(1)
	for m := f.most.Load(); n > m && !f.most.CompareAndSwap(m, n); m = f.most.Load() {
	}
	<-f.release
	f.inside.Add(-1)
	return []*model.Partition{{Name: "p"}}, nil
}

// TestAUsersCallsAnsweringAreBounded: one user's calls that build an
// answer (a listing, held until written) run at most MaxUserCalls at once,
// whatever the number of connections; one past them waits the I/O
// timeout, then is answered "try again";
// a stream (sacct's) is not counted, and every count comes back.
func TestAUsersCallsAnsweringAreBounded(t *testing.T) {
	f := &slowLists{fake: newFake(), release: make(chan struct{})}
	sock, srv := serveServer(t, f, Limits{IO: 300 * time.Millisecond})
	uid := uint32(os.Getuid())
	req, _ := localwire.Encode(&localwire.Request{Method: "ListPartitions"})
	var conns []net.Conn
	for range MaxUserCalls + 4 {
		c := raw(t, sock)
		if err := localwire.WriteFrame(c, req); err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	waitUntil(t, "MaxUserCalls calls inside the service", func() bool { return f.inside.Load() == MaxUserCalls })
	// Each connection's answer, as it comes.
	answers := make(chan string, len(conns))
	for _, c := range conns {
		go func() {
			b, err := localwire.ReadFrame(c, localwire.MaxAnswer)
			var a localwire.Answer
			switch {
			case err != nil:
				answers <- "no answer: " + err.Error()
			case localwire.DecodeAnswer(b, &a) != nil:
				answers <- "undecodable answer"
			case a.Err != nil:
				answers <- a.Err.Msg
			default:
				answers <- "ok"
			}
		}()
	}
	// The four past the bound are answered "try again" while the others
	// are still inside.
	for range 4 {
		if got := <-answers; got != api.ErrTryAgain.Error() {
			t.Fatalf("a call past the bound answered %q, want %q", got, api.ErrTryAgain)
		}
	}
	if n := srv.mem.answering(uid); n != MaxUserCalls {
		t.Errorf("%d calls counted answering, want %d", n, MaxUserCalls)
	}
	// A stream is not counted: sacct's goes through meanwhile.
	cl := local.Dial(sock)
	defer cl.Close()
	if err := cl.AcctJobs(context.Background(), acct.Query{}, func([]*acct.Job) error { return nil }); err != nil {
		t.Errorf("a stream beside the user's calls at the bound: %v", err)
	}
	close(f.release)
	for range MaxUserCalls {
		if got := <-answers; got != "ok" {
			t.Errorf("a call within the bound answered %q", got)
		}
	}
	// The user's next call goes through once the others ended.
	cl2 := local.Dial(sock)
	defer cl2.Close()
	if _, err := cl2.ListPartitions(context.Background()); err != nil {
		t.Errorf("a call once the others ended: %v", err)
	}
	if m := f.most.Load(); m > MaxUserCalls {
		t.Errorf("%d calls of one user inside at once, bound %d", m, MaxUserCalls)
	}
	waitUntil(t, "the user's counts to come back", func() bool { return srv.mem.answering(uid) == 0 })
}

// TestCallBoundIsPerUser: one user at MaxUserCalls holds up only its own
// calls, not another user's nor an exempt one's.
func TestCallBoundIsPerUser(t *testing.T) {
	b := newBudget(1<<30, func(uid uint32) bool { return uid == 0 })
	soon := time.Now().Add(50 * time.Millisecond)
	for range MaxUserCalls {
		if !b.enter(1, soon) {
			t.Fatal("a call within the bound waited")
		}
	}
	if b.enter(1, soon) {
		t.Fatal("a call past the bound went in")
	}
	if !b.enter(2, soon) || !b.enter(0, soon) {
		t.Fatal("uid 1 at its bound held up uid 2 or root")
	}
	got := make(chan bool)
	go func() { got <- b.enter(1, time.Now().Add(10*time.Second)) }()
	b.leave(1)
	if !<-got || b.answering(1) != MaxUserCalls {
		t.Errorf("a waiter was not let in by the call that ended (answering %d)", b.answering(1))
	}
}
