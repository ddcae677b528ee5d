package localwire

import (
	"math"
	"reflect"
	"testing"

	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/wiretest"
)

// TestFingerprintIsCurrent: the constant both ends send is the one of
// the types they carry. After changing a carried type, put the value
// this prints in fingerprint.go.
func TestFingerprintIsCurrent(t *testing.T) {
	if got := fingerprint(); got != Fingerprint {
		t.Errorf("the carried types changed: set Fingerprint = %#x in fingerprint.go", got)
	}
}

// TestEveryMessageHasAPlan: every carried type can be encoded (the form
// has no interfaces, functions or channels).
func TestEveryMessageHasAPlan(t *testing.T) {
	for _, m := range messages {
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%T: %v", m, r)
				}
			}()
			v := reflect.New(reflect.TypeOf(m))
			wiretest.FillValue(v)
			back := reflect.New(reflect.TypeOf(m))
			if err := DecodeCompact(AppendCompact(nil, v.Interface()), back.Interface(), AnswerAlloc(1<<20)); err != nil {
				t.Errorf("%T: %v", m, err)
			} else if !reflect.DeepEqual(v.Interface(), back.Interface()) {
				t.Errorf("%T does not come back whole", m)
			}
		}()
	}
}

// TestListingsShareSpecs: every field of a listed job and its spec
// survives, pointers to zero and NaN included, and jobs submitted alike
// share one spec.
func TestListingsShareSpecs(t *testing.T) {
	j := wiretest.Filled[model.Job]()
	zero := uint32(0)
	j.Spec.Umask = &zero
	j.Spec.Nice = -5
	want := *j
	spec := *j.Spec
	spec2 := spec
	l := NewJobList([]*model.Job{j, {ID: 2, Spec: &spec2}, {ID: 3}}, 7)
	var back JobList
	if err := Decode(AppendCompact(nil, l), &back); err != nil {
		t.Fatal(err)
	}
	got, err := back.API()
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Jobs) != 3 || got.Now != 7 || len(back.Specs) != 1 {
		t.Fatalf("got %d jobs at %d, %d specs", len(got.Jobs), got.Now, len(back.Specs))
	}
	g := got.Jobs[0]
	if d := wiretest.Diff(want.Spec, g.Spec); len(d) > 0 {
		t.Errorf("spec fields lost: %v", d)
	}
	want.Spec, g.Spec = nil, nil
	if d := wiretest.Diff(&want, g); len(d) > 0 {
		t.Errorf("job fields lost: %v", d)
	}
	if got.Jobs[1].Spec != back.Specs[0] || back.Specs[0].Umask == nil || *back.Specs[0].Umask != 0 {
		t.Error("jobs with the same spec do not share it, or a umask of 0 came back as none")
	}
	if got.Jobs[2].Spec == nil {
		t.Error("a job without a spec has none (commands read it unchecked)")
	}
	var f struct {
		F []float64
		M map[string]int64
		B []byte
	}
	f.F, f.M, f.B = []float64{math.NaN(), math.Inf(-1)}, map[string]int64{"cpu": -3}, []byte("raw")
	back2 := f
	back2.F, back2.M, back2.B = nil, nil, nil
	if err := DecodeCompact(AppendCompact(nil, &f), &back2, RequestAlloc(0)); err != nil || !math.IsNaN(back2.F[0]) || !math.IsInf(back2.F[1], -1) ||
		!reflect.DeepEqual(back2.M, f.M) || string(back2.B) != "raw" {
		t.Errorf("floats, maps and bytes: %+v, %v", back2, err)
	}
}

// TestCompactRefusesGarbage: truncated or corrupt messages are errors,
// never a panic or a huge allocation.
func TestCompactRefusesGarbage(t *testing.T) {
	b := AppendCompact(nil, NewJobList([]*model.Job{wiretest.Filled[model.Job]()}, 1))
	for n := range len(b) {
		var l JobList
		if err := Decode(b[:n], &l); err == nil {
			t.Fatalf("a message cut at %d of %d bytes decoded", n, len(b))
		}
	}
	for _, bad := range [][]byte{{0xff, 0xff, 0xff, 0xff, 0x0f}, {1, 0xff, 0xff, 0xff, 0xff, 0x0f}, {99}, append(b, 0)} {
		var l JobList
		if err := Decode(bad, &l); err == nil {
			t.Errorf("%x decoded", bad)
		}
	}
}
