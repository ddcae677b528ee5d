package squeue

import (
	"encoding/json"
	"testing"

	"github.com/drover-hpc/drover/internal/model"
)

func TestJSON(t *testing.T) {
	spec := &model.JobSpec{Script: "#!/bin/sh\n", WorkDir: "/tmp", Requeue: true, Array: &model.ArraySpec{Raw: "3", TaskIDs: []int{3}, Throttle: 2}}
	f := &fakeClient{jobs: []*model.Job{
		{ID: 7, ArrayTaskID: model.NoArrayTask, Spec: spec, State: model.JobPending, Reason: "Dependency", Name: "a", TimeLimit: 600, UserName: "root"},
		{ID: 9, ArrayJobID: 8, ArrayTaskID: 3, Spec: spec, State: model.JobCompleted, Name: "b", TimeLimit: model.Unlimited},
	}}
	out, errOut, code := runSqueue(t, f, nil, "--json", "-j", "7")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var doc struct {
		Meta struct{ Plugin struct{ Type string } }
		Jobs []map[string]any
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Meta.Plugin.Type != "openapi/v0.0.38" || len(doc.Jobs) != 2 {
		t.Fatalf("meta %+v, %d jobs (every job, as 22.05 ignores -j)", doc.Meta, len(doc.Jobs))
	}
	j := doc.Jobs[0]
	if j["job_id"] != 7.0 || j["job_state"] != "PENDING" || j["state_reason"] != "Dependency" || j["time_limit"] != 10.0 || j["array_task_id"] != nil {
		t.Errorf("job 7: %v", j)
	}
	if k := doc.Jobs[1]; k["array_job_id"] != 8.0 || k["array_task_id"] != 3.0 || k["time_limit"] != nil || k["array_max_tasks"] != 2.0 {
		t.Errorf("task: %v", k)
	}
}
