package localapi

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/drover-hpc/drover/internal/api"
	"github.com/drover-hpc/drover/internal/localwire"
	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/wire"
)

// fill sets every exported field of the value v points to (recursively)
// to a distinct non-zero value, so that a field one transport carries and
// the other does not shows as a difference.
func fill(v reflect.Value, n *int) {
	*n++
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		fill(v.Elem(), n)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), n)
			}
		}
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
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 1, 1)
		fill(s.Index(0), n)
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(k, n)
		fill(e, n)
		m.SetMapIndex(k, e)
		v.Set(m)
	}
}

func filled[T any]() *T {
	var x T
	n := 0
	fill(reflect.ValueOf(&x), &n)
	return &x
}

// overJSON is what the local client reads of an answer.
func overJSON[T any](t *testing.T, v any) T {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out T
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// diff names the fields of a and b (same struct type) that differ.
func diff(a, b any) []string {
	va, vb := reflect.ValueOf(a).Elem(), reflect.ValueOf(b).Elem()
	var out []string
	for i := range va.NumField() {
		if va.Type().Field(i).IsExported() && !reflect.DeepEqual(va.Field(i).Interface(), vb.Field(i).Interface()) {
			out = append(out, va.Type().Field(i).Name)
		}
	}
	return out
}

// TestJobsLookTheSameOverBothTransports: a job listed over the local
// socket is the job the gRPC adapter would show, field for field — the
// same cut of secrets and long strings, the same display state and start
// time — whatever fields the model grows.
func TestJobsLookTheSameOverBothTransports(t *testing.T) {
	for _, state := range []model.JobState{model.JobPending, model.JobRunning} {
		j := filled[model.Job]()
		j.State, j.Completing = state, false
		j.Spec.KillInvalidDep = 1
		for _, c := range []struct {
			name string
			q    api.JobQuery
			grpc func() *model.Job
		}{
			{"listing", api.JobQuery{}, func() *model.Job { return wire.JobFromPB(wire.JobToPB(j, wire.Listing)) }},
			{"summary", api.JobQuery{Summary: true}, func() *model.Job {
				return wire.JobsFromListing(wire.SummaryListing([]*model.Job{j}, 0, false))[0]
			}},
			{"summary with steps", api.JobQuery{Summary: true, WithSteps: true}, func() *model.Job {
				return wire.JobsFromListing(wire.SummaryListing([]*model.Job{j}, 0, true))[0]
			}},
		} {
			want := c.grpc()
			l := overJSON[localwire.JobList](t, listing([]*model.Job{j}, 0, c.q))
			got := l.API().Jobs[0]
			if d := diff(want, got); len(d) > 0 {
				t.Errorf("%v job, %s: fields differ from gRPC's: %v", state, c.name, d)
			}
			if d := diff(want.Spec, got.Spec); len(d) > 0 {
				t.Errorf("%v job, %s: spec fields differ from gRPC's: %v", state, c.name, d)
			}
			if len(want.Steps) > 0 && len(got.Steps) > 0 {
				if d := diff(want.Steps[0], got.Steps[0]); len(d) > 0 {
					t.Errorf("%v job, %s: step fields differ from gRPC's: %v", state, c.name, d)
				}
			}
		}
	}
}

func TestNodesLookTheSameOverBothTransports(t *testing.T) {
	n := filled[model.Node]()
	want := wire.NodeFromPB(wire.NodeToPB(n))
	got := overJSON[localwire.Node](t, viewNode(n)).Model()
	if d := diff(want, got); len(d) > 0 {
		t.Errorf("node fields differ from gRPC's: %v", d)
	}
	p := filled[model.Partition]()
	if d := diff(wire.PartitionFromPB(wire.PartitionToPB(p)), overJSON[*model.Partition](t, p)); len(d) > 0 {
		t.Errorf("partition fields differ from gRPC's: %v", d)
	}
}
