package grpcapi

import (
	"log/slog"
	"net"
	"sync"
	"time"

	"golang.org/x/sys/unix"
	"google.golang.org/grpc"
	"google.golang.org/grpc/keepalive"

	"github.com/drover-hpc/drover/internal/auth/grpcauth"
)

// Limits bound what one client can hold of the controller.
type Limits struct {
	// Handshake bounds a new connection's TLS handshake and HTTP/2
	// preface (Slurm's MessageTimeout); a client that connects and says
	// nothing is dropped after it.
	Handshake time.Duration
	// Idle closes a connection with no call in flight for this long.
	Idle time.Duration
	// PerUser caps the local-socket connections of one uid (root and the
	// SlurmUser are exempt); 0 = no cap.
	PerUser int
	// Probation closes the TCP connections (those of its Listener) that
	// prove no caller in time (probation.go); nil: none.
	Probation *grpcauth.Probation
	// UserRequests bounds the calls of one local uid still reading their
	// request (requests.go); 0: no bound. Exempt names the uids it does
	// not count (root, SlurmUser).
	UserRequests int
	Exempt       func(uid uint32) bool
	// UserAnswers bounds the answer bytes of one local uid not yet
	// written to its connections (answers.go); 0: no bound.
	UserAnswers int64
}

// ServerOptions are the gRPC options that enforce l.
func (l Limits) ServerOptions() []grpc.ServerOption {
	opts := []grpc.ServerOption{
		// Clients and agents ping to keep long watches alive; no more
		// often than this, and never a reason to drop them.
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: 10 * time.Second, PermitWithoutStream: true}),
	}
	if l.Handshake > 0 {
		opts = append(opts, grpc.ConnectionTimeout(l.Handshake))
	}
	if u := newUserRequests(l.UserRequests, l.Handshake, l.Exempt); u != nil {
		opts = append(opts, grpc.InTapHandle(u.tap))
	}
	ka := keepalive.ServerParameters{Time: time.Minute, Timeout: 20 * time.Second}
	if l.Idle > 0 {
		ka.MaxConnectionIdle = l.Idle
	}
	return append(opts, grpc.KeepaliveParams(ka))
}

// LimitPerUser wraps a Unix-socket listener so that no uid but the exempt
// ones holds more than max connections: past it, new ones are closed at
// once (the kernel names the peer, so the check costs one getsockopt).
// Without it one user's idle connections could take every descriptor.
func LimitPerUser(l net.Listener, max int, exempt func(uid uint32) bool, log *slog.Logger) net.Listener {
	if max <= 0 {
		return l
	}
	return &userLimited{Listener: l, max: max, exempt: exempt, log: log, open: map[uint32]int{}, warned: map[uint32]time.Time{}}
}

type userLimited struct {
	net.Listener
	max    int
	exempt func(uint32) bool
	log    *slog.Logger

	mu     sync.Mutex
	open   map[uint32]int
	warned map[uint32]time.Time
}

func (u *userLimited) Accept() (net.Conn, error) {
	for {
		c, err := u.Listener.Accept()
		if err != nil {
			return nil, err
		}
		uc, ok := c.(*net.UnixConn)
		if !ok {
			return c, nil
		}
		uid, ok := peerUID(uc)
		if !ok || u.exempt(uid) {
			return c, nil
		}
		u.mu.Lock()
		if u.open[uid] >= u.max {
			now := time.Now()
			if now.Sub(u.warned[uid]) > time.Minute {
				u.warned[uid] = now
				u.log.Warn("connection refused: per-user connection limit reached", "uid", uid, "limit", u.max)
			}
			u.mu.Unlock()
			c.Close()
			continue
		}
		u.open[uid]++
		u.mu.Unlock()
		return &countedConn{UnixConn: uc, release: func() { u.release(uid) }}, nil
	}
}

func (u *userLimited) release(uid uint32) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.open[uid]--; u.open[uid] <= 0 {
		delete(u.open, uid)
	}
}

// countedConn gives its place back once, on the first Close.
type countedConn struct {
	*net.UnixConn
	once    sync.Once
	release func()
}

// Unix is the socket underneath, for the credentials handshake.
func (c *countedConn) Unix() *net.UnixConn { return c.UnixConn }

func (c *countedConn) Close() error {
	c.once.Do(c.release)
	return c.UnixConn.Close()
}

func peerUID(c *net.UnixConn) (uint32, bool) {
	raw, err := c.SyscallConn()
	if err != nil {
		return 0, false
	}
	var cred *unix.Ucred
	var serr error
	if err := raw.Control(func(fd uintptr) {
		cred, serr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil || serr != nil {
		return 0, false
	}
	return cred.Uid, true
}
