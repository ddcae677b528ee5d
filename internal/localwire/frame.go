package localwire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
)

// Magic opens every connection; gRPC's clients open with "PRI " instead.
const Magic = "DRVL"

// Version is the protocol's version, sent after Magic with the
// Fingerprint of the types the messages carry. A controller of another
// version or build refuses the connection (ErrOtherBuild), and the
// commands then go through gRPC, whose messages are versioned.
// Version 3: a summary listing (ListJobs) answers in chunks, each a
// JobList of its own, then an empty last answer.
const Version byte = 3

// Preface is what a client writes first on a new connection.
func Preface() []byte {
	b := append([]byte(Magic), Version)
	return binary.LittleEndian.AppendUint64(b, Fingerprint)
}

// PrefaceLen is its length.
const PrefaceLen = len(Magic) + 1 + 8

// ErrOtherBuild is a controller whose messages are not this client's.
var ErrOtherBuild = errors.New("the controller is another version or build than the commands")

// Bounds on one frame. A request carries at most a batch script and its
// environment (gRPC's adapter takes 64 MiB too); an answer at most a very
// long job listing (the gRPC client's bound).
const (
	MaxRequest = 64 << 20
	MaxAnswer  = 256 << 20
)

// ErrTooLarge is a frame longer than the reader accepts; the connection
// cannot be used after it.
var ErrTooLarge = errors.New("message too large")

// WriteFrame writes one frame: its length, then b.
func WriteFrame(w io.Writer, b []byte) error {
	var hdr [4]byte
	if uint64(len(b)) > 1<<32-1 {
		return ErrTooLarge
	}
	binary.BigEndian.PutUint32(hdr[:], uint32(len(b)))
	// One write when it is small: a command's request then leaves in one
	// packet and the answer's header is not a write of its own.
	if len(b) <= 64<<10 {
		buf := make([]byte, 4+len(b))
		copy(buf, hdr[:])
		copy(buf[4:], b)
		_, err := w.Write(buf)
		return err
	}
	if _, err := w.Write(hdr[:]); err != nil {
		return err
	}
	_, err := w.Write(b)
	return err
}

// ReadFrame reads one frame of at most max bytes; it allocates at most
// twice the bytes that arrived, and 64 KiB, whatever the header claims.
func ReadFrame(r io.Reader, max int) ([]byte, error) {
	n, err := ReadFrameHeader(r, max)
	if err != nil {
		return nil, err
	}
	return ReadFrameBody(r, n)
}

// ReadFrameHeader reads a frame's length, at most max.
func ReadFrameHeader(r io.Reader, max int) (int, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return 0, err
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if uint64(n) > uint64(max) {
		return 0, fmt.Errorf("%w: %d bytes (at most %d)", ErrTooLarge, n, max)
	}
	return int(n), nil
}

// ReadFrameBody reads the n bytes of a frame whose header was read.
func ReadFrameBody(r io.Reader, n int) ([]byte, error) {
	// The buffer grows as the bytes arrive: a header that claims 64 MiB
	// and never sends them costs the reader 64 KiB, not the claim.
	b := make([]byte, min(n, frameChunk))
	for got := 0; ; {
		k, err := io.ReadFull(r, b[got:])
		got += k
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
		if got == n {
			return b, nil
		}
		b = append(b, make([]byte, min(n-got, len(b)))...)
	}
}

// frameChunk is what ReadFrame allocates before a frame's bytes arrive;
// past it, at most twice what arrived.
const frameChunk = 64 << 10

// Request is one call: the method (the gRPC method's name, so that sdiag
// counts both transports alike) and its argument in the compact form.
type Request struct {
	Method string
	Body   []byte
}

// Answer is one answer frame. More: a stream's chunk, more follow. Err
// ends the call with an error; Body is the result otherwise.
type Answer struct {
	More bool
	Err  *Error
	Body []byte
}

// Error is an error on the wire.
type Error struct {
	Kind string // "api" (an *api.Error), "leader" (a follower's refusal), "warning" (sacctmgr's), "build" (ErrOtherBuild), "" (other)
	Code int
	Msg  string
	// Leader names the leader of a "leader" error; Text is the text that
	// comes with a "warning".
	Leader string
	Text   string
}

// Encode gives v's compact form.
func Encode(v any) ([]byte, error) { return AppendCompact(nil, v), nil }

// Decode reads a request (or a part of one: the controller's reading of
// what any local user sends) into the value v points to, saying what was
// malformed; it allocates at most RequestAlloc(len(b)).
func Decode(b []byte, v any) error {
	if err := DecodeCompact(b, v, RequestAlloc(len(b))); err != nil {
		return fmt.Errorf("malformed message: %w", err)
	}
	return nil
}

// DecodeAnswer reads an answer (or its body) from the controller; it
// allocates at most AnswerAlloc(len(b)). A listing and an answer's frame
// have readers of their own (a listing is megabytes: its jobs are read in
// blocks, an answer's body is not copied).
func DecodeAnswer(b []byte, v any) error {
	var err error
	switch v := v.(type) {
	case *JobList:
		err = decodeJobList(b, v, AnswerAlloc(len(b)))
	case *Answer:
		err = decodeAnswer(b, v, AnswerAlloc(len(b)))
	default:
		err = DecodeCompact(b, v, AnswerAlloc(len(b)))
	}
	if err != nil {
		return fmt.Errorf("malformed message: %w", err)
	}
	return nil
}

// AnswerParts gives a's compact form in three parts, so that a long body
// (a listing's megabytes) is written as it is rather than copied into
// one message first: what precedes the body, the body, what follows it.
func AnswerParts(a *Answer) (head, body, tail []byte) {
	if a.Body == nil {
		return AppendCompact(nil, a), nil, nil
	}
	return AnswerHead(a, len(a.Body)), a.Body, AnswerTail
}

// AnswerHead is what precedes a body of n bytes in a's compact form (a's
// own Body left out); AnswerTail follows the body.
func AnswerHead(a *Answer, n int) []byte {
	h := *a
	h.Body = nil
	head := AppendCompact(nil, &h)
	head = head[:len(head)-1] // the struct's end comes after the body
	head = binary.AppendUvarint(head, answerBody)
	return binary.AppendUvarint(head, uint64(n))
}

// AnswerTail ends an answer after its body.
var AnswerTail = []byte{0}

// WriteFrameParts writes one frame made of parts, with one system call
// where the connection takes several buffers at once (net.Buffers).
func WriteFrameParts(w io.Writer, parts ...[]byte) error {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	if uint64(n) > 1<<32-1 {
		return ErrTooLarge
	}
	if n <= 64<<10 {
		return WriteFrame(w, bytes.Join(parts, nil))
	}
	bufs := make(net.Buffers, 0, len(parts)+1)
	bufs = append(bufs, binary.BigEndian.AppendUint32(nil, uint32(n)))
	for _, p := range parts {
		if len(p) > 0 {
			bufs = append(bufs, p)
		}
	}
	_, err := bufs.WriteTo(w)
	return err
}
