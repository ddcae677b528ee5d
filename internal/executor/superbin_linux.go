package executor

import (
	"encoding/binary"
	"errors"
)

// The agent's "start" travels in a binary form: one per job, it carries
// the job's whole environment, and decoding it as JSON was the largest
// cost of the supervisor's (~65 us of CPU per job for 75 variables, for
// ~4 us this way). A packet in this form begins with superBinTag, which no
// JSON text begins with. A supervisor that reads it says so in its answer
// to "list" (superMsg.Bin); an agent sends it only to such a supervisor (a
// supervisor left running by an earlier build speaks JSON alone), and the
// supervisor still takes JSON (from an earlier agent). It answers in the
// binary form an agent that has sent it something in that form (such an
// agent reads both), in JSON one that has not; "running", which says what
// the supervisor reads, is always JSON.

const (
	superBinTag     = 0x01
	superBinVersion = 1
)

var errSuperBin = errors.New("executor: malformed binary supervisor message")

type binWriter struct{ b []byte }

func (w *binWriter) uint(v uint64) { w.b = binary.AppendUvarint(w.b, v) }
func (w *binWriter) int(v int64)   { w.b = binary.AppendVarint(w.b, v) }
func (w *binWriter) str(s string)  { w.uint(uint64(len(s))); w.b = append(w.b, s...) }
func (w *binWriter) bool(v bool) {
	if v {
		w.b = append(w.b, 1)
	} else {
		w.b = append(w.b, 0)
	}
}

func (w *binWriter) strs(ss []string) {
	w.uint(uint64(len(ss)))
	for _, s := range ss {
		w.str(s)
	}
}

// encodeSuperBin is m in the binary form (file descriptors travel apart).
func encodeSuperBin(m *superMsg) []byte {
	n := 64 + len(m.Op) + len(m.Dir) + len(m.Err)
	if s := m.Spec; s != nil {
		for _, ss := range [][]string{s.Args, s.Env, s.CgV1} {
			for _, v := range ss {
				n += len(v) + 3
			}
		}
		n += len(s.Path) + len(s.Dir) + len(s.Stdin) + len(s.Stdout) + len(s.Stderr) + len(s.CgV2) + 5*len(s.Groups) + 64
	}
	w := &binWriter{b: make([]byte, 0, n)}
	w.b = append(w.b, superBinTag, superBinVersion)
	w.str(m.Op)
	w.str(m.Dir)
	w.strs(m.Dirs)
	w.int(int64(m.PGID))
	w.str(m.Err)
	for _, p := range m.Pipes {
		w.bool(p)
	}
	w.bool(m.Result != nil)
	if r := m.Result; r != nil {
		w.int(int64(r.ExitCode))
		w.int(int64(r.Signal))
		w.str(r.Err)
	}
	w.bool(m.Spec != nil)
	if s := m.Spec; s != nil {
		w.str(s.Path)
		w.strs(s.Args)
		w.strs(s.Env)
		w.str(s.Dir)
		w.uint(uint64(s.UID))
		w.uint(uint64(s.GID))
		w.uint(uint64(len(s.Groups)))
		for _, g := range s.Groups {
			w.uint(uint64(g))
		}
		w.str(s.Stdin)
		w.str(s.Stdout)
		w.str(s.Stderr)
		w.bool(s.Append)
		w.bool(s.Umask != nil)
		if s.Umask != nil {
			w.int(int64(*s.Umask))
		}
		w.strs(s.CgV1)
		w.str(s.CgV2)
		w.bool(s.Hold)
	}
	return w.b
}

// binReader reads the binary form; every read is bounded by the packet,
// and the first failure sticks (err).
type binReader struct {
	s   string // the packet: strings read are slices of this one copy
	off int
	err error
}

func (r *binReader) uint() uint64 {
	if r.err != nil {
		return 0
	}
	var v uint64
	var shift uint
	for {
		if r.off >= len(r.s) || shift > 63 {
			r.err = errSuperBin
			return 0
		}
		c := r.s[r.off]
		r.off++
		v |= uint64(c&0x7f) << shift
		if c < 0x80 {
			return v
		}
		shift += 7
	}
}

func (r *binReader) int() int64 {
	u := r.uint()
	v := int64(u >> 1)
	if u&1 != 0 {
		v = ^v
	}
	return v
}

func (r *binReader) uint32() uint32 {
	v := r.uint()
	if v > 1<<32-1 {
		r.err = errSuperBin
	}
	return uint32(v)
}

func (r *binReader) str() string {
	n := r.uint()
	if r.err != nil || n > uint64(len(r.s)-r.off) {
		r.err = errSuperBin
		return ""
	}
	s := r.s[r.off : r.off+int(n)]
	r.off += int(n)
	return s
}

func (r *binReader) bool() bool {
	if r.err != nil || r.off >= len(r.s) || r.s[r.off] > 1 {
		r.err = errSuperBin
		return false
	}
	r.off++
	return r.s[r.off-1] == 1
}

// count reads a list's length, each element taking at least one byte.
func (r *binReader) count() int {
	n := r.uint()
	if r.err != nil || n > uint64(len(r.s)-r.off) {
		r.err = errSuperBin
		return 0
	}
	return int(n)
}

func (r *binReader) strs() []string {
	n := r.count()
	if n == 0 {
		return nil
	}
	out := make([]string, n)
	for i := range out {
		out[i] = r.str()
	}
	return out
}

// decodeSuperBin reads a message in the binary form (b begins with
// superBinTag).
func decodeSuperBin(b []byte) (superMsg, error) {
	r := &binReader{s: string(b)}
	if len(r.s) < 2 || r.s[0] != superBinTag || r.s[1] != superBinVersion {
		return superMsg{}, errSuperBin
	}
	r.off = 2
	var m superMsg
	m.Op = r.str()
	m.Dir = r.str()
	m.Dirs = r.strs()
	m.PGID = int(r.int())
	m.Err = r.str()
	for i := range m.Pipes {
		m.Pipes[i] = r.bool()
	}
	if r.bool() {
		m.Result = &superResult{ExitCode: int(r.int()), Signal: int(r.int()), Err: r.str()}
	}
	if r.bool() {
		s := &superSpec{}
		s.Path = r.str()
		s.Args = r.strs()
		s.Env = r.strs()
		s.Dir = r.str()
		s.UID = r.uint32()
		s.GID = r.uint32()
		if n := r.count(); n > 0 {
			s.Groups = make([]uint32, n)
			for i := range s.Groups {
				s.Groups[i] = r.uint32()
			}
		}
		s.Stdin = r.str()
		s.Stdout = r.str()
		s.Stderr = r.str()
		s.Append = r.bool()
		if r.bool() {
			u := int(r.int())
			s.Umask = &u
		}
		s.CgV1 = r.strs()
		s.CgV2 = r.str()
		s.Hold = r.bool()
		m.Spec = s
	}
	if r.err == nil && r.off != len(r.s) {
		r.err = errSuperBin // trailing bytes: not what was written
	}
	if r.err != nil {
		return superMsg{}, r.err
	}
	return m, nil
}
