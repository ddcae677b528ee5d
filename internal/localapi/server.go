package localapi

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/drover-hpc/drover/internal/api"
	"github.com/drover-hpc/drover/internal/auth"
	"github.com/drover-hpc/drover/internal/localwire"
	"github.com/drover-hpc/drover/internal/rpcstats"
)

// Backend is what the local socket serves: the one API and join tokens.
type Backend interface {
	api.Service
	api.JoinTokens
}

// Limits bound what one connection can hold of the controller.
type Limits struct {
	// IO bounds the arrival of each message once it has begun, the
	// client's first bytes, and the writing of each answer frame (Slurm's
	// MessageTimeout); 0 means 10 s.
	IO time.Duration
	// Idle closes a connection with no call in flight for this long; 0
	// means 5 minutes.
	Idle time.Duration
	// PerUserMemory bounds the memory one user's calls in flight hold:
	// their request frames and what decoding them allocates (at most),
	// and their answers larger than 64 KiB until written. A request past
	// it waits up to IO for others to end, then is refused with
	// api.ErrTryAgain; an answer past it, its connection is closed.
	// 0 means DefaultPerUserMemory.
	PerUserMemory int64
	// Exempt names the users without that bound (root, SlurmUser).
	Exempt func(uid uint32) bool
}

// Server answers the local protocol.
type Server struct {
	svc   Backend
	users auth.Users
	lim   Limits
	stats *rpcstats.Stats
	mem   *budget
	log   *slog.Logger
	ctx   context.Context
	lists listCache // the last whole listing's job records
}

// New returns a server of svc whose calls are counted in stats (shared
// with the gRPC adapter; nil: its own). Calls' contexts derive from ctx.
func New(ctx context.Context, svc Backend, lim Limits, stats *rpcstats.Stats, log *slog.Logger) *Server {
	if lim.IO <= 0 {
		lim.IO = 10 * time.Second
	}
	if lim.Idle <= 0 {
		lim.Idle = 5 * time.Minute
	}
	if lim.PerUserMemory <= 0 {
		lim.PerUserMemory = DefaultPerUserMemory
	}
	if stats == nil {
		stats = rpcstats.New()
	}
	return &Server{svc: svc, lim: lim, stats: stats, mem: newBudget(lim.PerUserMemory, lim.Exempt), log: log, ctx: ctx}
}

// Timeout is how long a new connection may take to send its first bytes.
func (s *Server) Timeout() time.Duration { return s.lim.IO }

// ServeConn answers the calls of one connection whose Magic was read,
// then closes it. The caller is who the kernel says is at the other end
// of the socket; a connection that is no Unix socket is refused.
func (s *Server) ServeConn(c net.Conn) {
	defer c.Close()
	id, err := s.peer(c)
	if err != nil {
		s.refuse(c, err)
		return
	}
	// The rest of the preface: the version and the types' fingerprint.
	var pre [localwire.PrefaceLen - len(localwire.Magic)]byte
	_ = c.SetReadDeadline(time.Now().Add(s.lim.IO))
	if _, err := io.ReadFull(c, pre[:]); err != nil {
		return
	}
	if pre[0] != localwire.Version || binary.LittleEndian.Uint64(pre[1:]) != localwire.Fingerprint {
		s.refuse(c, fmt.Errorf("%w (local protocol %d/%x, the controller's %d/%x); the commands use gRPC instead",
			localwire.ErrOtherBuild, pre[0], binary.LittleEndian.Uint64(pre[1:]), localwire.Version, localwire.Fingerprint))
		return
	}
	ctx := api.WithIdentity(s.ctx, id)
	// Answers are charged to the caller's memory bound too (answer).
	c = &userConn{Conn: c, uid: id.UID}
	for {
		// Waiting for the next call may last Idle; once its first byte
		// is here, the rest must follow within IO.
		_ = c.SetReadDeadline(time.Now().Add(s.lim.Idle))
		n, err := readHeader(c, s.lim.IO)
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, os.ErrDeadlineExceeded) && !errors.Is(err, net.ErrClosed) {
				s.refuse(c, err)
			}
			return
		}
		if !s.serveOne(ctx, c, id, n) {
			return
		}
	}
}

// serveOne reads a request of n bytes and serves it, within the
// caller's memory budget; false ends the connection.
func (s *Server) serveOne(ctx context.Context, c net.Conn, id *api.Identity, n int) bool {
	cost := requestCost(n)
	if !s.mem.take(id.UID, cost, time.Now().Add(s.lim.IO)) {
		s.log.Warn("local request refused: the user's requests in flight hold their memory bound",
			"uid", id.UID, "bytes", n, "bound", s.lim.PerUserMemory)
		s.refuse(c, api.ErrTryAgain)
		return false
	}
	defer s.mem.give(id.UID, cost)
	_ = c.SetReadDeadline(time.Now().Add(s.lim.IO))
	var b []byte
	var err error
	pooled := n <= pooledFrame
	if pooled {
		// Decode copies what it reads (strings, bytes): the frame is
		// free again once the request is decoded. Allocating each
		// (a submission's script and environment) was 7% of a held
		// submission's garbage, and each collection marks the queue.
		fb := frames.Get().(*[]byte)
		defer frames.Put(fb)
		b = (*fb)[:n]
		_, err = io.ReadFull(c, b)
	} else {
		b, err = localwire.ReadFrameBody(c, n)
	}
	if err != nil {
		return false
	}
	var req localwire.Request
	if err := localwire.Decode(b, &req); err != nil {
		s.refuse(c, err)
		return false
	}
	if pooled {
		clear(b) // nothing reads it any more; no request's bytes linger in the pool
	}
	_ = c.SetReadDeadline(time.Time{})
	return s.call(ctx, c, id, &req)
}

