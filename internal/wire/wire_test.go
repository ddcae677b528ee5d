package wire

import (
	"reflect"
	"testing"

	"github.com/drover-hpc/drover/internal/model"
)

func TestSummaryListingSharesSpecs(t *testing.T) {
	mk := func(workDir string) *model.JobSpec {
		return &model.JobSpec{Name: "x", Partition: "p", Account: "a", WorkDir: workDir, Env: []string{"A=1"},
			Script: "#!/bin/sh\n", MinNodes: 2, NTasks: model.Unset, CPUsPerTask: 3, MemPerNode: model.Unset,
			MemPerCPU: 100, Array: &model.ArraySpec{Raw: "1-3%2", TaskIDs: []int{1, 2, 3}, Throttle: 2}}
	}
	jobs := []*model.Job{
		{ID: 1, Spec: mk("/a"), State: model.JobPending, ArrayTaskID: model.NoArrayTask},
		{ID: 2, Spec: mk("/b"), State: model.JobRunning, ArrayTaskID: model.NoArrayTask, Alloc: []model.NodeAlloc{{Node: "n1", CPUs: 3}}},
		{ID: 3, Spec: &model.JobSpec{Name: "y", MinNodes: 1}, ArrayTaskID: model.NoArrayTask},
	}
	r := SummaryListing(jobs, 99, false)
	if len(r.Specs) != 2 {
		t.Fatalf("%d distinct specs, want 2 (paths are not part of a summary)", len(r.Specs))
	}
	got := JobsFromListing(r)
	if got[0].Spec != got[1].Spec {
		t.Error("jobs with equal summary specs do not share one")
	}
	s := got[0].Spec
	if s.WorkDir != "" || s.Script != "" || s.Env != nil || s.Array.TaskIDs != nil {
		t.Errorf("summary carries long fields: %+v", s)
	}
	want := model.JobSpec{Name: "x", Partition: "p", Account: "a", MinNodes: 2, NTasks: model.Unset, CPUsPerTask: 3,
		MemPerNode: model.Unset, MemPerCPU: 100, Array: &model.ArraySpec{Raw: "1-3%2", Throttle: 2}}
	if !reflect.DeepEqual(*s, want) {
		t.Errorf("summary spec\n got %+v\nwant %+v", *s, want)
	}
	if got[1].State != model.JobRunning || got[1].Alloc[0].Node != "n1" || got[2].Spec.Name != "y" {
		t.Errorf("job fields lost: %+v %+v", got[1], got[2])
	}
}

func TestFullRoundTrip(t *testing.T) {
	spec := &model.JobSpec{Name: "x", Script: "s", Env: []string{"A=1"}, Argv: []string{"a"}, WorkDir: "/w",
		Dependency: &model.Dependency{Raw: "afterok:1", Terms: []model.DepTerm{{Type: model.DepAfterOK, Job: 1, Task: -1}}},
		Array:      &model.ArraySpec{Raw: "0-1", TaskIDs: []int{0, 1}}, TimeLimit: 60, MinNodes: 1, Interactive: true, IOAddr: "h:1", IOKey: "k"}
	j := &model.Job{ID: 7, ArrayJobID: 7, ArrayTaskID: 0, Spec: spec, UserID: 5, Groups: []uint32{1, 2}, State: model.JobTimeout,
		ExitCode: 3, Signal: 15, Alloc: []model.NodeAlloc{{Node: "n", CPUs: 2, Mem: 10}}}
	back := JobFromPB(JobToPB(j, Full))
	if !reflect.DeepEqual(back, j) {
		t.Errorf("round trip\n got %+v\nwant %+v", back, j)
	}
}
