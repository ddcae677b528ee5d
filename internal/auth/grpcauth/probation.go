package grpcauth

import (
	"context"
	"net"
	"sync"
	"time"

	"google.golang.org/grpc/peer"
)

// A TCP connection is on probation until one of its calls proves who
// calls (a node certificate, the cluster token, or a join that a join
// token accepted; at the dbd, its key): one that proves nothing within
// the limit is closed. Without it anyone who reaches the port (a local
// user past the Unix socket's per-user cap, or any machine) could hold
// connections for the whole idle timeout (the dbd had none), about 50 KiB
// of the daemon's memory each: 3,000 cost the controller 146 MiB. A
// proven connection is kept as before; agents, joins, remote commands and
// controllers make their first call at once.

// Probation tracks the TCP connections that have not proven themselves.
type Probation struct {
	limit time.Duration
	mu    sync.Mutex
	conns map[string]*probationConn // by remote address
}

// NewProbation closes connections that prove nothing within limit; a
// zero limit (or a nil *Probation) bounds nothing.
func NewProbation(limit time.Duration) *Probation {
	return &Probation{limit: limit, conns: map[string]*probationConn{}}
}

// Listener puts l's connections on probation.
func (p *Probation) Listener(l net.Listener) net.Listener {
	if p == nil || p.limit <= 0 {
		return l
	}
	return &probationListener{Listener: l, p: p}
}

// Proven takes the connection of a call that proved its caller off
// probation.
func (p *Probation) Proven(ctx context.Context) {
	if p == nil {
		return
	}
	pr, ok := peer.FromContext(ctx)
	if !ok || pr.Addr == nil {
		return
	}
	key := pr.Addr.String()
	p.mu.Lock()
	c := p.conns[key]
	delete(p.conns, key)
	p.mu.Unlock()
	if c != nil {
		c.timer.Stop()
	}
}

type probationListener struct {
	net.Listener
	p *Probation
}

func (l *probationListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	pc := &probationConn{Conn: c, p: l.p, key: c.RemoteAddr().String()}
	l.p.mu.Lock()
	l.p.conns[pc.key] = pc
	l.p.mu.Unlock()
	pc.timer = time.AfterFunc(l.p.limit, func() {
		l.p.mu.Lock()
		still := l.p.conns[pc.key] == pc
		if still {
			delete(l.p.conns, pc.key)
		}
		l.p.mu.Unlock()
		if still {
			_ = pc.Conn.Close()
		}
	})
	return pc, nil
}

// probationConn leaves the table when it closes.
type probationConn struct {
	net.Conn
	p     *Probation
	key   string
	timer *time.Timer
	once  sync.Once
}

func (c *probationConn) Close() error {
	c.once.Do(func() {
		c.timer.Stop()
		c.p.mu.Lock()
		if c.p.conns[c.key] == c {
			delete(c.p.conns, c.key)
		}
		c.p.mu.Unlock()
	})
	return c.Conn.Close()
}
