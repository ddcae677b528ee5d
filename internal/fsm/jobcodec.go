package fsm

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"unsafe"

	"github.com/drover-hpc/drover/internal/model"
)

// Job records in a version 4 snapshot are binary: decoding 100,000 jobs
// as JSON was ~0.6 s of CPU, most of a restart. The format keeps what
// made JSON safe to evolve:
//
//   - The stream opens with the schema: every field of model.Job by name
//     and kind. A reader matches fields by name, so a field added later
//     reads as zero from an older snapshot and a field removed is skipped.
//   - A job record holds only its non-zero fields, each as (schema number,
//     value). Integers and booleans are varints, strings refer to a table
//     of the strings seen so far (a queue repeats its user, partition and
//     reason names 100,000 times; the reader shares them too), and every
//     other kind (slices, pointers, structs: allocations, steps, runs,
//     usage) is JSON, so a pointer to a zero value stays a pointer.
//
// Nothing here lists Job's fields: new ones are carried as they come, and
// TestSnapshotKeepsEveryJobField fills every one by reflection.
const (
	kindInt    = 'i'
	kindUint   = 'u'
	kindBool   = 'b'
	kindString = 's'
	kindJSON   = 'j'
)

type jobField struct {
	index int // in model.Job
	name  string
	kind  byte
	// The writer reads the field at its offset (a snapshot writes every
	// job; reflect's Field and IsZero per field were half its time).
	off     uintptr
	typ     reflect.Type
	nilable bool // zero exactly when its first word is nil (slice, pointer, map)
}

// jobFields is model.Job's schema; Spec travels in its own records.
var jobFields = func() []jobField {
	t := reflect.TypeFor[model.Job]()
	var out []jobField
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() || f.Name == "Spec" {
			continue
		}
		k := f.Type.Kind()
		out = append(out, jobField{index: i, name: f.Name, kind: kindOf(f.Type), off: f.Offset, typ: f.Type,
			nilable: k == reflect.Slice || k == reflect.Pointer || k == reflect.Map})
	}
	return out
}()

var uint32s = reflect.TypeFor[[]uint32]()

func kindOf(t reflect.Type) byte {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return kindInt
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return kindUint
	case reflect.Bool:
		return kindBool
	case reflect.String:
		return kindString
	}
	return kindJSON
}

// Record types of the binary part.
const (
	recEnd  = 0
	recSpec = 1 // uvarint length, the spec as JSON
	recJob  = 2 // uvarint spec number, fields, 0
)

type jobWriter struct {
	w       *bufio.Writer
	strings map[string]uint64
	buf     []byte
}

func newJobWriter(w *bufio.Writer) (*jobWriter, error) {
	jw := &jobWriter{w: w, strings: map[string]uint64{}}
	jw.buf = binary.AppendUvarint(jw.buf[:0], uint64(len(jobFields)))
	for _, f := range jobFields {
		jw.buf = binary.AppendUvarint(jw.buf, uint64(len(f.name)))
		jw.buf = append(jw.buf, f.name...)
		jw.buf = append(jw.buf, f.kind)
	}
	_, err := w.Write(jw.buf)
	return jw, err
}

func (jw *jobWriter) spec(s *model.JobSpec) error {
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	jw.buf = append(jw.buf[:0], recSpec)
	jw.buf = binary.AppendUvarint(jw.buf, uint64(len(b)))
	if _, err := jw.w.Write(jw.buf); err != nil {
		return err
	}
	_, err = jw.w.Write(b)
	return err
}

