package cli

import (
	"errors"
	"reflect"
	"slices"
	"strconv"
	"testing"

	"github.com/drover-hpc/drover/internal/model"
)

func TestParseJobTargets(t *testing.T) {
	tests := []struct {
		args []string
		want []JobTarget
	}{
		{[]string{"123"}, []JobTarget{{ID: 123, Raw: "123"}}},
		{[]string{"123_4"}, []JobTarget{{ID: 123, Tasks: []int{4}, Raw: "123_4"}}},
		{[]string{"123_*"}, []JobTarget{{ID: 123, Raw: "123_*"}}},
		{[]string{"123_[1-3,7]"}, []JobTarget{{ID: 123, Tasks: []int{1, 2, 3, 7}, Raw: "123_[1-3,7]"}}},
		{[]string{"123_[1-7:2]"}, []JobTarget{{ID: 123, Tasks: []int{1, 3, 5, 7}, Raw: "123_[1-7:2]"}}},
		{[]string{"9_[5,1,3-4,1]"}, []JobTarget{{ID: 9, Tasks: []int{1, 3, 4, 5}, Raw: "9_[5,1,3-4,1]"}}},
		{[]string{"123.batch"}, []JobTarget{{ID: 123, Raw: "123.batch", HasStep: true, Step: model.StepBatch}}},
		{[]string{"123.0"}, []JobTarget{{ID: 123, Raw: "123.0", HasStep: true, Step: 0}}},
		{[]string{"123.17"}, []JobTarget{{ID: 123, Raw: "123.17", HasStep: true, Step: 17}}},
		{[]string{"123_4.extern"}, []JobTarget{{ID: 123, Tasks: []int{4}, Raw: "123_4.extern", HasStep: true, Step: model.StepExtern}}},
		{[]string{"5.interactive"}, []JobTarget{{ID: 5, Raw: "5.interactive", HasStep: true, Step: model.StepInteractive}}},
		{[]string{"7_*.0"}, []JobTarget{{ID: 7, Raw: "7_*.0", HasStep: true, Step: 0}}},
		{[]string{"1.0,1.batch"}, []JobTarget{{ID: 1, Raw: "1.0", HasStep: true, Step: 0},
			{ID: 1, Raw: "1.batch", HasStep: true, Step: model.StepBatch}}},
		{[]string{"1,2", "3"}, []JobTarget{{ID: 1, Raw: "1"}, {ID: 2, Raw: "2"}, {ID: 3, Raw: "3"}}},
		{[]string{"5_[1,2],6"}, []JobTarget{{ID: 5, Tasks: []int{1, 2}, Raw: "5_[1,2]"}, {ID: 6, Raw: "6"}}},
		{[]string{" 7 8,,9 "}, []JobTarget{{ID: 7, Raw: "7"}, {ID: 8, Raw: "8"}, {ID: 9, Raw: "9"}}},
		{[]string{"4294967295"}, []JobTarget{{ID: 4294967295, Raw: "4294967295"}}},
		{[]string{"1_4000000"}, []JobTarget{{ID: 1, Tasks: []int{4000000}, Raw: "1_4000000"}}},
	}
	for _, tt := range tests {
		got, err := ParseJobTargets(tt.args)
		if err != nil {
			t.Errorf("ParseJobTargets(%q): %v", tt.args, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ParseJobTargets(%q) = %+v, want %+v", tt.args, got, tt.want)
		}
	}
}

func TestParseJobTargetsErrors(t *testing.T) {
	tests := []struct {
		arg, bad string
	}{
		{"", ""},
		{",", ","},
		{"abc", "abc"},
		{"0", "0"},
		{"-1", "-1"},
		{"12x", "12x"},
		{"4294967296", "4294967296"},
		{"123_", "123_"},
		{"123_x", "123_x"},
		{"123_[]", "123_[]"},
		{"123_[1-3", "123_[1-3"},
		{"123_1-3]", "123_1-3]"},
		{"123_[[1]]", "123_[[1]]"},
		{"123_[3-1]", "123_[3-1]"},
		{"123_[1-7:0]", "123_[1-7:0]"},
		{"123_[7:2]", "123_[7:2]"},
		{"123_[1-3%2]", "123_[1-3%2]"},
		{"123_[1-3].batch", "123_[1-3].batch"},
		{"123_4000001", "123_4000001"},
		{"123_[0-4000000]", "123_[0-4000000]"},
		{"123.", "123."},
		{"123.foo", "123.foo"},
		{"123.1.2", "123.1.2"},
		{"123+1", "123+1"},
		{"1,x", "x"},
	}
	for _, tt := range tests {
		_, err := ParseJobTargets([]string{tt.arg})
		var ie *InvalidJobIDError
		if !errors.As(err, &ie) {
			t.Errorf("ParseJobTargets(%q) error = %v, want *InvalidJobIDError", tt.arg, err)
			continue
		}
		if ie.Arg != tt.bad {
			t.Errorf("ParseJobTargets(%q) Arg = %q, want %q", tt.arg, ie.Arg, tt.bad)
		}
		if err.Error() != MsgInvalidJobID {
			t.Errorf("message = %q", err.Error())
		}
	}
}

func TestJobTargetStep(t *testing.T) {
	for raw, want := range map[string]string{
		"123": "", "123.batch": "batch", "123_4.0": "0", "123_[1-3]": "", "5.interactive": "interactive",
	} {
		if got := (JobTarget{Raw: raw}).StepName(); got != want {
			t.Errorf("StepName(%q) = %q, want %q", raw, got, want)
		}
		ts, err := ParseJobTargets([]string{raw})
		if err != nil || len(ts) != 1 {
			t.Fatalf("ParseJobTargets(%q) = %v, %v", raw, ts, err)
		}
		if ts[0].HasStep != (want != "") || ts[0].HasStep && ts[0].Step.String() != want {
			t.Errorf("ParseJobTargets(%q) step = %v %v, want %q", raw, ts[0].HasStep, ts[0].Step, want)
		}
	}
}

func FuzzParseJobTargets(f *testing.F) {
	for _, s := range []string{"123", "1_[1-3,7]", "2_[1-9:3]", "3.batch", "4_5.0", "1,2 3", "7_*", "x", "1_[", "]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseJobTargets([]string{s})
		if err != nil {
			if err.Error() != MsgInvalidJobID {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		for _, tg := range got {
			if tg.ID == 0 {
				t.Fatalf("zero id from %q", s)
			}
			if !slices.IsSorted(tg.Tasks) || len(slices.Compact(slices.Clone(tg.Tasks))) != len(tg.Tasks) {
				t.Fatalf("tasks not sorted/unique: %v", tg.Tasks)
			}
			for _, v := range tg.Tasks {
				if v < 0 || v > MaxTaskID {
					t.Fatalf("task %d out of range", v)
				}
			}
			if tg.HasStep != (tg.StepName() != "") || !tg.HasStep && tg.Step != 0 {
				t.Fatalf("step of %q: HasStep %v Step %v, StepName %q", tg.Raw, tg.HasStep, tg.Step, tg.StepName())
			}
			if n, err := strconv.ParseUint(tg.StepName(), 10, 32); tg.HasStep && err == nil && int64(tg.Step) != int64(n) {
				t.Fatalf("step of %q = %v", tg.Raw, tg.Step)
			}
			again, err := ParseJobTargets([]string{tg.Raw})
			if err != nil || len(again) != 1 || !reflect.DeepEqual(again[0], tg) {
				t.Fatalf("raw %q does not re-parse to itself: %+v %v", tg.Raw, again, err)
			}
		}
	})
}
