package localwire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"reflect"
	"sync"

	"github.com/drover-hpc/drover/internal/api"
	"github.com/drover-hpc/drover/internal/model"
)

// The compact form is a binary encoding of Go values driven by their
// types: a struct is its non-zero exported fields, each as its index and
// value, then 0; integers are varints, floats their 8 bytes, strings and
// slices their length and contents, a pointer its value (a nil element of
// a slice is a 0 byte, any other a 1 byte first). Field indices tie both
// ends to the same type definitions: the client sends the Fingerprint of
// its types first, and a controller with another refuses it.

// plan encodes and decodes one type.
type plan struct {
	enc func(b []byte, v reflect.Value) []byte
	dec func(r *reader, v reflect.Value) error
}

var (
	plans sync.Map // reflect.Type -> *plan, published whole
	// building holds the plans being built (under buildMu) until the
	// outermost one is done: a type that holds itself finds its plan
	// there, and no goroutine sees a plan before its functions are set.
	buildMu  sync.Mutex
	building map[reflect.Type]*plan
)

// reader reads a compact message.
type reader struct {
	b []byte
	i int
	// left is what the message may still allocate (see RequestAlloc).
	left uint64
}

var errShort = errors.New("malformed compact message: truncated")

// ErrAllocBound is a message that would allocate more than its bound
// for its length: many empty elements of large types, which no encoder
// of real values sends.
var ErrAllocBound = errors.New("malformed compact message: it would allocate more than its length allows")

// What decoding a message of n bytes may allocate (the values' memory
// as Go sizes it; reflection's own overhead aside). A byte can stand for
// a large value — a job or spec that is all zero is 2 bytes (present,
// end) but 400 or 600 bytes in memory — so a budget per message, not a
// check per element, keeps a hostile request from turning the 64 MiB a
// frame may hold into tens of GiB of the controller's memory.
//
// Requests (RequestAlloc): real ones allocate about a byte per byte (a
// script, an environment), a long scancel list ~7 (a 56-byte target and
// its text in 9 bytes), a list of empty strings 16. Answers (AnswerAlloc) come from the controller, which the
// commands trust; a listing of jobs alike allocates ~7 bytes per byte,
// of jobs with hardly a field set ~80, so their bound only stops a
// runaway.
func RequestAlloc(n int) uint64 { return 16*uint64(n) + 256<<10 }

// AnswerAlloc is the bound for an answer of n bytes.
func AnswerAlloc(n int) uint64 { return 1024*uint64(n) + 1<<20 }

// alloc charges n units of size bytes to the message's budget.
func (r *reader) alloc(n, size uintptr) error {
	c := uint64(n) * uint64(size)
	if size != 0 && c/uint64(size) != uint64(n) || c > r.left {
		return ErrAllocBound
	}
	r.left -= c
	return nil
}

func (r *reader) uvarint() (uint64, error) {
	v, n := binary.Uvarint(r.b[r.i:])
	if n <= 0 {
		return 0, errShort
	}
	r.i += n
	return v, nil
}

func (r *reader) varint() (int64, error) {
	v, n := binary.Varint(r.b[r.i:])
	if n <= 0 {
		return 0, errShort
	}
	r.i += n
	return v, nil
}

// length reads a length and checks that at least min bytes per unit
// remain, so that a corrupt length cannot make a huge allocation.
func (r *reader) length(min int) (int, error) {
	n, err := r.uvarint()
	if err != nil {
		return 0, err
	}
	if n > uint64(len(r.b)-r.i) || (min > 0 && n*uint64(min) > uint64(len(r.b)-r.i)) {
		return 0, errShort
	}
	return int(n), nil
}

func planOf(t reflect.Type) *plan {
	if p, ok := plans.Load(t); ok {
		return p.(*plan)
	}
	buildMu.Lock()
	defer buildMu.Unlock()
	if p, ok := plans.Load(t); ok {
		return p.(*plan)
	}
	building = map[reflect.Type]*plan{}
	p := planLocked(t)
	for bt, bp := range building {
		plans.Store(bt, bp)
	}
	building = nil
	return p
}