func (jw *jobWriter) job(j *model.Job, specRef uint32) error {
	b := append(jw.buf[:0], recJob)
	b = binary.AppendUvarint(b, uint64(specRef))
	base := unsafe.Pointer(j)
	for n, f := range jobFields {
		p := unsafe.Add(base, f.off)
		var i int64
		var u uint64
		var s string
		var fv reflect.Value
		switch f.kind {
		case kindInt:
			i = intAt(p, f.typ.Size())
			if i == 0 {
				continue
			}
		case kindUint:
			u = uintAt(p, f.typ.Size())
			if u == 0 {
				continue
			}
		case kindBool:
			if !*(*bool)(p) {
				continue
			}
		case kindString:
			// A string kind may be a named type: same layout.
			if s = *(*string)(p); s == "" {
				continue
			}
		default:
			if f.nilable && *(*unsafe.Pointer)(p) == nil {
				continue
			}
			if fv = reflect.NewAt(f.typ, p).Elem(); !f.nilable && fv.IsZero() {
				continue
			}
		}
		b = binary.AppendUvarint(b, uint64(n+1))
		switch f.kind {
		case kindInt:
			b = binary.AppendVarint(b, i)
		case kindUint:
			b = binary.AppendUvarint(b, u)
		case kindBool:
			b = append(b, 1)
		case kindString:
			if ref, ok := jw.strings[s]; ok {
				b = binary.AppendUvarint(b, ref)
				break
			}
			jw.strings[s] = uint64(len(jw.strings) + 1)
			b = binary.AppendUvarint(b, 0)
			b = binary.AppendUvarint(b, uint64(len(s)))
			b = append(b, s...)
		default:
			if f.typ == uint32s { // a job's groups: json.Marshal's bytes without its reflection
				b = appendUint32s(b, *(*[]uint32)(p))
				break
			}
			js, err := json.Marshal(fv.Interface())
			if err != nil {
				return fmt.Errorf("job %d %s: %w", j.ID, f.name, err)
			}
			b = binary.AppendUvarint(b, uint64(len(js)))
			b = append(b, js...)
		}
	}
	b = append(b, 0)
	jw.buf = b
	_, err := jw.w.Write(b)
	return err
}

// intAt and uintAt read an integer field of the given size.
func intAt(p unsafe.Pointer, size uintptr) int64 {
	switch size {
	case 1:
		return int64(*(*int8)(p))
	case 2:
		return int64(*(*int16)(p))
	case 4:
		return int64(*(*int32)(p))
	}
	return *(*int64)(p)
}

func uintAt(p unsafe.Pointer, size uintptr) uint64 {
	switch size {
	case 1:
		return uint64(*(*uint8)(p))
	case 2:
		return uint64(*(*uint16)(p))
	case 4:
		return uint64(*(*uint32)(p))
	}
	return *(*uint64)(p)
}

// appendUint32s appends the length and JSON of a non-nil []uint32, as
// json.Marshal writes it.
func appendUint32s(b []byte, v []uint32) []byte {
	n := 2 + max(len(v)-1, 0)
	for _, x := range v {
		n++
		for ; x >= 10; x /= 10 {
			n++
		}
	}
	b = binary.AppendUvarint(b, uint64(n))
	b = append(b, '[')
	for k, x := range v {
		if k > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendUint(b, uint64(x), 10)
	}
	return append(b, ']')
}

func (jw *jobWriter) end() error { return jw.w.WriteByte(recEnd) }

// jobReader reads the binary part; fields maps the stream's schema
// numbers (from 1) to this build's fields (-1: not known here, skipped).
type jobReader struct {
	r       *bufio.Reader
	fields  []jobField // by stream number - 1; index -1 when unknown
	strings []string
	buf     []byte
}

func newJobReader(r *bufio.Reader) (*jobReader, error) {
	n, err := binary.ReadUvarint(r)
	if err != nil {
		return nil, fmt.Errorf("job schema: %w", err)
	}
	if n > 4096 {
		return nil, fmt.Errorf("job schema of %d fields", n)
	}
	ours := map[string]jobField{}
	for _, f := range jobFields {
		ours[f.name] = f
	}
	jr := &jobReader{r: r}
	for range n {
		name, err := jr.bytes()
		if err != nil {
			return nil, fmt.Errorf("job schema: %w", err)
		}
		kind, err := r.ReadByte()
		if err != nil {
			return nil, fmt.Errorf("job schema: %w", err)
		}
		f, ok := ours[string(name)]
		if !ok || f.kind != kind {
			// Gone, or changed kind: skip its values.
			f = jobField{index: -1, name: string(name), kind: kind}
		}
		jr.fields = append(jr.fields, f)
	}
	return jr, nil
}

