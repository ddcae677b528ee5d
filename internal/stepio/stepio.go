// Package stepio is the framed stream between the tasks of a step on one
// node and the srun that launched them (or an sattach, or an sbcast): the
// agent dials the client's listening address, proves itself with the
// per-step key, and multiplexes every local task's stdout, stderr and exit
// status one way, and stdin, signals and terminal size the other. Every
// frame names the task (its global rank) it belongs to. Shared by the agent
// and the clients.
package stepio

import (
	"bufio"
	"crypto/subtle"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Frame types.
const (
	Stdout   byte = 1
	Stderr   byte = 2
	Exit     byte = 3 // payload "code signal [message]"
	Stdin    byte = 4
	StdinEOF byte = 5
	Signal   byte = 6 // payload: the signal number, decimal
	Winch    byte = 7 // payload "rows cols"
	// Data carries file content (sbcast); DataEnd ends it.
	Data    byte = 8
	DataEnd byte = 9
)

// AllTasks addresses every task of the node in a client→node frame.
const AllTasks = ^uint32(0)

const magic = "DROVER-IO 2"

// maxFrame bounds a frame so a confused peer cannot make us allocate much.
const maxFrame = 1 << 20

// Hello is what a node says when it connects: which job, step and node
// (its index in the step's layout) the connection carries.
type Hello struct {
	Job  uint32
	Step int32
	Node int
}

// Conn is one framed connection.
type Conn struct {
	c   net.Conn
	r   *bufio.Reader
	wmu sync.Mutex
}

// Dial connects to a client and sends the handshake.
func Dial(addr, key string, h Hello) (*Conn, error) {
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		return nil, err
	}
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true)
	}
	if _, err := fmt.Fprintf(c, "%s %d %d %d %s\n", magic, h.Job, h.Step, h.Node, key); err != nil {
		c.Close()
		return nil, err
	}
	return &Conn{c: c, r: bufio.NewReader(c)}, nil
}

// Accept reads the handshake of an incoming connection and checks the key.
func Accept(c net.Conn, key string) (*Conn, Hello, error) {
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	r := bufio.NewReader(c)
	// A hello is one short line; ReadSlice stops at the buffer's size
	// (4 KiB), so a peer that never sends a newline cannot make us buffer
	// more.
	b, err := r.ReadSlice('\n')
	if err != nil {
		return nil, Hello{}, err
	}
	line := string(b)
	_ = c.SetReadDeadline(time.Time{})
	rest, ok := strings.CutPrefix(line, magic+" ")
	f := strings.Fields(rest)
	if !ok || len(f) != 4 || subtle.ConstantTimeCompare([]byte(f[3]), []byte(key)) != 1 {
		return nil, Hello{}, errors.New("bad I/O handshake")
	}
	job, err1 := strconv.ParseUint(f[0], 10, 32)
	step, err2 := strconv.ParseInt(f[1], 10, 32)
	node, err3 := strconv.Atoi(f[2])
	if err := errors.Join(err1, err2, err3); err != nil || node < 0 {
		return nil, Hello{}, errors.New("bad I/O handshake")
	}
	return &Conn{c: c, r: r}, Hello{Job: uint32(job), Step: int32(step), Node: node}, nil
}

// SetWriteDeadline bounds the writes pending and to come: a peer that
// stopped reading makes them fail at t instead of blocking the writer.
func (c *Conn) SetWriteDeadline(t time.Time) error { return c.c.SetWriteDeadline(t) }

// SetReadDeadline bounds the reads pending and to come: Recv fails at t
// if no frame came.
func (c *Conn) SetReadDeadline(t time.Time) error { return c.c.SetReadDeadline(t) }

// Send writes one frame for task.
func (c *Conn) Send(t byte, task uint32, p []byte) error {
	var hdr [9]byte
	hdr[0] = t
	binary.BigEndian.PutUint32(hdr[1:], task)
	binary.BigEndian.PutUint32(hdr[5:], uint32(len(p)))
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if len(p) <= 4096 {
		// One write, so small frames do not cost two packets.
		var buf [9 + 4096]byte
		n := copy(buf[:], hdr[:])
		n += copy(buf[n:], p)
		_, err := c.c.Write(buf[:n])
		return err
	}
	if _, err := c.c.Write(hdr[:]); err != nil {
		return err
	}
	_, err := c.c.Write(p)
	return err
}

// Recv reads one frame.
func (c *Conn) Recv() (t byte, task uint32, p []byte, err error) {
	var hdr [9]byte
	if _, err := io.ReadFull(c.r, hdr[:]); err != nil {
		return 0, 0, nil, err
	}
	n := binary.BigEndian.Uint32(hdr[5:])
	if n > maxFrame {
		return 0, 0, nil, errors.New("oversized I/O frame")
	}
	p = make([]byte, n)
	_, err = io.ReadFull(c.r, p)
	return hdr[0], binary.BigEndian.Uint32(hdr[1:]), p, err
}

// Close closes the connection.
func (c *Conn) Close() error { return c.c.Close() }

// CloseWrite half-closes the connection after the last frame.
func (c *Conn) CloseWrite() error {
	if tc, ok := c.c.(interface{ CloseWrite() error }); ok {
		return tc.CloseWrite()
	}
	return nil
}

// Writer returns an io.Writer that sends frames of type t for task.
func (c *Conn) Writer(t byte, task uint32) io.Writer { return frameWriter{c, t, task} }

type frameWriter struct {
	c    *Conn
	t    byte
	task uint32
}

func (w frameWriter) Write(p []byte) (int, error) {
	for off := 0; off < len(p); off += maxFrame {
		end := min(off+maxFrame, len(p))
		if err := w.c.Send(w.t, w.task, p[off:end]); err != nil {
			return off, err
		}
	}
	return len(p), nil
}

// FormatExit encodes an exit frame payload.
func FormatExit(code, sig int, msg string) []byte {
	return []byte(fmt.Sprintf("%d %d %s", code, sig, msg))
}

// ParseExit decodes an exit frame payload.
func ParseExit(p []byte) (code, sig int, msg string) {
	f := strings.SplitN(string(p), " ", 3)
	if len(f) >= 2 {
		code, _ = strconv.Atoi(f[0])
		sig, _ = strconv.Atoi(f[1])
	}
	if len(f) == 3 {
		msg = f[2]
	}
	return
}