// planLocked returns t's plan, building it (and what it holds) into
// building; buildMu is held.
func planLocked(t reflect.Type) *plan {
	if p, ok := plans.Load(t); ok {
		return p.(*plan)
	}
	if p := building[t]; p != nil {
		return p
	}
	p := &plan{}
	building[t] = p
	build(t, p)
	return p
}

func build(t reflect.Type, p *plan) {
	switch t.Kind() {
	case reflect.Bool:
		p.enc = func(b []byte, v reflect.Value) []byte {
			if v.Bool() {
				return append(b, 1)
			}
			return append(b, 0)
		}
		p.dec = func(r *reader, v reflect.Value) error {
			if r.i >= len(r.b) {
				return errShort
			}
			v.SetBool(r.b[r.i] != 0)
			r.i++
			return nil
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		p.enc = func(b []byte, v reflect.Value) []byte { return binary.AppendVarint(b, v.Int()) }
		p.dec = func(r *reader, v reflect.Value) error {
			x, err := r.varint()
			v.SetInt(x)
			return err
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		p.enc = func(b []byte, v reflect.Value) []byte { return binary.AppendUvarint(b, v.Uint()) }
		p.dec = func(r *reader, v reflect.Value) error {
			x, err := r.uvarint()
			v.SetUint(x)
			return err
		}
	case reflect.Float32, reflect.Float64:
		p.enc = func(b []byte, v reflect.Value) []byte {
			return binary.LittleEndian.AppendUint64(b, math.Float64bits(v.Float()))
		}
		p.dec = func(r *reader, v reflect.Value) error {
			if len(r.b)-r.i < 8 {
				return errShort
			}
			v.SetFloat(math.Float64frombits(binary.LittleEndian.Uint64(r.b[r.i:])))
			r.i += 8
			return nil
		}
	case reflect.String:
		p.enc = func(b []byte, v reflect.Value) []byte {
			s := v.String()
			return append(binary.AppendUvarint(b, uint64(len(s))), s...)
		}
		p.dec = func(r *reader, v reflect.Value) error {
			n, err := r.length(1)
			if err != nil {
				return err
			}
			if err := r.alloc(uintptr(n), 1); err != nil {
				return err
			}
			v.SetString(string(r.b[r.i : r.i+n]))
			r.i += n
			return nil
		}
	case reflect.Pointer:
		elem := t.Elem()
		ep := planLocked(elem)
		p.enc = func(b []byte, v reflect.Value) []byte {
			if v.IsNil() {
				return append(b, 0)
			}
			return ep.enc(append(b, 1), v.Elem())
		}
		p.dec = func(r *reader, v reflect.Value) error {
			if r.i >= len(r.b) {
				return errShort
			}
			r.i++
			if r.b[r.i-1] == 0 {
				return nil
			}
			if err := r.alloc(1, elem.Size()); err != nil {
				return err
			}
			n := reflect.New(elem)
			v.Set(n)
			return ep.dec(r, n.Elem())
		}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			p.enc = func(b []byte, v reflect.Value) []byte {
				return append(binary.AppendUvarint(b, uint64(v.Len())), v.Bytes()...)
			}
			p.dec = func(r *reader, v reflect.Value) error {
				n, err := r.length(1)
				if err != nil {
					return err
				}
				if err := r.alloc(uintptr(n), 1); err != nil {
					return err
				}
				s := reflect.MakeSlice(t, n, n)
				copy(s.Bytes(), r.b[r.i:r.i+n])
				r.i += n
				v.Set(s)
				return nil
			}
			return
		}
		ep := planLocked(t.Elem())
		p.enc = func(b []byte, v reflect.Value) []byte {
			b = binary.AppendUvarint(b, uint64(v.Len()))
			for i := range v.Len() {
				b = ep.enc(b, v.Index(i))
			}
			return b
		}
		p.dec = func(r *reader, v reflect.Value) error {
			n, err := r.length(1)
			if err != nil {
				return err
			}
			if err := r.alloc(uintptr(n), t.Elem().Size()); err != nil {
				return err
			}
			s := reflect.MakeSlice(t, n, n)
			for i := range n {
				if err := ep.dec(r, s.Index(i)); err != nil {
					return err
				}
			}
			v.Set(s)
			return nil
		}
	case reflect.Map:
		kt, et := t.Key(), t.Elem()
		kp, vp := planLocked(kt), planLocked(et)
		p.enc = func(b []byte, v reflect.Value) []byte {
			b = binary.AppendUvarint(b, uint64(v.Len()))
			it := v.MapRange()
			for it.Next() {
				b = kp.enc(b, it.Key())
				b = vp.enc(b, it.Value())
			}
			return b
		}
		p.dec = func(r *reader, v reflect.Value) error {
			n, err := r.length(2)
			if err != nil {
				return err
			}
			// An entry costs its key and value and about as much again
			// in the map; repeated keys are charged too.
			if err := r.alloc(uintptr(n), 2*(kt.Size()+et.Size())); err != nil {
				return err
			}
			m := reflect.MakeMapWithSize(t, n)
			for range n {
				k, e := reflect.New(kt).Elem(), reflect.New(et).Elem()
				if err := kp.dec(r, k); err != nil {
					return err
				}
				if err := vp.dec(r, e); err != nil {
					return err
				}
				m.SetMapIndex(k, e)
			}
			v.Set(m)
			return nil
		}
	case reflect.Struct:
		// A field's plan is of its value; a pointer field's, of what it
		// points to (the field is there: its value follows).
		type field struct {
			i   int
			ptr bool
			p   *plan
		}
		var fields []field
		byNum := make([]*field, t.NumField()+1)
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			ft, ptr := f.Type, f.Type.Kind() == reflect.Pointer
			if ptr {
				ft = ft.Elem()
			}
			fields = append(fields, field{i: i, ptr: ptr, p: planLocked(ft)})
		}
		for k := range fields {
			byNum[fields[k].i+1] = &fields[k]
		}
		p.enc = func(b []byte, v reflect.Value) []byte {
			for k := range fields {
				f := &fields[k]
				fv := v.Field(f.i)
				if fv.IsZero() {
					continue
				}
				b = binary.AppendUvarint(b, uint64(f.i+1))
				if f.ptr {
					fv = fv.Elem()
				}
				b = f.p.enc(b, fv)
			}
			return append(b, 0)
		}
		p.dec = func(r *reader, v reflect.Value) error {
			for {
				i, err := r.uvarint()
				if err != nil {
					return err
				}
				if i == 0 {
					return nil
				}
				if i >= uint64(len(byNum)) || byNum[i] == nil {
					return fmt.Errorf("malformed compact message: %s has no field %d", t, i)
				}
				f := byNum[i]
				fv := v.Field(f.i)
				if f.ptr {
					if err := r.alloc(1, fv.Type().Elem().Size()); err != nil {
						return err
					}
					n := reflect.New(fv.Type().Elem())
					fv.Set(n)
					fv = n.Elem()
				}
				if err := f.p.dec(r, fv); err != nil {
					return err
				}
			}
		}
	default:
		panic(fmt.Sprintf("localwire: the compact form cannot carry %s", t))
	}
}

