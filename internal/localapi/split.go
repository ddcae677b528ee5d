package localapi

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"sync"
	"time"

	"github.com/drover-hpc/drover/internal/localwire"
)

// Split serves the local protocol's connections arriving on l with serve
// and returns a listener of the others (gRPC's) with their first bytes
// put back. A connection that does not send its first bytes within
// timeout is closed. Closing the returned listener closes l.
func Split(l net.Listener, timeout time.Duration, serve func(net.Conn)) net.Listener {
	s := &split{Listener: l, conns: make(chan net.Conn), done: make(chan struct{})}
	go s.loop(timeout, serve)
	return s
}

type split struct {
	net.Listener
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
	err   error // why Accept fails: set once, before done is closed
}

func (s *split) loop(timeout time.Duration, serve func(net.Conn)) {
	for {
		c, err := s.Listener.Accept()
		if err != nil {
			s.once.Do(func() { s.err = err; close(s.done) })
			return
		}
		// Each connection is told apart on its own goroutine: one that
		// says nothing must not hold up the others.
		go func() {
			var head [len(localwire.Magic)]byte
			// A command sends its preface and call in one write: one
			// read takes them all, where the magic, the rest of the
			// preface, the call's length and its body were a read each.
			br := bufio.NewReaderSize(c, readBuffer)
			_ = c.SetReadDeadline(time.Now().Add(timeout))
			if _, err := io.ReadFull(br, head[:]); err != nil {
				c.Close()
				return
			}
			_ = c.SetReadDeadline(time.Time{})
			if string(head[:]) == localwire.Magic {
				serve(&buffered{Conn: c, r: br})
				return
			}
			read, _ := br.Peek(br.Buffered())
			select {
			case s.conns <- &replayed{Conn: c, head: bytes.NewReader(append(head[:], read...))}:
			case <-s.done:
				c.Close()
			}
		}()
	}
}

func (s *split) Accept() (net.Conn, error) {
	select {
	case c := <-s.conns:
		return c, nil
	case <-s.done:
		return nil, s.err
	}
}

func (s *split) Close() error {
	err := s.Listener.Close()
	s.once.Do(func() { s.err = net.ErrClosed; close(s.done) })
	return err
}

// readBuffer is what a local connection reads at once: a submission's
// preface and call (a batch script and its environment) fit.
const readBuffer = 4 << 10

// buffered is a local connection read through its buffer.
type buffered struct {
	net.Conn
	r *bufio.Reader
}

func (b *buffered) Read(p []byte) (int, error) { return b.r.Read(p) }

// Unix is the socket underneath, for SO_PEERCRED.
func (b *buffered) Unix() *net.UnixConn { return unixOf(b.Conn) }

// replayed is a connection whose first bytes were read to tell its
// protocol; Read returns them again first.
type replayed struct {
	net.Conn
	mu   sync.Mutex
	head *bytes.Reader
}

func (r *replayed) Read(p []byte) (int, error) {
	r.mu.Lock()
	if r.head != nil && r.head.Len() > 0 {
		n, _ := r.head.Read(p)
		r.mu.Unlock()
		return n, nil
	}
	r.mu.Unlock()
	return r.Conn.Read(p)
}

// Unix is the socket underneath, for the gRPC credentials' SO_PEERCRED.
func (r *replayed) Unix() *net.UnixConn { return unixOf(r.Conn) }

// unixOf finds the Unix socket under a connection and the listeners'
// wrappers around it (the per-user cap's).
func unixOf(c net.Conn) *net.UnixConn {
	switch v := c.(type) {
	case *net.UnixConn:
		return v
	case interface{ Unix() *net.UnixConn }:
		return v.Unix()
	}
	return nil
}