func (jr *jobReader) bytes() ([]byte, error) {
	n, err := binary.ReadUvarint(jr.r)
	if err != nil {
		return nil, err
	}
	if n > 1<<30 {
		return nil, fmt.Errorf("value of %d bytes", n)
	}
	if uint64(cap(jr.buf)) < n {
		jr.buf = make([]byte, n)
	}
	jr.buf = jr.buf[:n]
	_, err = io.ReadFull(jr.r, jr.buf)
	return jr.buf, err
}

// next reads one record: a spec, a job with its spec number, or neither
// at the end.
func (jr *jobReader) next() (*model.JobSpec, *model.Job, uint32, error) {
	t, err := jr.r.ReadByte()
	if err != nil {
		return nil, nil, 0, noEOF(err)
	}
	switch t {
	case recEnd:
		return nil, nil, 0, io.EOF
	case recSpec:
		b, err := jr.bytes()
		if err != nil {
			return nil, nil, 0, noEOF(err)
		}
		var s model.JobSpec
		if err := json.Unmarshal(b, &s); err != nil {
			return nil, nil, 0, err
		}
		return &s, nil, 0, nil
	case recJob:
		j, ref, err := jr.job()
		return nil, j, ref, noEOF(err)
	}
	return nil, nil, 0, fmt.Errorf("record type %d", t)
}

func (jr *jobReader) job() (*model.Job, uint32, error) {
	ref, err := binary.ReadUvarint(jr.r)
	if err != nil {
		return nil, 0, err
	}
	j := &model.Job{}
	v := reflect.ValueOf(j).Elem()
	for {
		num, err := binary.ReadUvarint(jr.r)
		if err != nil {
			return nil, 0, err
		}
		if num == 0 {
			return j, uint32(ref), nil
		}
		if num > uint64(len(jr.fields)) {
			return nil, 0, fmt.Errorf("job field %d of %d", num, len(jr.fields))
		}
		f := jr.fields[num-1]
		var fv reflect.Value
		if f.index >= 0 {
			fv = v.Field(f.index)
		}
		switch f.kind {
		case kindInt:
			x, err := binary.ReadVarint(jr.r)
			if err != nil {
				return nil, 0, err
			}
			if fv.IsValid() {
				fv.SetInt(x)
			}
		case kindUint:
			x, err := binary.ReadUvarint(jr.r)
			if err != nil {
				return nil, 0, err
			}
			if fv.IsValid() {
				fv.SetUint(x)
			}
		case kindBool:
			x, err := jr.r.ReadByte()
			if err != nil {
				return nil, 0, err
			}
			if fv.IsValid() {
				fv.SetBool(x != 0)
			}
		case kindString:
			s, err := jr.string()
			if err != nil {
				return nil, 0, err
			}
			if fv.IsValid() {
				fv.SetString(s)
			}
		default:
			b, err := jr.bytes()
			if err != nil {
				return nil, 0, err
			}
			if fv.IsValid() {
				if err := json.Unmarshal(b, fv.Addr().Interface()); err != nil {
					return nil, 0, fmt.Errorf("job %d %s: %w", j.ID, f.name, err)
				}
			}
		}
	}
}

func (jr *jobReader) string() (string, error) {
	ref, err := binary.ReadUvarint(jr.r)
	if err != nil {
		return "", err
	}
	if ref > 0 {
		if ref > uint64(len(jr.strings)) {
			return "", fmt.Errorf("string %d of %d", ref, len(jr.strings))
		}
		return jr.strings[ref-1], nil
	}
	b, err := jr.bytes()
	if err != nil {
		return "", err
	}
	s := string(b)
	jr.strings = append(jr.strings, s)
	return s, nil
}

// noEOF: the stream ends only at its end record.
func noEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}
