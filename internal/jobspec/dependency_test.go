package jobspec

import (
	"errors"
	"reflect"
	"testing"

	"github.com/drover-hpc/drover/internal/model"
)

func TestParseDependency(t *testing.T) {
	const none = model.NoArrayTask
	term := func(ty model.DepType, job model.JobID, task int, delay int64) model.DepTerm {
		return model.DepTerm{Type: ty, Job: job, Task: task, Delay: delay}
	}
	tests := []struct {
		in    string
		any   bool
		terms []model.DepTerm
	}{
		{"afterok:1:2,afterany:3", false, []model.DepTerm{
			term(model.DepAfterOK, 1, none, 0), term(model.DepAfterOK, 2, none, 0), term(model.DepAfterAny, 3, none, 0)}},
		{"afterok:20:21?afterany:23", true, []model.DepTerm{
			term(model.DepAfterOK, 20, none, 0), term(model.DepAfterOK, 21, none, 0), term(model.DepAfterAny, 23, none, 0)}},
		{"after:5+10", false, []model.DepTerm{term(model.DepAfter, 5, none, 600)}},
		{"after:5+10:6", false, []model.DepTerm{term(model.DepAfter, 5, none, 600), term(model.DepAfter, 6, none, 0)}},
		{"singleton", false, []model.DepTerm{{Type: model.DepSingleton, Task: none}}},
		{"SINGLETON,afterok:9", false, []model.DepTerm{{Type: model.DepSingleton, Task: none}, term(model.DepAfterOK, 9, none, 0)}},
		{"afternotok:123_4", false, []model.DepTerm{term(model.DepAfterNotOK, 123, 4, 0)}},
		{"aftercorr:123_*", false, []model.DepTerm{term(model.DepAfterCorr, 123, none, 0)}},
		{"AfterOK:7", false, []model.DepTerm{term(model.DepAfterOK, 7, none, 0)}},
		{"123", false, []model.DepTerm{term(model.DepAfterAny, 123, none, 0)}},
		{"123:456", false, []model.DepTerm{term(model.DepAfterAny, 123, none, 0), term(model.DepAfterAny, 456, none, 0)}},
		{"afterany:4294967293", false, []model.DepTerm{term(model.DepAfterAny, 4294967293, none, 0)}},
	}
	for _, tc := range tests {
		got, err := ParseDependency(tc.in)
		if err != nil {
			t.Errorf("ParseDependency(%q): %v", tc.in, err)
			continue
		}
		want := &model.Dependency{Raw: tc.in, Any: tc.any, Terms: tc.terms}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("ParseDependency(%q) = %+v, want %+v", tc.in, got, want)
		}
	}
}

func TestParseDependencyErrors(t *testing.T) {
	for _, in := range []string{
		"", "afterok", "afterok:", "afterok:1,afterany:2?after:3", "afterfoo:1",
		"singleton:1", "afterok:0", "afterok:x", "afterok:1+5", "after:1+", "after:1+x",
		"afterok:1_", "afterok:1_x", "afterok:1::2", "afterok:1,", ",afterok:1", "after:-1",
		"afterok:4294967294", "afterok: 1", "expand:1", "afterburstbuffer:1", "?", "1_2_3",
	} {
		_, err := ParseDependency(in)
		var e *Error
		if !errors.As(err, &e) || e.Msg != "Job dependency problem" {
			t.Errorf("ParseDependency(%q) error = %v, want Job dependency problem", in, err)
		}
	}
}
