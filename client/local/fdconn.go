package local

import (
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// fdConn is a connection to the controller's socket on a plain blocking
// descriptor. A command makes one or two calls and exits: net's
// connection would start the runtime's poller for them (an epoll
// instance, an eventfd, a thread parked in epoll_wait to hand the answer
// over) and its dial path resolves the address and asks the kernel for
// both ends' names; here a call is socket, connect, send, poll, recv.
// Deadlines are poll(2)'s timeout, computed before each wait; a deadline
// in the past (a cancelled context) shuts the socket down, which wakes
// a wait in progress.
type fdConn struct {
	mu       sync.Mutex
	fd       int // -1 once closed
	deadline time.Time
	shut     bool // shut down by a past deadline
	buf      []byte
	r, w     int // buf[r:w] was received and not yet read
}

var _ net.Conn = (*fdConn)(nil)

// dialFD connects to the Unix socket at path, waiting at most until
// deadline (none if zero) while the controller's backlog is full, and
// no longer once done is closed.
func dialFD(path string, deadline time.Time, done <-chan struct{}) (*fdConn, error) {
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, os.NewSyscallError("socket", err)
	}
	for {
		if !deadline.IsZero() || done != nil {
			// A blocking connect waits for room in the backlog at most
			// SO_SNDTIMEO (the sends never block: MSG_DONTWAIT); in
			// slices where it can be cancelled, so that a cancel is
			// seen while a controller that stopped accepting keeps it
			// waiting (then EAGAIN: tried again).
			wait := time.Duration(1<<63 - 1)
			if !deadline.IsZero() {
				wait = max(time.Until(deadline), time.Millisecond)
			}
			if done != nil {
				wait = min(wait, connectSlice)
			}
			tv := syscall.NsecToTimeval(wait.Nanoseconds())
			_ = syscall.SetsockoptTimeval(fd, syscall.SOL_SOCKET, syscall.SO_SNDTIMEO, &tv)
		}
		err = syscall.Connect(fd, &syscall.SockaddrUnix{Name: path})
		if err == syscall.EINTR {
			continue
		}
		if err == syscall.EAGAIN && (deadline.IsZero() || time.Now().Before(deadline)) && !closed(done) {
			continue
		}
		break
	}
	if err != nil {
		syscall.Close(fd)
		return nil, &net.OpError{Op: "dial", Net: "unix", Addr: &net.UnixAddr{Name: path, Net: "unix"}, Err: os.NewSyscallError("connect", err)}
	}
	return &fdConn{fd: fd}, nil
}

// connectSlice is how long a connect that can be cancelled waits at a
// time for room in the controller's backlog.
const connectSlice = 250 * time.Millisecond

func closed(done <-chan struct{}) bool {
	select {
	case <-done:
		return true
	default:
		return false
	}
}

// wait polls for events until the deadline; it returns the descriptor
// to use, or the error that ends the operation.
func (c *fdConn) wait(events int16) (int, error) {
	c.mu.Lock()
	fd, dl, shut := c.fd, c.deadline, c.shut
	c.mu.Unlock()
	switch {
	case fd < 0:
		return -1, net.ErrClosed
	case shut:
		return -1, os.ErrDeadlineExceeded
	}
	for {
		ms := -1
		if !dl.IsZero() {
			d := time.Until(dl)
			if d <= 0 {
				return -1, os.ErrDeadlineExceeded
			}
			ms = int((d + time.Millisecond - 1) / time.Millisecond)
		}
		fds := [1]unix.PollFd{{Fd: int32(fd), Events: events}}
		n, err := unix.Poll(fds[:], ms)
		if err == syscall.EINTR || (err == nil && n == 0) {
			continue // a signal, or the timeout: the deadline is checked again
		}
		if err != nil {
			return -1, os.NewSyscallError("poll", err)
		}
		c.mu.Lock()
		shut = c.shut
		c.mu.Unlock()
		if shut {
			return -1, os.ErrDeadlineExceeded
		}
		return fd, nil
	}
}

func (c *fdConn) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	if c.r < c.w {
		n := copy(b, c.buf[c.r:c.w])
		c.r += n
		return n, nil
	}
	// Small reads (a frame's 4-byte header) go through a buffer, so that
	// a short answer is one recv, not two. They wait first: an answer's
	// start is rarely there yet. A large read (a listing's body) tries
	// first: its bytes are usually arriving.
	dst, buffered := b, len(b) < 512
	var fd int
	var err error
	if buffered {
		if c.buf == nil {
			c.buf = make([]byte, 4096)
		}
		dst = c.buf
		fd, err = c.wait(unix.POLLIN)
	} else {
		fd, err = c.descriptor()
	}
	if err != nil {
		return 0, err
	}
	for {
		n, _, err := unix.Recvfrom(fd, dst, unix.MSG_DONTWAIT)
		if err == nil {
			raceAcquireIO(fd)
		}
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN:
			// Woken without data (a spurious wake-up): wait again.
			if fd, err = c.wait(unix.POLLIN); err != nil {
				return 0, err
			}
			continue
		case err != nil:
			return 0, os.NewSyscallError("recvfrom", err)
		case n == 0:
			if c.isShut() {
				return 0, os.ErrDeadlineExceeded
			}
			return 0, io.EOF
		}
		if !buffered {
			return n, nil
		}
		c.r, c.w = 0, n
		k := copy(b, c.buf[:n])
		c.r = k
		return k, nil
	}
}

// Write sends b whole. It waits only when the socket's buffer is full: a
// call's request usually fits at once.
func (c *fdConn) Write(b []byte) (int, error) {
	done := 0
	fd, err := c.descriptor()
	for err == nil && done < len(b) {
		raceReleaseIO(fd)
		// MSG_NOSIGNAL: a controller that closed gives EPIPE, not SIGPIPE.
		n, serr := unix.SendmsgN(fd, b[done:], nil, nil, unix.MSG_DONTWAIT|unix.MSG_NOSIGNAL)
		switch {
		case serr == syscall.EINTR:
		case serr == syscall.EAGAIN:
			fd, err = c.wait(unix.POLLOUT)
		case serr != nil:
			err = os.NewSyscallError("sendmsg", serr)
		default:
			done += n
		}
	}
	return done, err
}

// descriptor returns the descriptor for an operation that does not
// wait, or the error that ends it.
func (c *fdConn) descriptor() (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.fd < 0:
		return -1, net.ErrClosed
	case c.shut:
		return -1, os.ErrDeadlineExceeded
	}
	return c.fd, nil
}

func (c *fdConn) isShut() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.shut
}

func (c *fdConn) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fd < 0 {
		return net.ErrClosed
	}
	err := syscall.Close(c.fd)
	c.fd = -1
	return err
}

// SetDeadline sets the time after which waits fail with
// os.ErrDeadlineExceeded; one already past shuts the socket down (the
// connection is then not reusable), so that a wait in progress on
// another goroutine ends now.
func (c *fdConn) SetDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fd < 0 {
		return net.ErrClosed
	}
	c.deadline = t
	if !t.IsZero() && !time.Now().Before(t) && !c.shut {
		c.shut = true
		_ = syscall.Shutdown(c.fd, syscall.SHUT_RDWR)
	}
	return nil
}

func (c *fdConn) SetReadDeadline(t time.Time) error  { return c.SetDeadline(t) }
func (c *fdConn) SetWriteDeadline(t time.Time) error { return c.SetDeadline(t) }
func (c *fdConn) LocalAddr() net.Addr                { return &net.UnixAddr{Net: "unix"} }
func (c *fdConn) RemoteAddr() net.Addr               { return &net.UnixAddr{Net: "unix"} }