// pooledFrame is the largest request read into a reused buffer.
const pooledFrame = 16 << 10

var frames = sync.Pool{New: func() any { b := make([]byte, pooledFrame); return &b }}

// readHeader reads a request frame's length: the wait for its first byte
// is bounded by the deadline already set, the rest by limit.
func readHeader(c net.Conn, limit time.Duration) (int, error) {
	var first [1]byte
	if _, err := c.Read(first[:]); err != nil {
		return 0, err
	}
	_ = c.SetReadDeadline(time.Now().Add(limit))
	return localwire.ReadFrameHeader(&prefixed{first: first[:], r: c}, localwire.MaxRequest)
}

type prefixed struct {
	first []byte
	r     io.Reader
}

func (p *prefixed) Read(b []byte) (int, error) {
	if len(p.first) > 0 {
		n := copy(b, p.first)
		p.first = p.first[n:]
		return n, nil
	}
	return p.r.Read(b)
}

// refuse answers a connection that cannot go on with the reason, as
// well as it can, and logs it.
func (s *Server) refuse(c net.Conn, err error) {
	s.log.Debug("local connection refused", "err", err)
	_ = s.answer(c, &localwire.Answer{Err: localwire.ToError(err)})
}

func (s *Server) answer(c net.Conn, a *localwire.Answer) error {
	// The body is written as it is (a listing's is megabytes): not copied
	// into one message with the rest.
	head, body, tail := localwire.AnswerParts(a)
	return s.write(c, head, body, tail)
}

// answerParts writes answer a whose body is made of parts.
func (s *Server) answerParts(c net.Conn, a *localwire.Answer, body parts) error {
	n := 0
	for _, p := range body {
		n += len(p)
	}
	if n > localwire.MaxAnswer-64 && a.More {
		// An error in its place would end the call with chunks to come:
		// the connection ends instead (a chunk is far smaller).
		return localwire.ErrTooLarge
	}
	msg := append(append([][]byte{localwire.AnswerHead(a, n)}, body...), localwire.AnswerTail)
	return s.write(c, msg...)
}

// write writes one answer's frame, or an error in its place if it is
// longer than a command reads.
func (s *Server) write(c net.Conn, msg ...[]byte) error {
	n := 0
	for _, p := range msg {
		n += len(p)
	}
	if n > localwire.MaxAnswer {
		head, body, tail := localwire.AnswerParts(&localwire.Answer{Err: &localwire.Error{Msg: "answer too large; ask for fewer jobs"}})
		msg = [][]byte{head, body, tail}
	}
	deadline := time.Now().Add(s.lim.IO)
	// A large answer (a listing) is held until the client has read it:
	// a user's connections that ask and never read would otherwise hold
	// a listing each, 256 of them.
	if uc, ok := c.(*userConn); ok && n > answerFree && n <= localwire.MaxAnswer {
		cost := int64(n)
		if !s.mem.take(uc.uid, cost, deadline) {
			s.log.Warn("local answer dropped: the user's requests and answers in flight hold their memory bound",
				"uid", uc.uid, "bytes", n, "bound", s.lim.PerUserMemory)
			return errOverBudget
		}
		defer s.mem.give(uc.uid, cost)
	}
	_ = c.SetWriteDeadline(deadline)
	return localwire.WriteFrameParts(c, msg...)
}

// answerFree is the size up to which an answer is not charged to the
// caller's bound: a change's or a small query's.
const answerFree = 64 << 10

var errOverBudget = errors.New("the user's requests in flight hold their memory bound")

// userConn is a served connection with its caller's uid.
type userConn struct {
	net.Conn
	uid uint32
}

// peer is the caller the kernel names at the other end of c.
func (s *Server) peer(c net.Conn) (*api.Identity, error) {
	uc := unixOf(c)
	if uc == nil {
		return nil, errors.New("the local protocol is served on the Unix socket only")
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return nil, err
	}
	var cred *unix.Ucred
	var serr error
	if err := raw.Control(func(fd uintptr) {
		cred, serr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return nil, err
	}
	if serr != nil {
		return nil, fmt.Errorf("SO_PEERCRED: %w", serr)
	}
	return s.users.Local(cred.Uid, cred.Gid), nil
}
