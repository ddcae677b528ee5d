package localapi

import (
	"sync"
	"time"

	"github.com/drover-hpc/drover/internal/localwire"
)

// requestCost is the most memory a request frame of n bytes holds in the
// controller while it is served: its bytes and what decoding them may
// allocate.
func requestCost(n int) int64 { return int64(n) + int64(localwire.RequestAlloc(n)) }

// DefaultPerUserMemory is what one user's requests in flight may hold at
// once (about 1.1 GiB): one request of the largest size and room for the
// user's other commands beside it. The per-user connection cap alone
// would let a user hold 256 of the largest (hundreds of GiB).
var DefaultPerUserMemory = requestCost(localwire.MaxRequest) + 16<<20

// budget is each user's memory in requests in flight: a request waits
// for its share before its bytes are read, so one user's requests cannot
// take the controller's memory from the others.
type budget struct {
	max    int64
	exempt func(uid uint32) bool

	mu   sync.Mutex
	used map[uint32]int64
	// calls: each user's calls between their start and their answer's
	// end (answering), streams aside.
	calls map[uint32]int
	// freed is closed (and replaced) whenever some share comes back.
	freed chan struct{}
}

func newBudget(max int64, exempt func(uint32) bool) *budget {
	return &budget{max: max, exempt: exempt, used: map[uint32]int64{}, calls: map[uint32]int{}, freed: make(chan struct{})}
}

// take waits until uid may hold n more bytes, at most until the
// deadline; false: it may not. A user with nothing in flight may always
// take one request's share, whatever its size.
func (b *budget) take(uid uint32, n int64, deadline time.Time) bool {
	if b.exempt != nil && b.exempt(uid) {
		return true
	}
	return b.wait(deadline, func() bool {
		if u := b.used[uid]; u == 0 || u+n <= b.max {
			b.used[uid] = u + n
			return true
		}
		return false
	})
}

// wait calls try with b.mu held until it says yes (true), again whenever
// something comes back, at most until the deadline (false).
func (b *budget) wait(deadline time.Time, try func() bool) bool {
	var timer *time.Timer
	for {
		b.mu.Lock()
		ok := try()
		freed := b.freed
		b.mu.Unlock()
		if ok {
			if timer != nil {
				timer.Stop()
			}
			return true
		}
		if timer == nil {
			timer = time.NewTimer(time.Until(deadline))
		}
		select {
		case <-freed:
		case <-timer.C:
			return false
		}
	}
}

// give returns what take took.
func (b *budget) give(uid uint32, n int64) {
	if b.exempt != nil && b.exempt(uid) {
		return
	}
	b.mu.Lock()
	if b.used[uid] -= n; b.used[uid] <= 0 {
		delete(b.used, uid)
	}
	close(b.freed)
	b.freed = make(chan struct{})
	b.mu.Unlock()
}

// MaxUserCalls is how many calls of one user (streams aside) may be
// answering at once, as over gRPC: an answer (a listing: megabytes) is
// built before it is charged to the user's bound (it waits there, up to
// the I/O timeout, holding its memory), so without this count each of a
// user's 256 connections could hold one that way.
const MaxUserCalls = 8

// enter waits until uid has fewer than MaxUserCalls calls answering, at
// most until the deadline, and counts one more; false: none came free.
// A true must be followed by leave.
func (b *budget) enter(uid uint32, deadline time.Time) bool {
	if b.exempt != nil && b.exempt(uid) {
		return true
	}
	return b.wait(deadline, func() bool {
		if b.calls[uid] < MaxUserCalls {
			b.calls[uid]++
			return true
		}
		return false
	})
}

// leave ends a call enter counted.
func (b *budget) leave(uid uint32) {
	if b.exempt != nil && b.exempt(uid) {
		return
	}
	b.mu.Lock()
	if b.calls[uid]--; b.calls[uid] <= 0 {
		delete(b.calls, uid)
	}
	close(b.freed)
	b.freed = make(chan struct{})
	b.mu.Unlock()
}

// answering is how many calls of uid enter counted (tests).
func (b *budget) answering(uid uint32) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.calls[uid]
}

// inFlight is what uid holds now (tests).
func (b *budget) inFlight(uid uint32) int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used[uid]
}
