package fsm

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/state"
)

// fill sets every exported field under v (recursively) to a distinct
// non-zero value, or with zero set, to zero values behind non-nil
// pointers and one-element slices: a round trip that drops a field, or
// turns a pointer to 0 (--uid=0, a umask of 0) into "not given", shows.
func fill(v reflect.Value, n *int, zero bool) {
	*n++
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		fill(v.Elem(), n, zero)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), n, zero)
			}
		}
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 1, 1)
		fill(s.Index(0), n, zero)
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(k, n, zero)
		fill(e, n, zero)
		m.SetMapIndex(k, e)
		v.Set(m)
	}
	if zero {
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString("s" + string(rune('a'+*n%26)) + string(rune('a'+*n/26%26)))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(*n % 100))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(*n % 100))
	case reflect.Float32, reflect.Float64:
		v.SetFloat(float64(*n) / 4)
	}
}

func filledJob(id model.JobID, zero bool) *model.Job {
	var j model.Job
	n := int(id)
	fill(reflect.ValueOf(&j), &n, zero)
	j.ID = id
	return &j
}

// putJobs builds a store holding exactly jobs.
func putJobs(jobs ...*model.Job) *FSM {
	f := New(state.New(1), nil)
	txn := f.Store().Begin()
	for _, j := range jobs {
		txn.PutJob(j)
	}
	txn.SetNextJobID(100)
	txn.Commit(1)
	return f
}

func roundTrip(t *testing.T, f *FSM) *FSM {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteSnapshot(f.Store().Snapshot(), &buf); err != nil {
		t.Fatal(err)
	}
	g := New(state.New(1), nil)
	if err := g.Restore(&buf, 2); err != nil {
		t.Fatal(err)
	}
	return g
}

func sameJobs(t *testing.T, a, b *state.Snapshot) {
	t.Helper()
	if a.NumJobs() != b.NumJobs() || a.NumActive() != b.NumActive() || a.NumQueued() != b.NumQueued() {
		t.Errorf("restored %d jobs (%d active, %d queued), want %d (%d, %d)",
			b.NumJobs(), b.NumActive(), b.NumQueued(), a.NumJobs(), a.NumActive(), a.NumQueued())
	}
	a.EachJob(func(want *model.Job) bool {
		got := b.Job(want.ID)
		if got == nil {
			t.Errorf("job %d lost", want.ID)
			return true
		}
		wv, gv := reflect.ValueOf(want).Elem(), reflect.ValueOf(got).Elem()
		for i := range wv.NumField() {
			if wv.Type().Field(i).Name == "Spec" && want.Spec == nil {
				continue // comes back empty, never nil (checked below)
			}
			if !reflect.DeepEqual(wv.Field(i).Interface(), gv.Field(i).Interface()) {
				t.Errorf("job %d: %s = %+v after the round trip, want %+v", want.ID, wv.Type().Field(i).Name,
					gv.Field(i).Interface(), wv.Field(i).Interface())
			}
		}
		return true
	})
}

// TestSnapshotKeepsEveryJobField: every field of a job and of its spec
// survives a snapshot and restore, set or zero behind a pointer.
func TestSnapshotKeepsEveryJobField(t *testing.T) {
	full, zero := filledJob(1, false), filledJob(2, true)
	zero.State = model.JobPending // a job the indexes count as queued
	if zero.Spec.UID == nil || *zero.Spec.UID != 0 {
		t.Fatal("fill left a nil pointer")
	}
	f := putJobs(full, zero)
	sameJobs(t, f.Store().Snapshot(), roundTrip(t, f).Store().Snapshot())
}

// TestSnapshotSharesSpecs: array tasks, and separate jobs submitted with
// equal specs, come back sharing one spec; a job with its own (changed)
// spec keeps it.
func TestSnapshotSharesSpecs(t *testing.T) {
	mk := func(id model.JobID, sp *model.JobSpec) *model.Job {
		return &model.Job{ID: id, SpecID: id, ArrayTaskID: model.NoArrayTask, State: model.JobPending, Spec: sp, Name: "j"}
	}
	a, b := spec(), spec() // equal content, two pointers
	c := spec()
	c.Env = []string{"X=1"}
	arr := spec()
	jobs := []*model.Job{mk(1, a), mk(2, b), mk(3, c)}
	for i := range 3 {
		j := mk(model.JobID(4+i), arr)
		j.SpecID, j.ArrayJobID, j.ArrayTaskID = 4, 4, i
		jobs = append(jobs, j)
	}
	jobs = append(jobs, mk(7, nil))
	f := putJobs(jobs...)
	g := roundTrip(t, f).Store().Snapshot()
	sameJobs(t, f.Store().Snapshot(), g)
	if g.Job(1).Spec != g.Job(2).Spec || g.Job(1).Spec != g.Job(5).Spec {
		t.Error("jobs with equal specs do not share one after a restore")
	}
	if g.Job(3).Spec == g.Job(1).Spec || !reflect.DeepEqual(g.Job(3).Spec.Env, []string{"X=1"}) {
		t.Errorf("job 3's own spec: %+v", g.Job(3).Spec)
	}
	if g.Job(7).Spec == nil {
		t.Error("a job without a spec came back with a nil one")
	}
}

