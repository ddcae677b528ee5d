package localwire

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/wiretest"
)

// sampleList is a listing with every job field set, jobs alike and
// different, a job without a spec and a nil one.
func sampleList() *JobList {
	j := wiretest.Filled[model.Job]()
	spec := *j.Spec
	other := spec
	other.Account = "other"
	k := *j
	k.ID, k.UserName, k.Reason, k.Spec = 2, "bob", "Priority", &spec
	return NewJobList([]*model.Job{j, &k, {ID: 3, Name: j.Name, Spec: &other}, {ID: 4},
		{ID: 5, ArrayTaskID: -1, TimeLimit: -1, Nice: -20}}, 1700000000)
}

// TestListingDecodesAsThePlan: the listing reader gives what the
// reflection plan gives, field for field.
func TestListingDecodesAsThePlan(t *testing.T) {
	for _, l := range []*JobList{sampleList(), NewJobList(nil, 0), NewJobList([]*model.Job{}, 5)} {
		b := AppendCompact(nil, l)
		if len(l.Jobs) > 0 {
			// With a nil job too (no adapter sends one; both read it).
			b = AppendJobListHead(nil, len(l.Jobs)+1)
			for _, j := range l.Jobs {
				b = AppendJobRecord(b, j)
			}
			b = AppendJobRecord(b, nil)
			b = AppendJobListTail(b, append(l.Spec, 0), l.Specs, l.Now)
		}
		var fast, plan JobList
		if err := decodeJobList(b, &fast, AnswerAlloc(len(b))); err != nil {
			t.Fatal(err)
		}
		if err := DecodeCompact(b, &plan, AnswerAlloc(len(b))); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(fast, plan) {
			t.Errorf("the listing reader and the plan disagree on %d jobs", len(l.Jobs))
		}
	}
}

// TestListingPartsMakeTheListing: AppendJobListHead, the records and
// AppendJobListTail make the bytes of the JobList's compact form.
func TestListingPartsMakeTheListing(t *testing.T) {
	// (An adapter's listing always has a Jobs slice, maybe empty.)
	for _, l := range []*JobList{sampleList(), NewJobList([]*model.Job{}, 0), NewJobList([]*model.Job{}, 5)} {
		b := AppendJobListHead(nil, len(l.Jobs))
		for _, j := range l.Jobs {
			b = AppendJobRecord(b, j)
		}
		b = AppendJobListTail(b, l.Spec, l.Specs, l.Now)
		if want := AppendCompact(nil, l); !bytes.Equal(b, want) {
			t.Errorf("%d jobs: the parts make %x, the listing is %x", len(l.Jobs), b, want)
		}
	}
}

// TestHotJobFieldsMatchTheModel: every field the listing reader sets by
// hand is a field of model.Job whose kind reads as its setter does.
func TestHotJobFieldsMatchTheModel(t *testing.T) {
	for name, h := range hotJobFields {
		f, ok := jobType.FieldByName(name)
		if !ok {
			t.Errorf("model.Job has no field %s", name)
		} else if classOfType(f.Type) != h.class {
			t.Errorf("model.Job.%s is a %s: its setter reads another kind", name, f.Type)
		}
	}
}

// TestListingReaderRefusesWhatThePlanRefuses: a listing cut short, or
// with any one byte changed, is refused by both readers or read alike by
// both — never a panic.
func TestListingReaderRefusesWhatThePlanRefuses(t *testing.T) {
	b := AppendCompact(nil, sampleList())
	try := func(what string, m []byte) {
		t.Helper()
		var fast, plan JobList
		ferr, perr := decodeJobList(m, &fast, AnswerAlloc(len(m))), DecodeCompact(m, &plan, AnswerAlloc(len(m)))
		if (ferr == nil) != (perr == nil) {
			t.Fatalf("%s: listing reader %v, plan %v", what, ferr, perr)
		}
		if ferr == nil && !reflect.DeepEqual(fast, plan) {
			t.Fatalf("%s: read differently", what)
		}
	}
	for n := range len(b) {
		try("cut", b[:n])
	}
	m := make([]byte, len(b))
	for i := range b {
		for _, x := range []byte{0, 0xff, b[i] + 1} {
			copy(m, b)
			m[i] = x
			try("changed", m)
		}
	}
}

// TestAnswerReaderKnowsTheFields: the answer reader's field numbers are
// Answer's, and it reads what the plan reads (the body without a copy).
func TestAnswerReaderKnowsTheFields(t *testing.T) {
	at := reflect.TypeFor[Answer]()
	for num, name := range map[int]string{answerMore: "More", answerErr: "Err", answerBody: "Body"} {
		if at.NumField() != 3 || at.Field(num-1).Name != name {
			t.Fatalf("Answer's field %d is not %s: update decodeAnswer", num, name)
		}
	}
	for _, a := range []*Answer{{}, {More: true, Body: []byte("chunk")}, {Err: &Error{Kind: "api", Code: 3, Msg: "no"}},
		{Body: AppendCompact(nil, sampleList())}} {
		b := AppendCompact(nil, a)
		var fast, plan Answer
		if err := DecodeAnswer(b, &fast); err != nil {
			t.Fatal(err)
		}
		if err := DecodeCompact(b, &plan, AnswerAlloc(len(b))); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(fast, plan) {
			t.Errorf("the answer reader read %+v, the plan %+v", fast, plan)
		}
		for n := range len(b) {
			var f, p Answer
			if (DecodeAnswer(b[:n], &f) == nil) != (DecodeCompact(b[:n], &p, AnswerAlloc(n)) == nil) {
				t.Fatalf("cut at %d of %d: the readers disagree", n, len(b))
			}
		}
	}
}

// TestAnswerPartsMakeTheAnswer: an answer written in parts is the frame
// of its compact form.
func TestAnswerPartsMakeTheAnswer(t *testing.T) {
	long := bytes.Repeat([]byte("listing"), 20000) // past one write's 64 KiB
	for _, a := range []*Answer{{}, {More: true, Body: []byte("chunk")}, {Err: &Error{Kind: "api", Code: 3, Msg: "no"}},
		{Body: []byte{}}, {Err: &Error{Msg: "x"}, Body: long}, {Body: long}} {
		var parts, whole bytes.Buffer
		head, body, tail := AnswerParts(a)
		if err := WriteFrameParts(&parts, head, body, tail); err != nil {
			t.Fatal(err)
		}
		if err := WriteFrame(&whole, AppendCompact(nil, a)); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(parts.Bytes(), whole.Bytes()) {
			t.Errorf("answer with a %d-byte body: the parts' frame differs from the answer's", len(a.Body))
		}
	}
}
