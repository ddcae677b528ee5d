package grpcapi

import (
	"context"
	"net"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/drover-hpc/drover/internal/api"
	"github.com/drover-hpc/drover/internal/auth/grpcauth"
)

// gRPC marshals a call's whole answer and queues it on the connection,
// where it stays until the client reads it: a listing of the queue is
// megabytes, and a local user whose connections ask and never read (the
// HTTP/2 flow-control window is the reader's to open) held as many as
// they asked for. So what a local user's answers hold until written to
// their connections is bounded (root and SlurmUser exempt): past
// DefaultUserAnswerBytes a new call waits, at most MessageTimeout, for
// the user's earlier answers to go out, then is refused with "try again".
// A user with less held may always make one call, whatever its answer's
// size. The local protocol bounds the same (internal/localapi: an answer
// is charged until the client read it).

// DefaultUserAnswerBytes is what one local user's answers may hold
// before their new calls wait.
const DefaultUserAnswerBytes = 64 << 20

// userAnswers counts, per local uid, the answer bytes marshalled but not
// yet written to the user's connections.
type userAnswers struct {
	max    int64
	limit  time.Duration
	exempt func(uid uint32) bool

	mu       sync.Mutex
	held     map[uint32]int64
	building map[uint32]int // calls past wait, their answer not charged yet
	// freed is closed (and replaced) when some user's answers went out.
	freed chan struct{}
}

func newUserAnswers(max int64, limit time.Duration, exempt func(uint32) bool) *userAnswers {
	if max <= 0 {
		return nil
	}
	if limit <= 0 {
		limit = 10 * time.Second
	}
	return &userAnswers{max: max, limit: limit, exempt: exempt, held: map[uint32]int64{}, building: map[uint32]int{},
		freed: make(chan struct{})}
}

// conn is the counted connection of a call the bound applies to (a
// local one, not exempt), or nil.
func (u *userAnswers) conn(ctx context.Context) *counted {
	if u == nil {
		return nil
	}
	p, ok := peer.FromContext(ctx)
	if !ok {
		return nil
	}
	info, ok := p.AuthInfo.(grpcauth.PeerInfo)
	if !ok {
		return nil
	}
	c, _ := info.Conn.(*counted)
	return c
}

// maxBuilding is how many calls of one user may build their answers at
// once: without it a burst of calls would all pass wait before any
// answer was charged.
const maxBuilding = 8

// wait returns once uid's answers hold less than the bound and fewer than
// maxBuilding of its calls are building theirs, or an error once that did
// not come within the limit. A nil error must be followed by charge.
func (u *userAnswers) wait(ctx context.Context, c *counted) error {
	uid := c.uid
	var timer *time.Timer
	for {
		u.mu.Lock()
		if u.held[uid] < u.max && u.building[uid] < maxBuilding {
			u.building[uid]++
			u.mu.Unlock()
			if timer != nil {
				timer.Stop()
			}
			return nil
		}
		freed := u.freed
		u.mu.Unlock()
		if timer == nil {
			timer = time.NewTimer(u.limit)
			defer timer.Stop()
		}
		select {
		case <-freed:
		case <-timer.C:
			return status.Error(codes.Unavailable, api.ErrTryAgain.Error())
		case <-ctx.Done():
			return status.FromContextError(ctx.Err()).Err()
		}
	}
}

// charge counts an answer about to be written to c (nil: the call
// failed), and ends the call's building.
func (u *userAnswers) charge(c *counted, resp any) {
	var n int64
	if m, ok := resp.(proto.Message); ok && m != nil {
		n = int64(proto.Size(m))
	}
	u.mu.Lock()
	if u.building[c.uid]--; u.building[c.uid] <= 0 {
		delete(u.building, c.uid)
	}
	if n > 0 {
		c.owed += n
		u.held[c.uid] += n
	}
	close(u.freed)
	u.freed = make(chan struct{})
	u.mu.Unlock()
}

// wrote gives back up to n bytes that c owes: written to it, or all it
// owes once it closed. Frames and headers count as answer bytes: they
// only give back a little early.
func (u *userAnswers) wrote(c *counted, n int64, all bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if all || n > c.owed {
		n = c.owed
	}
	if n <= 0 {
		return
	}
	c.owed -= n
	h := u.held[c.uid] - n
	if h > 0 {
		u.held[c.uid] = h
	} else {
		delete(u.held, c.uid)
	}
	if h < u.max && h+n >= u.max {
		close(u.freed)
		u.freed = make(chan struct{})
	}
}

// wrap counts what is written to a local connection of uid.
func (u *userAnswers) wrap(c net.Conn, uid uint32) net.Conn {
	if u.exempt != nil && u.exempt(uid) {
		return c
	}
	return &counted{Conn: c, uid: uid, u: u}
}

// counted is a local connection whose writes give back the answer bytes
// charged to it.
type counted struct {
	net.Conn
	uid  uint32
	u    *userAnswers
	owed int64 // under u.mu
}

func (c *counted) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	if n > 0 {
		c.u.wrote(c, int64(n), false)
	}
	return n, err
}

// Close gives back what was never written.
func (c *counted) Close() error {
	c.u.wrote(c, 0, true)
	return c.Conn.Close()
}
