package localwire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"reflect"
	"runtime"
	"testing"

	"github.com/drover-hpc/drover/internal/acct"
	"github.com/drover-hpc/drover/internal/api"
	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/wiretest"
)

// The fuzz targets run over their seeds (f.Add and testdata/fuzz) in every
// `go test`; `go test -fuzz=FuzzDecodeRequest -fuzztime=2m` explores.

// requests are the values the controller decodes from what any local
// user sends: the Request frame and every call's argument (calls.go in
// internal/localapi).
var requests = []any{Request{}, model.JobSpec{}, ListQuery{}, Selection{}, NodeUpdate{}, StepCreate{}, JobEnd{},
	Attach{}, StatsQuery{}, api.BroadcastRequest{}, acct.Query{}, AcctChange{}, Reset{}, model.ResvRequest{},
	api.TokenSpec{}, Text{}}

// answers are what the commands decode from the controller.
var answers = []any{Answer{}, JobList{}, JobID{}, []*model.Node{}, []*model.Partition{}, []api.JobResult{},
	api.PingResult{}, []api.KV{}, StepCreated{}, model.Step{}, Stats{}, []*acct.Job{}, model.AcctDB{}, Text{},
	api.DiagInfo{}, api.PriorityInfo{}, Reservations{}, TokenMade{}, []*model.JoinToken{}}

// seeds adds, for each type, a filled value's and a zero value's form
// behind the type's index.
func seeds(f *testing.F, types []any) {
	for i, m := range types {
		v := reflect.New(reflect.TypeOf(m))
		f.Add(append([]byte{byte(i)}, AppendCompact(nil, v.Interface())...))
		wiretest.FillValue(v)
		f.Add(append([]byte{byte(i)}, AppendCompact(nil, v.Interface())...))
	}
}

// allocated returns the bytes fn allocates (the whole process's: the
// fuzzing engine's own are noise far below the bounds checked).
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// checkDecode decodes data[1:] into the type data[0] picks, within
// bound: no panic (the fuzzing engine reports one), allocation within
// the bound (reflection's overhead: twice it), and a decoded value
// encodes to a form that decodes to the same form again.
func checkDecode(t *testing.T, types []any, data []byte, bound func(int) uint64) {
	if len(data) == 0 {
		return
	}
	typ := reflect.TypeOf(types[int(data[0])%len(types)])
	b := data[1:]
	v := reflect.New(typ)
	var err error
	n := allocated(func() { err = DecodeCompact(b, v.Interface(), bound(len(b))) })
	if limit := 2*bound(len(b)) + 64<<10; n > limit {
		t.Fatalf("%s: %d bytes allocated decoding %d (bound %d)", typ, n, len(b), limit)
	}
	if err != nil {
		return
	}
	again := AppendCompact(nil, v.Interface())
	w := reflect.New(typ)
	if err := DecodeCompact(again, w.Interface(), AnswerAlloc(len(again))); err != nil {
		t.Fatalf("%s: its own encoding does not decode: %v", typ, err)
	}
	if third := AppendCompact(nil, w.Interface()); !bytes.Equal(again, third) {
		t.Fatalf("%s: encoding is not stable: %x then %x", typ, again, third)
	}
}

// FuzzDecodeRequest: whatever a local user sends, the controller's
// decoding ends in a value or an error, within RequestAlloc.
func FuzzDecodeRequest(f *testing.F) {
	seeds(f, requests)
	f.Fuzz(func(t *testing.T, data []byte) { checkDecode(t, requests, data, RequestAlloc) })
}

// FuzzDecodeAnswer: the commands' decoding of answers, and what they do
// with a listing and an error, never panics.
func FuzzDecodeAnswer(f *testing.F) {
	seeds(f, answers)
	f.Add(append([]byte{1}, AppendCompact(nil, NewJobList([]*model.Job{wiretest.Filled[model.Job](), {ID: 2}}, 1))...))
	f.Add(append([]byte{0}, AppendCompact(nil, &Answer{Err: ToError(api.ErrTryAgain)})...))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkDecode(t, answers, data, AnswerAlloc)
		if len(data) == 0 {
			return
		}
		var l JobList
		if DecodeAnswer(data[1:], &l) == nil {
			if jl, err := l.API(); err == nil {
				for _, j := range jl.Jobs {
					if j == nil || j.Spec == nil {
						t.Fatal("a listing's API() has a job or spec missing")
					}
				}
			}
		}
		var a Answer
		if DecodeAnswer(data[1:], &a) == nil && a.Err != nil && a.Err.Err() == nil {
			t.Fatal("an error answer turned into no error")
		}
	})
}