// AppendCompact appends the compact form of v to b. A message is the
// value itself, whatever pointers lead to it (DecodeCompact reads it
// through the target's); a nil pointer is no message at all.
func AppendCompact(b []byte, v any) []byte {
	rv := reflect.ValueOf(v)
	for rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			return b
		}
		rv = rv.Elem()
	}
	return planOf(rv.Type()).enc(b, rv)
}

// DecodeCompact decodes b into what v points to, allocating the pointers
// on the way; all of b must be used. It allocates at most limit bytes
// (ErrAllocBound past it), whatever b holds; it takes time linear in
// len(b) (every element, field and entry costs at least one byte) and
// stack bounded by the types' depth (no carried type holds itself).
func DecodeCompact(b []byte, v any, limit uint64) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return errors.New("DecodeCompact needs a pointer")
	}
	rv = rv.Elem()
	for rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			rv.Set(reflect.New(rv.Type().Elem()))
		}
		rv = rv.Elem()
	}
	r := &reader{b: b, left: limit}
	if err := planOf(rv.Type()).dec(r, rv); err != nil {
		return err
	}
	if r.i != len(b) {
		return errors.New("malformed compact message: bytes left over")
	}
	return nil
}

// fingerprint computes Fingerprint from the type definitions: the names,
// kinds and fields of every type a message holds, recursively.
func fingerprint() uint64 {
	h := fnv.New64a()
	seen := map[reflect.Type]bool{}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		fmt.Fprintf(h, "%s/%s;", t.String(), t.Kind())
		if seen[t] {
			return
		}
		seen[t] = true
		switch t.Kind() {
		case reflect.Pointer, reflect.Slice:
			walk(t.Elem())
		case reflect.Map:
			walk(t.Key())
			walk(t.Elem())
		case reflect.Struct:
			for i := range t.NumField() {
				if f := t.Field(i); f.IsExported() {
					fmt.Fprintf(h, "%d:%s,", i, f.Name)
					walk(f.Type)
				}
			}
		}
	}
	for _, m := range messages {
		walk(reflect.TypeOf(m))
	}
	return h.Sum64()
}

