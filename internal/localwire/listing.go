package localwire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"unsafe"

	"github.com/drover-hpc/drover/internal/model"
)

// A listing's message can be put together from parts, so that the
// adapter keeps each job's encoded record from one listing to the next
// (a pending job rarely changes) and a listing of 100,000 jobs is mostly
// a copy of bytes. The parts make exactly the bytes AppendCompact makes
// of the JobList (a test holds them to it); the reader is DecodeCompact.

var jobType = reflect.TypeFor[model.Job]()

// Field numbers of JobList in the compact form (its fields' index + 1).
const (
	listJobs  = 1
	listSpec  = 2
	listSpecs = 3
	listNow   = 4
)

// AppendJobRecord appends j as an element of JobList.Jobs. j.Spec must be
// nil: a listing sends the specs apart (JobList.Spec).
func AppendJobRecord(b []byte, j *model.Job) []byte {
	if j == nil {
		return append(b, 0)
	}
	return planOf(jobType).enc(append(b, 1), reflect.ValueOf(j).Elem())
}

// A listing's message is AppendJobListHead, the n records of its jobs
// (AppendJobRecord's, in order), then AppendJobListTail: the compact form
// of JobList{Jobs, Spec, Specs, Now}. spec must have n elements.

// AppendJobListHead appends what precedes n job records.
func AppendJobListHead(b []byte, n int) []byte {
	b = binary.AppendUvarint(b, listJobs)
	return binary.AppendUvarint(b, uint64(n))
}

// AppendJobListTail appends what follows the job records.
func AppendJobListTail(b []byte, spec []int, specs []*model.JobSpec, now int64) []byte {
	b = binary.AppendUvarint(b, listSpec)
	b = binary.AppendUvarint(b, uint64(len(spec)))
	for _, s := range spec {
		b = binary.AppendVarint(b, int64(s))
	}
	if specs != nil {
		b = binary.AppendUvarint(b, listSpecs)
		b = AppendCompact(b, specs)
	}
	if now != 0 {
		b = binary.AppendUvarint(b, listNow)
		b = binary.AppendVarint(b, now)
	}
	return append(b, 0)
}

// A command reads a listing of 100,000 jobs: through the reflection plan
// that is ~60 ms and half a million allocations (a job and its strings
// each). decodeJobList reads the same bytes with the job's common fields
// set by hand, the jobs in blocks, and the strings that repeat from job
// to job (user, partition, name, reason) made once.

// jobBlock is how many jobs are allocated at a time: memory follows the
// records actually read (as the plan's one allocation per job does),
// whatever count a message claims.
const jobBlock = 4096

// Strings up to internLen bytes are made once per listing, up to
// internMax distinct ones.
const (
	internLen = 64
	internMax = 8192
)

// listDecoder reads one listing.
type listDecoder struct {
	reader
	strs map[string]string
	last []string // by a string field's slot: the value the last job had
	u32s []uint32 // what is left of the block the jobs' []uint32 come from
}

// uint32s reads a []uint32 (a job's groups) into the block.
func (d *listDecoder) uint32s() ([]uint32, error) {
	n, err := d.length(1)
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return []uint32{}, nil
	}
	if len(d.u32s) < n {
		if err := d.alloc(uintptr(max(n, jobBlock)), 4); err != nil {
			return nil, err
		}
		d.u32s = make([]uint32, max(n, jobBlock))
	}
	out := d.u32s[:n:n] // its own capacity: an append never reaches the next
	d.u32s = d.u32s[n:]
	for i := range out {
		x, err := d.uv()
		if err != nil {
			return nil, err
		}
		out[i] = uint32(x)
	}
	return out, nil
}

// uv reads a uvarint, one byte at once (a field number, most values).
func (d *listDecoder) uv() (uint64, error) {
	if d.i < len(d.b) && d.b[d.i] < 0x80 {
		d.i++
		return uint64(d.b[d.i-1]), nil
	}
	return d.uvarint()
}

