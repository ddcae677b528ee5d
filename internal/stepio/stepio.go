// Package stepio is the framed stream between a task on a node and the srun
// that launched it: the agent dials srun's listening address, proves itself
// with the per-job key, and multiplexes stdout, stderr and the exit status
// one way and stdin the other. Shared by the agent and srun.
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
)

const magic = "DROVER-IO 1"

// maxFrame bounds a frame so a confused peer cannot make us allocate much.
const maxFrame = 1 << 20

// Conn is one framed connection.
type Conn struct {
	c   net.Conn
	r   *bufio.Reader
	wmu sync.Mutex
}

// Dial connects to srun and sends the handshake.
func Dial(addr, key string, job uint32) (*Conn, error) {
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		return nil, err
	}
	if _, err := fmt.Fprintf(c, "%s %d %s\n", magic, job, key); err != nil {
		c.Close()
		return nil, err
	}
	return &Conn{c: c, r: bufio.NewReader(c)}, nil
}

// Accept reads the handshake of an incoming connection and checks the key.
func Accept(c net.Conn, key string) (*Conn, uint32, error) {
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	r := bufio.NewReader(c)
	line, err := r.ReadString('\n')
	if err != nil {
		return nil, 0, err
	}
	_ = c.SetReadDeadline(time.Time{})
	f := strings.Fields(strings.TrimPrefix(line, magic))
	if !strings.HasPrefix(line, magic) || len(f) != 2 || subtle.ConstantTimeCompare([]byte(f[1]), []byte(key)) != 1 {
		return nil, 0, errors.New("bad I/O handshake")
	}
	job, err := strconv.ParseUint(f[0], 10, 32)
	if err != nil {
		return nil, 0, err
	}
	return &Conn{c: c, r: r}, uint32(job), nil
}

// Send writes one frame.
func (c *Conn) Send(t byte, p []byte) error {
	var hdr [5]byte
	hdr[0] = t
	binary.BigEndian.PutUint32(hdr[1:], uint32(len(p)))
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if _, err := c.c.Write(hdr[:]); err != nil {
		return err
	}
	_, err := c.c.Write(p)
	return err
}

// Recv reads one frame.
func (c *Conn) Recv() (byte, []byte, error) {
	var hdr [5]byte
	if _, err := io.ReadFull(c.r, hdr[:]); err != nil {
		return 0, nil, err
	}
	n := binary.BigEndian.Uint32(hdr[1:])
	if n > maxFrame {
		return 0, nil, errors.New("oversized I/O frame")
	}
	p := make([]byte, n)
	_, err := io.ReadFull(c.r, p)
	return hdr[0], p, err
}

// Close closes the connection.
func (c *Conn) Close() error { return c.c.Close() }

// Writer returns an io.Writer that sends frames of type t.
func (c *Conn) Writer(t byte) io.Writer { return frameWriter{c, t} }

type frameWriter struct {
	c *Conn
	t byte
}

func (w frameWriter) Write(p []byte) (int, error) {
	for off := 0; off < len(p); off += maxFrame {
		end := min(off+maxFrame, len(p))
		if err := w.c.Send(w.t, p[off:end]); err != nil {
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
