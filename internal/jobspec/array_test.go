package jobspec

import (
	"errors"
	"slices"
	"testing"

	"github.com/drover-hpc/drover/internal/model"
)

func TestParseArray(t *testing.T) {
	tests := []struct {
		in       string
		ids      []int
		throttle int
	}{
		{"0-15:4%2", []int{0, 4, 8, 12}, 2},
		{"1,3,5-7", []int{1, 3, 5, 6, 7}, 0},
		{"1-10%2", []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 2},
		{"7", []int{7}, 0},
		{"0", []int{0}, 0},
		{"5,1,3,1", []int{1, 3, 5}, 0},
		{"1-7:2,2", []int{1, 2, 3, 5, 7}, 0},
		{"3%0", []int{3}, 0},
		{"2147483647", []int{2147483647}, 0},
		{"2147483640-2147483647:5", []int{2147483640, 2147483645}, 0},
	}
	for _, tc := range tests {
		got, err := ParseArray(tc.in)
		if err != nil {
			t.Errorf("ParseArray(%q): %v", tc.in, err)
			continue
		}
		if !slices.Equal(got.TaskIDs, tc.ids) || got.Throttle != tc.throttle || got.Raw != tc.in {
			t.Errorf("ParseArray(%q) = %+v, want ids %v throttle %d", tc.in, got, tc.ids, tc.throttle)
		}
	}
}

func TestParseArrayErrors(t *testing.T) {
	for _, in := range []string{
		"", "-1", "5-1", "1-10:0", "1-10:", "abc", "1,,2", "1-", "-", "%2", "1%", "1%x",
		"1%-2", "1:2", "1-2-3", "1 ", " 1", "1-10%2%3", "0-4000000", "0-3999999,0-1",
		"99999999999999999999", "1-99999999999", "+1", "0x10", "0-4000000000:1000000000",
	} {
		_, err := ParseArray(in)
		var e *Error
		if !errors.As(err, &e) || e.Msg != "Invalid job array specification" {
			t.Errorf("ParseArray(%q) error = %v, want Invalid job array specification", in, err)
		}
	}
	if a, err := ParseArray("0-3999999"); err != nil || len(a.TaskIDs) != MaxArrayTasks {
		t.Errorf("ParseArray at the size limit: %v", err)
	}
}

func TestParseNodes(t *testing.T) {
	tests := []struct {
		in       string
		min, max int
		err      string
	}{
		{"2", 2, 2, ""},
		{"2-4", 2, 4, ""},
		{"1k", 1024, 1024, ""},
		{"3-", 3, model.Unset, ""},
		{"-4", 1, 4, ""},
		{"4-2", 0, 0, "Maximum node count 2 is less than minimum node count 4"},
		{"x", 0, 0, `"x" is not a valid node count`},
		{"2-y", 0, 0, `"y" is not a valid node count`},
		{"0", 0, 0, "invalid number of nodes (-N 0-0)"},
		{"", 0, 0, `"" is not a valid node count`},
	}
	for _, tc := range tests {
		lo, hi, err := ParseNodes(tc.in)
		if tc.err != "" {
			var e *Error
			if !errors.As(err, &e) || e.Msg != tc.err {
				t.Errorf("ParseNodes(%q) error = %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || lo != tc.min || hi != tc.max {
			t.Errorf("ParseNodes(%q) = %d, %d, %v; want %d, %d", tc.in, lo, hi, err, tc.min, tc.max)
		}
	}
}