// v reads a varint, one byte at once.
func (d *listDecoder) v() (int64, error) {
	if d.i < len(d.b) && d.b[d.i] < 0x80 {
		x := d.b[d.i]
		d.i++
		return int64(x>>1) ^ -int64(x&1), nil
	}
	return d.varint()
}

// str reads a string; slot is its field's (a big queue's jobs mostly
// repeat the job before's user, partition, name and reason).
func (d *listDecoder) str(slot int) (string, error) {
	n, err := d.length(1)
	if err != nil {
		return "", err
	}
	b := d.b[d.i : d.i+n]
	d.i += n
	if string(b) == d.last[slot] {
		return d.last[slot], nil
	}
	if n > internLen {
		return string(b), nil
	}
	s, ok := d.strs[string(b)]
	if !ok {
		s = string(b)
		if len(d.strs) < internMax {
			d.strs[s] = s
		}
	}
	d.last[slot] = s
	return s, nil
}

// The classes of value a hand-set field reads, by the kinds the plan
// reads the same way.
const (
	classUint = iota + 1
	classInt
	classString
	classBool
	classUint32s // []uint32
)

func classOf(k reflect.Kind) int {
	switch k {
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return classUint
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return classInt
	case reflect.String:
		return classString
	case reflect.Bool:
		return classBool
	}
	return 0
}

// classOfType is classOf, with the slices read by hand.
func classOfType(t reflect.Type) int {
	if t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint32 {
		return classUint32s
	}
	return classOf(t.Kind())
}

// hotField sets one field of a job by hand: the setter of its class.
type hotField struct {
	class int
	u     func(j *model.Job, x uint64)
	i     func(j *model.Job, x int64)
	s     func(j *model.Job, s string)
	b     func(j *model.Job, v bool)
	u32s  func(j *model.Job, v []uint32)
}

func hotUint(set func(j *model.Job, x uint64)) hotField { return hotField{class: classUint, u: set} }
func hotInt(set func(j *model.Job, x int64)) hotField   { return hotField{class: classInt, i: set} }
func hotString(set func(j *model.Job, s string)) hotField {
	return hotField{class: classString, s: set}
}
func hotBool(set func(j *model.Job, v bool)) hotField { return hotField{class: classBool, b: set} }
func hotUint32s(set func(j *model.Job, v []uint32)) hotField {
	return hotField{class: classUint32s, u32s: set}
}

// hotJobFields are the fields a summary listing's jobs commonly carry,
// by name. A field whose kind no longer reads as its setter does is read
// by the plan instead (TestHotJobFieldsMatchTheModel catches it).
var hotJobFields = map[string]hotField{
	"ID":           hotUint(func(j *model.Job, x uint64) { j.ID = model.JobID(x) }),
	"ArrayJobID":   hotUint(func(j *model.Job, x uint64) { j.ArrayJobID = model.JobID(x) }),
	"ArrayTaskID":  hotInt(func(j *model.Job, x int64) { j.ArrayTaskID = int(x) }),
	"SpecID":       hotUint(func(j *model.Job, x uint64) { j.SpecID = model.JobID(x) }),
	"UserID":       hotUint(func(j *model.Job, x uint64) { j.UserID = uint32(x) }),
	"GroupID":      hotUint(func(j *model.Job, x uint64) { j.GroupID = uint32(x) }),
	"Groups":       hotUint32s(func(j *model.Job, v []uint32) { j.Groups = v }),
	"UserName":     hotString(func(j *model.Job, s string) { j.UserName = s }),
	"Partition":    hotString(func(j *model.Job, s string) { j.Partition = s }),
	"State":        hotUint(func(j *model.Job, x uint64) { j.State = model.JobState(x) }),
	"Completing":   hotBool(func(j *model.Job, v bool) { j.Completing = v }),
	"EndState":     hotUint(func(j *model.Job, x uint64) { j.EndState = model.JobState(x) }),
	"Reason":       hotString(func(j *model.Job, s string) { j.Reason = s }),
	"HoldUser":     hotBool(func(j *model.Job, v bool) { j.HoldUser = v }),
	"HoldAdmin":    hotBool(func(j *model.Job, v bool) { j.HoldAdmin = v }),
	"Priority":     hotUint(func(j *model.Job, x uint64) { j.Priority = uint32(x) }),
	"Nice":         hotInt(func(j *model.Job, x int64) { j.Nice = int(x) }),
	"TimeLimit":    hotInt(func(j *model.Job, x int64) { j.TimeLimit = x }),
	"Name":         hotString(func(j *model.Job, s string) { j.Name = s }),
	"Comment":      hotString(func(j *model.Job, s string) { j.Comment = s }),
	"Restarts":     hotInt(func(j *model.Job, x int64) { j.Restarts = int(x) }),
	"SubmitTime":   hotInt(func(j *model.Job, x int64) { j.SubmitTime = x }),
	"EligibleTime": hotInt(func(j *model.Job, x int64) { j.EligibleTime = x }),
	"StartTime":    hotInt(func(j *model.Job, x int64) { j.StartTime = x }),
	"EndTime":      hotInt(func(j *model.Job, x int64) { j.EndTime = x }),
	"ExitCode":     hotInt(func(j *model.Job, x int64) { j.ExitCode = int32(x) }),
	"Signal":       hotInt(func(j *model.Job, x int64) { j.Signal = int32(x) }),
	"Suspended":    hotBool(func(j *model.Job, v bool) { j.Suspended = v }),
}