// FuzzReadFrame: a frame reader never allocates after a header's claim,
// only after the bytes that came, and never returns more than max.
func FuzzReadFrame(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0}, uint32(16))
	f.Add([]byte{0, 0, 0, 3, 'a', 'b', 'c', 0, 0}, uint32(16))
	f.Add([]byte{0x03, 0xff, 0xff, 0xff, 1}, uint32(MaxRequest))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff}, uint32(MaxAnswer))
	f.Add([]byte{0, 0}, uint32(16))
	f.Fuzz(func(t *testing.T, data []byte, max uint32) {
		max %= MaxAnswer + 1
		var b []byte
		var err error
		n := allocated(func() { b, err = ReadFrame(bytes.NewReader(data), int(max)) })
		if limit := 4*uint64(len(data)) + 2*frameChunk; n > limit {
			t.Fatalf("%d bytes allocated reading %d (claim %x)", n, len(data), data[:min(4, len(data))])
		}
		if err != nil {
			if len(data) >= 4 && binary.BigEndian.Uint32(data) <= max && 4+int(binary.BigEndian.Uint32(data)) <= len(data) {
				t.Fatalf("a whole frame was refused: %v", err)
			}
			return
		}
		if len(b) > int(max) || !bytes.Equal(b, data[4:4+len(b)]) {
			t.Fatalf("read %d bytes that are not the frame's", len(b))
		}
	})
}

// TestHostileRequestsStayWithinTheirBound: the messages that cost the
// most memory per byte — many empty elements of the largest types — are
// refused before they allocate past RequestAlloc, and a frame's header
// alone allocates nothing like its claim.
func TestHostileRequestsStayWithinTheirBound(t *testing.T) {
	const n = 1 << 20
	specField, _ := reflect.TypeOf(model.Job{}).FieldByName("Spec")
	empties := func(prefix []byte, each []byte) []byte {
		b := binary.AppendUvarint(prefix, n/uint64(len(each)))
		return append(b, bytes.Repeat(each, n/len(each))...)
	}
	for name, c := range map[string]struct {
		v       any
		b       []byte
		refused bool
	}{
		// Sel's Targets: 4 Mi empty 56-byte targets.
		"scancel targets": {&Selection{}, append(empties([]byte{1, 1}, []byte{0}), 0, 0), true},
		// A listing of 1 Mi empty jobs with empty specs (the
		// answers' shape, sent as a request).
		"jobs with specs": {&JobList{}, append(empties([]byte{1}, []byte{1, byte(specField.Index[0] + 1), 0, 0}), 0), true},
		// A field repeated (a request: the answer's bound is looser): each one a new 568-byte spec.
		"repeated pointer field": {&StepCreated{}, append(bytes.Repeat([]byte{1, 0}, n/2), 0), true},
		// 512 Ki entries of one key, each charged as a new one.
		"map of one key": {&NodeUpdate{}, append(empties([]byte{2}, []byte{0, 0}), 0), true},
	} {
		var err error
		got := allocated(func() { err = Decode(c.b, c.v) })
		if c.refused && !errors.Is(err, ErrAllocBound) {
			t.Errorf("%s: %v, want ErrAllocBound", name, err)
		}
		if limit := 2 * RequestAlloc(len(c.b)); got > limit {
			t.Errorf("%s: %d bytes of %d allocated %d (bound %d)", name, len(c.b), got, got, limit)
		}
	}
	hdr := binary.BigEndian.AppendUint32(nil, MaxRequest)
	got := allocated(func() {
		if _, err := ReadFrame(io.MultiReader(bytes.NewReader(hdr), bytes.NewReader([]byte("x"))), MaxRequest); err == nil {
			t.Error("a frame of 1 byte of a claimed 64 MiB was read")
		}
	})
	if got > 2*frameChunk {
		t.Errorf("a 64 MiB claim with 1 byte sent allocated %d bytes", got)
	}
}
