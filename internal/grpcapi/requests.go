package grpcapi

import (
	"context"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/tap"

	"github.com/drover-hpc/drover/internal/api"
	"github.com/drover-hpc/drover/internal/auth/grpcauth"
)

// gRPC reads a call's whole request message into memory before any
// handler or interceptor sees it, up to the largest message it accepts
// (64 MiB), allocated as soon as the message's length prefix arrives. The
// per-user connection cap let one local user have as many such requests
// in flight as streams over 256 connections: 32 of 60 MiB took the
// controller to 5.5 GiB. So a local user (root and SlurmUser exempt) has
// at most DefaultUserRequests calls whose request is still being read;
// past them a call is refused at once with "try again" (sbatch waits and
// retries; the local protocol's commands wait likewise), and a request
// not read within the limit ends its call, so a stalled one gives its
// place back. About 1 GiB per user at most, as the local protocol's
// budget (internal/localapi).

// DefaultUserRequests is how many calls of one local user may be reading
// their request at once.
const DefaultUserRequests = 8

// userRequests counts, per local uid, the calls whose request has not
// been read yet.
type userRequests struct {
	per    int
	limit  time.Duration
	exempt func(uid uint32) bool

	mu   sync.Mutex
	used map[uint32]int
}

func newUserRequests(per int, limit time.Duration, exempt func(uint32) bool) *userRequests {
	if per <= 0 {
		return nil
	}
	if limit <= 0 {
		limit = 10 * time.Second // Slurm's MessageTimeout default
	}
	return &userRequests{per: per, limit: limit, exempt: exempt, used: map[uint32]int{}}
}

type requestSlotKey struct{}

// requestSlot is one call's place; given back once its request is read,
// or its call ends.
type requestSlot struct {
	once    sync.Once
	timer   *time.Timer
	release func()
}

func (s *requestSlot) done() {
	s.once.Do(func() {
		if s.timer != nil {
			s.timer.Stop()
		}
		s.release()
	})
}

// tap runs when a call's headers arrive (the transport's reader: it must
// not block), before its request is read.
func (u *userRequests) tap(ctx context.Context, _ *tap.Info) (context.Context, error) {
	p, ok := peer.FromContext(ctx)
	if !ok {
		return ctx, nil
	}
	info, ok := p.AuthInfo.(grpcauth.PeerInfo)
	if !ok || !info.Local || (u.exempt != nil && u.exempt(info.UID)) {
		return ctx, nil
	}
	uid := info.UID
	u.mu.Lock()
	if u.used[uid] >= u.per {
		u.mu.Unlock()
		return nil, status.Error(codes.Unavailable, api.ErrTryAgain.Error())
	}
	u.used[uid]++
	u.mu.Unlock()
	ctx, cancel := context.WithCancel(ctx)
	s := &requestSlot{release: func() {
		u.mu.Lock()
		if u.used[uid]--; u.used[uid] <= 0 {
			delete(u.used, uid)
		}
		u.mu.Unlock()
	}}
	s.timer = time.AfterFunc(u.limit, cancel) // a stalled request ends its call
	context.AfterFunc(ctx, s.done)
	return context.WithValue(ctx, requestSlotKey{}, s), nil
}

// requestRead gives back the place of ctx's call: its request is in.
func requestRead(ctx context.Context) {
	if s, ok := ctx.Value(requestSlotKey{}).(*requestSlot); ok {
		s.done()
	}
}

// firstRecv is a server stream that gives its call's place back once its
// first message is read (a watch's request: the stream may last long).
type firstRecv struct {
	grpc.ServerStream
	once sync.Once
}

func (f *firstRecv) RecvMsg(m any) error {
	err := f.ServerStream.RecvMsg(m)
	f.once.Do(func() { requestRead(f.ServerStream.Context()) })
	return err
}