// jobField reads the field numbered by its index + 1: by hand (hot,
// slot numbering the string fields), or through its plan (ptr: a pointer
// field, the plan is of its element).
type jobField struct {
	hot  hotField
	slot int
	i    int
	ptr  bool
	p    *plan
}

// jobFields are model.Job's fields by number, and how many are strings
// read by hand.
var jobFields = sync.OnceValues(func() ([]jobField, int) {
	fields := make([]jobField, jobType.NumField()+1)
	slots := 0
	for i := range jobType.NumField() {
		f := jobType.Field(i)
		if !f.IsExported() {
			continue
		}
		if h, ok := hotJobFields[f.Name]; ok && h.class == classOfType(f.Type) {
			fields[i+1] = jobField{hot: h, slot: slots}
			if h.class == classString {
				slots++
			}
			continue
		}
		ft, ptr := f.Type, f.Type.Kind() == reflect.Pointer
		if ptr {
			ft = ft.Elem()
		}
		fields[i+1] = jobField{i: i, ptr: ptr, p: planOf(ft)}
	}
	return fields, slots
})

func (d *listDecoder) job(j *model.Job, fields []jobField) error {
	var rv reflect.Value
	for {
		num, err := d.uv()
		if err != nil {
			return err
		}
		if num == 0 {
			return nil
		}
		if num >= uint64(len(fields)) {
			return fmt.Errorf("malformed compact message: %s has no field %d", jobType, num)
		}
		f := &fields[num]
		switch f.hot.class {
		case classUint:
			x, err := d.uv()
			if err != nil {
				return err
			}
			f.hot.u(j, x)
		case classInt:
			x, err := d.v()
			if err != nil {
				return err
			}
			f.hot.i(j, x)
		case classString:
			s, err := d.str(f.slot)
			if err != nil {
				return err
			}
			f.hot.s(j, s)
		case classBool:
			if d.i >= len(d.b) {
				return errShort
			}
			f.hot.b(j, d.b[d.i] != 0)
			d.i++
		case classUint32s:
			v, err := d.uint32s()
			if err != nil {
				return err
			}
			f.hot.u32s(j, v)
		default:
			if f.p == nil {
				return fmt.Errorf("malformed compact message: %s has no field %d", jobType, num)
			}
			if !rv.IsValid() {
				rv = reflect.ValueOf(j).Elem()
			}
			fv := rv.Field(f.i)
			if f.ptr {
				if err := d.alloc(1, fv.Type().Elem().Size()); err != nil {
					return err
				}
				n := reflect.New(fv.Type().Elem())
				fv.Set(n)
				fv = n.Elem()
			}
			if err := f.p.dec(&d.reader, fv); err != nil {
				return err
			}
		}
	}
}

