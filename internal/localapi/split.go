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
			br := readers.Get().(*bufio.Reader)
			br.Reset(c)
			_ = c.SetReadDeadline(time.Now().Add(timeout))
			if _, err := io.ReadFull(br, head[:]); err != nil {
				c.Close()
				putReader(br)
				return
			}
			_ = c.SetReadDeadline(time.Time{})
			if string(head[:]) == localwire.Magic {
				b := &buffered{Conn: c, r: br}
				serve(b)
				c.Close() // wakes a read still waiting (ServeConn closed it already)
				putReader(b.release())
				return
			}
			read, _ := br.Peek(br.Buffered())
			first := bytes.NewReader(append(head[:], read...)) // a copy
			putReader(br)
			select {
			case s.conns <- &replayed{Conn: c, head: first}:
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

// The connections' read buffers are reused: one per connection, a
// command's whole exchange, was 4 KiB of garbage per submission (13% of
// a held submission's), and the collector's work grows with the queue.
var readers = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, readBuffer) }}

func putReader(br *bufio.Reader) {
	br.Reset(nil)
	readers.Put(br)
}

// buffered is a local connection read through its buffer.
type buffered struct {
	net.Conn
	mu sync.Mutex // held by a Read; release takes the buffer under it
	r  *bufio.Reader
}

func (b *buffered) Read(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.r == nil {
		return 0, net.ErrClosed
	}
	return b.r.Read(p)
}

// release takes the buffer back once the connection is closed. A read
// still running (a stream's watch for the client leaving, calls.go)
// returns with the close; release waits for it, and a later read finds
// no buffer, so nothing reads a buffer that went back to the pool.
func (b *buffered) release() *bufio.Reader {
	b.mu.Lock()
	defer b.mu.Unlock()
	r := b.r
	b.r = nil
	return r
}

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
