package fsm

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/drover-hpc/drover/internal/model"
)

// fillAll sets every field reachable from v to a value other than its zero,
// different from field to field, so that a round trip that drops or
// changes any field shows.
func fillAll(t *testing.T, v reflect.Value, n *int, path string) {
	*n++
	switch v.Kind() {
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(*n % 100))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(*n % 100))
	case reflect.Float32, reflect.Float64:
		v.SetFloat(float64(*n) / 7)
	case reflect.String:
		v.SetString(path + " é\u00a0\ufffd")
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fillAll(t, v.Elem(), n, path)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		for i := 0; i < 2; i++ {
			fillAll(t, v.Index(i), n, path)
		}
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fillAll(t, k, n, path)
		fillAll(t, e, n, path)
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			f := v.Type().Field(i)
			if !f.IsExported() {
				t.Errorf("%s.%s: unexported fields are lost in the log; the leader would keep them", path, f.Name)
				continue
			}
			fillAll(t, v.Field(i), n, path+"."+f.Name)
		}
	default:
		t.Errorf("%s: kind %s not covered by the round-trip test", path, v.Kind())
	}
}

// TestSubmitRoundTripsExactly: the leader applies the Submit body it
// encoded instead of decoding it again (ApplyDecoded), so decoding must
// give back every field as it was, or followers and a replay after a
// restart would reach another state.
func TestSubmitRoundTripsExactly(t *testing.T) {
	c := &Submit{}
	n := 0
	fillAll(t, reflect.ValueOf(c).Elem(), &n, "Submit")
	data, err := Encode(TypeSubmit, c)
	if err != nil {
		t.Fatal(err)
	}
	if !EquivalentAfterDecode(TypeSubmit, data) {
		t.Fatal("a valid Submit is not applied from its body")
	}
	_, back, err := Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, c) {
		t.Fatalf("round trip changed the command:\n%+v\n%+v", back.(*Submit).Spec, c.Spec)
	}
}

// TestInvalidUTF8IsDecoded: bytes that are not UTF-8 come back as U+FFFD,
// so such a command is applied from its decoded bytes on the leader too.
func TestInvalidUTF8IsDecoded(t *testing.T) {
	s := spec()
	s.Env = []string{"A=\xff"}
	data, err := Encode(TypeSubmit, &Submit{Spec: s, Partition: "p"})
	if err != nil {
		t.Fatal(err)
	}
	if EquivalentAfterDecode(TypeSubmit, data) {
		t.Fatal("invalid UTF-8 taken as round-tripping")
	}
	if data, _ := Encode(TypeSchedule, &Schedule{Now: 1}); EquivalentAfterDecode(TypeSchedule, data) {
		t.Fatal("a command without a round-trip test taken as round-tripping")
	}
}

// TestApplyDecodedMatchesApply: two FSMs, one fed bodies (the leader),
// one fed bytes (a follower, a replay), write the same snapshot.
func TestApplyDecodedMatchesApply(t *testing.T) {
	leader, replay := newHarness(t), newHarness(t)
	specs := []*model.JobSpec{spec(), spec(), spec(), spec()}
	specs[1].Hold = true
	specs[2].Env = []string{"PATH=/bin", "HOME=/home/u"}
	specs[3].Array = &model.ArraySpec{Raw: "1-3", TaskIDs: []int{1, 2, 3}}
	for i, s := range specs {
		c := &Submit{Spec: s, UID: 1000, GID: 100, Groups: []uint32{100, 200}, User: "u", Partition: "p",
			TimeLimit: 60, Priority: 5, Now: int64(200 + i)}
		data, err := Encode(TypeSubmit, c)
		if err != nil {
			t.Fatal(err)
		}
		leader.index++
		replay.index++
		a := leader.f.ApplyDecoded(leader.index, TypeSubmit, c)
		b := replay.f.Apply(replay.index, data)
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("submit %d: leader answered %v, replay %v", i, a, b)
		}
	}
	var la, rb bytes.Buffer
	if err := WriteSnapshot(leader.snap(), &la); err != nil {
		t.Fatal(err)
	}
	if err := WriteSnapshot(replay.snap(), &rb); err != nil {
		t.Fatal(err)
	}
	if la.String() != rb.String() || !strings.Contains(la.String(), "HOME=/home/u") {
		t.Fatalf("leader and replay differ:\n%s\n%s", la.String(), rb.String())
	}
}