// decodeJobList reads b, a JobList's compact form, into l, as
// DecodeCompact would, allocating at most limit bytes.
func decodeJobList(b []byte, l *JobList, limit uint64) error {
	fields, slots := jobFields()
	d := &listDecoder{reader: reader{b: b, left: limit}, strs: map[string]string{}, last: make([]string, slots)}
	for {
		num, err := d.uvarint()
		if err != nil {
			return err
		}
		switch num {
		case 0:
			if d.i != len(b) {
				return errors.New("malformed compact message: bytes left over")
			}
			return nil
		case listJobs:
			n, err := d.length(1)
			if err != nil {
				return err
			}
			if err := d.alloc(uintptr(n), unsafe.Sizeof((*model.Job)(nil))); err != nil {
				return err
			}
			jobs := make([]*model.Job, n)
			var block []model.Job
			for i := range jobs {
				if d.i >= len(d.b) {
					return errShort
				}
				d.i++
				if d.b[d.i-1] == 0 {
					continue
				}
				if len(block) == 0 {
					k := min(n-i, jobBlock)
					if err := d.alloc(uintptr(k), unsafe.Sizeof(model.Job{})); err != nil {
						return err
					}
					block = make([]model.Job, k)
				}
				j := &block[0]
				block = block[1:]
				if err := d.job(j, fields); err != nil {
					return err
				}
				jobs[i] = j
			}
			l.Jobs = jobs
		case listSpec:
			n, err := d.length(1)
			if err != nil {
				return err
			}
			if err := d.alloc(uintptr(n), unsafe.Sizeof(0)); err != nil {
				return err
			}
			spec := make([]int, n)
			for i := range spec {
				x, err := d.varint()
				if err != nil {
					return err
				}
				spec[i] = int(x)
			}
			l.Spec = spec
		case listSpecs:
			if err := planOf(specsType).dec(&d.reader, reflect.ValueOf(&l.Specs).Elem()); err != nil {
				return err
			}
		case listNow:
			x, err := d.varint()
			if err != nil {
				return err
			}
			l.Now = x
		default:
			return fmt.Errorf("malformed compact message: %s has no field %d", reflect.TypeFor[JobList](), num)
		}
	}
}

var specsType = reflect.TypeFor[[]*model.JobSpec]()

// Field numbers of Answer in the compact form (TestAnswerReaderKnowsTheFields).
const (
	answerMore = 1
	answerErr  = 2
	answerBody = 3
)

var errorType = reflect.TypeFor[Error]()

// decodeAnswer reads an answer frame as DecodeCompact would, but its
// Body is the frame's own bytes rather than a copy: a listing's answer
// is megabytes, and the frame is read into a buffer of its own
// (ReadFrame) that nothing else holds or reuses.
func decodeAnswer(b []byte, a *Answer, limit uint64) error {
	r := &reader{b: b, left: limit}
	for {
		num, err := r.uvarint()
		if err != nil {
			return err
		}
		switch num {
		case 0:
			if r.i != len(b) {
				return errors.New("malformed compact message: bytes left over")
			}
			return nil
		case answerMore:
			if r.i >= len(b) {
				return errShort
			}
			a.More = b[r.i] != 0
			r.i++
		case answerErr:
			a.Err = &Error{}
			if err := planOf(errorType).dec(r, reflect.ValueOf(a.Err).Elem()); err != nil {
				return err
			}
		case answerBody:
			n, err := r.length(1)
			if err != nil {
				return err
			}
			a.Body = b[r.i : r.i+n : r.i+n]
			r.i += n
		default:
			return fmt.Errorf("malformed compact message: %s has no field %d", reflect.TypeFor[Answer](), num)
		}
	}
}