// JobList is a job listing. Jobs submitted alike (and an array's tasks)
// share their listing spec, which is sent once: Spec is a job's index
// in Specs plus one (0: none), and Job.Spec is nil on the wire.
type JobList struct {
	Jobs  []*model.Job
	Spec  []int
	Specs []*model.JobSpec
	Now   int64
}

// NewJobList builds the listing of jobs (the adapter's copies: their
// Spec fields are cleared in favour of the shared specs).
func NewJobList(jobs []*model.Job, now int64) *JobList {
	out := &JobList{Jobs: jobs, Spec: make([]int, len(jobs)), Now: now}
	index := map[string]int{}
	// A spec several jobs point to is encoded and compared once.
	byPtr := map[*model.JobSpec]int{}
	var key []byte
	for i, j := range jobs {
		if j.Spec == nil {
			continue
		}
		if n, ok := byPtr[j.Spec]; ok {
			out.Spec[i], j.Spec = n, nil
			continue
		}
		key = AppendCompact(key[:0], j.Spec)
		n, ok := index[string(key)]
		if !ok {
			out.Specs = append(out.Specs, j.Spec)
			n = len(out.Specs)
			index[string(key)] = n
		}
		byPtr[j.Spec] = n
		out.Spec[i], j.Spec = n, nil
	}
	return out
}

// API returns the jobs with their specs in place; every job has one, as
// from the gRPC client (commands read it unchecked).
func (l *JobList) API() (*api.JobList, error) {
	if len(l.Spec) != len(l.Jobs) {
		return nil, errors.New("malformed message: a listing's specs do not match its jobs")
	}
	empty := &model.JobSpec{}
	for i, j := range l.Jobs {
		n := l.Spec[i]
		switch {
		case j == nil || n < 0 || n > len(l.Specs) || (n > 0 && l.Specs[n-1] == nil):
			return nil, errors.New("malformed message: a listing's job or spec is missing")
		case n == 0:
			j.Spec = empty
		default:
			j.Spec = l.Specs[n-1]
		}
	}
	return &api.JobList{Jobs: l.Jobs, Now: l.Now}, nil
}