// TestRestoreReadsVersion2: a snapshot an older controller wrote (specs
// keyed by SpecID) still restores.
func TestRestoreReadsVersion2(t *testing.T) {
	full := filledJob(1, false)
	sp := full.Spec
	full.SpecID = 1
	var buf bytes.Buffer
	w := bufio.NewWriter(&buf)
	enc := json.NewEncoder(w)
	_ = enc.Encode(&header{Version: 2, NextJobID: 2})
	_ = enc.Encode(&record{SpecID: 1, Spec: sp})
	_ = enc.Encode(&record{Job: full})
	_ = w.Flush()
	g := New(state.New(1), nil)
	if err := g.Restore(&buf, 2); err != nil {
		t.Fatal(err)
	}
	got := g.Store().Snapshot().Job(1)
	if got == nil || !reflect.DeepEqual(got, full) {
		t.Errorf("version 2 job restored as %+v, want %+v", got, full)
	}
}

// TestRestoreReadsVersion3: numbered spec records as JSON.
func TestRestoreReadsVersion3(t *testing.T) {
	a, b := filledJob(1, false), filledJob(2, true)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	_ = enc.Encode(&header{Version: 3, NextJobID: 3})
	_ = enc.Encode(&record{Spec: a.Spec})
	_ = enc.Encode(&record{Job: a, SpecRef: 1})
	_ = enc.Encode(&record{Spec: b.Spec})
	_ = enc.Encode(&record{Job: b, SpecRef: 2})
	g := New(state.New(1), nil)
	if err := g.Restore(&buf, 2); err != nil {
		t.Fatal(err)
	}
	sameJobs(t, putJobs(a, b).Store().Snapshot(), g.Store().Snapshot())
}

// TestJobRecordsMatchFieldsByName: a snapshot from a build whose Job had
// other fields restores what both know — a field gone since is skipped
// whatever its kind, one added since reads as zero.
func TestJobRecordsMatchFieldsByName(t *testing.T) {
	var b []byte
	str := func(s string) { b = binary.AppendUvarint(b, uint64(len(s))); b = append(b, s...) }
	b = binary.AppendUvarint(b, 4)
	for _, f := range []struct{ name, kind string }{{"Gone", "s"}, {"Name", "s"}, {"GoneJSON", "j"}, {"ID", "u"}} {
		str(f.name)
		b = append(b, f.kind...)
	}
	b = append(b, recSpec)
	str(`{"name":"j","env":["A=1"]}`)
	b = append(b, recJob, 1)
	b = append(b, 1, 0)
	str("old")
	b = append(b, 2, 0)
	str("kept")
	b = append(b, 3)
	str(`{"x":[1,2]}`)
	b = append(b, 4, 7, 0, recEnd)
	var buf bytes.Buffer
	_ = json.NewEncoder(&buf).Encode(&header{Version: snapshotVersion, NextJobID: 8})
	buf.Write(b)
	g := New(state.New(1), nil)
	if err := g.Restore(&buf, 2); err != nil {
		t.Fatal(err)
	}
	j := g.Store().Snapshot().Job(7)
	if j == nil || j.Name != "kept" || j.Spec == nil || j.Spec.Name != "j" || j.State != 0 || j.Partition != "" {
		t.Fatalf("restored %+v", j)
	}
}

// TestGroupsWrittenAsJSON: the writer's own form of a job's groups is
// json.Marshal's, length included.
func TestGroupsWrittenAsJSON(t *testing.T) {
	for _, v := range [][]uint32{{}, {0}, {9}, {10}, {1000, 1001}, {4294967295, 0, 99, 100, 7}} {
		js, _ := json.Marshal(v)
		want := binary.AppendUvarint(nil, uint64(len(js)))
		want = append(want, js...)
		if got := appendUint32s(nil, v); !bytes.Equal(got, want) {
			t.Errorf("%v: %q, want %q", v, got, want)
		}
	}
}

// TestSnapshotKeepsExtremeJobFields: the writer reads integer fields by
// their size at their offsets; every signed field at its type's minimum
// (sign extension), every unsigned one at its maximum (no truncation),
// and empty non-nil slices come back as they were.
func TestSnapshotKeepsExtremeJobFields(t *testing.T) {
	for _, low := range []bool{true, false} {
		j := filledJob(1, false)
		v := reflect.ValueOf(j).Elem()
		for i := range v.NumField() {
			f := v.Field(i)
			if !v.Type().Field(i).IsExported() || v.Type().Field(i).Name == "Spec" || v.Type().Field(i).Name == "ID" {
				continue
			}
			bitsOf := uint(f.Type().Size() * 8)
			switch f.Kind() {
			case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
				if low {
					f.SetInt(-1 << (bitsOf - 1))
				} else {
					f.SetInt(1<<(bitsOf-1) - 1)
				}
			case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
				if low {
					f.SetUint(1)
				} else {
					f.SetUint(^uint64(0) >> (64 - bitsOf))
				}
			case reflect.Slice:
				if low {
					f.Set(reflect.MakeSlice(f.Type(), 0, 0))
				}
			}
		}
		f := putJobs(j)
		sameJobs(t, f.Store().Snapshot(), roundTrip(t, f).Store().Snapshot())
	}
}
