package acct

import (
	"testing"

	"github.com/drover-hpc/drover/internal/model"
)

func job(state model.JobState, exit, sig int32) *model.Job {
	return &model.Job{
		ID: 41951, ArrayTaskID: model.NoArrayTask, Name: "sample", UserName: "root", Partition: "debug",
		State: state, ExitCode: exit, Signal: sig, SubmitTime: 10, StartTime: 11, EndTime: 94, TimeLimit: 60,
		Alloc: []model.NodeAlloc{{Node: "vm", CPUs: 1, Mem: 250}},
		Spec:  &model.JobSpec{Script: "#!/bin/sh\n", MinNodes: model.Unset, NTasks: model.Unset, CPUsPerTask: model.Unset, MemPerCPU: 250},
	}
}

// The exit codes and batch step states Slurm 22.05's database shows for
// the reference jobs (shared/reference/slurm-22.05-outputs).
func TestFromModelExitCodes(t *testing.T) {
	for _, c := range []struct {
		name                string
		j                   *model.Job
		exit, sig           int32
		batch               string
		batchExit, batchSig int32
	}{
		{"timeout", job(model.JobTimeout, 0, 15), 0, 0, "CANCELLED", 0, 15},
		{"cancelled", job(model.JobCancelled, 0, 15), 0, 0, "CANCELLED", 0, 15},
		{"exit 3", job(model.JobFailed, 3, 0), 3, 0, "FAILED", 3, 0},
		{"kill -9", job(model.JobFailed, 0, 9), 0, 9, "CANCELLED", 0, 9},
		{"oom", job(model.JobOOM, 0, 125), 0, 125, "OUT_OF_MEMORY", 0, 125},
		{"completed", job(model.JobCompleted, 0, 0), 0, 0, "COMPLETED", 0, 0},
	} {
		r := FromModel("peer", c.j, "root")
		if r.ExitStatus != c.exit || r.ExitSignal != c.sig {
			t.Errorf("%s: job exit %d:%d, want %d:%d", c.name, r.ExitStatus, r.ExitSignal, c.exit, c.sig)
		}
		if len(r.Steps) != 1 || r.Steps[0].StepID != StepBatch {
			t.Fatalf("%s: steps %+v", c.name, r.Steps)
		}
		b := r.Steps[0]
		if b.State != c.batch || b.ExitStatus != c.batchExit || b.ExitSignal != c.batchSig {
			t.Errorf("%s: batch %s %d:%d, want %s %d:%d", c.name, b.State, b.ExitStatus, b.ExitSignal, c.batch, c.batchExit, c.batchSig)
		}
	}
}

func TestFromModelFields(t *testing.T) {
	j := job(model.JobCompleted, 0, 0)
	j.ArrayJobID, j.ArrayTaskID = 41935, 3
	j.Alloc[0].GPUs = model.BitmapOf(0, 1)
	j.Steps = []*model.Step{
		{ID: 0, Name: "hostname", State: model.JobCompleted, StartTime: 20, EndTime: 21, NTasks: 2,
			Layout: []model.StepNode{{Node: "vm", CPUs: 1}}},
		{ID: 1, Name: "bash", State: model.JobFailed, ExitCode: 5, StartTime: 22, EndTime: 23, NTasks: 1,
			Layout: []model.StepNode{{Node: "vm", CPUs: 1}}, Usage: &model.Usage{MaxRSS: 20264 << 10, UserCPU: 1500}},
	}
	r := FromModel("peer", j, "")
	if r.ArrayJobID != 41935 || r.ArrayTaskID != 3 || r.Group != "0" || r.QOS != "normal" {
		t.Fatalf("record %+v", r)
	}
	if r.ReqTRES != "billing=1,cpu=1,mem=250M,node=1" || r.AllocTRES != "billing=1,cpu=1,gres/gpu=2,mem=250M,node=1" {
		t.Fatalf("tres %q %q", r.ReqTRES, r.AllocTRES)
	}
	if r.ReqMem != 250 || !r.ReqMemPerCPU || r.NodeList != "vm" || r.NCPUs != 1 || r.NNodes != 1 {
		t.Fatalf("sizes %+v", r)
	}
	if len(r.Steps) != 3 || r.Steps[1].Name != "hostname" || r.Steps[2].MaxRSS != 20264<<10 || r.Steps[2].UserCPU != 1500 {
		t.Fatalf("steps %+v", r.Steps)
	}
	if r.DerivedExitStatus != 5 {
		t.Fatalf("derived exit %d, want the highest step's", r.DerivedExitStatus)
	}
	pending := job(model.JobPending, 0, 0)
	pending.Alloc, pending.StartTime, pending.EndTime = nil, 0, 0
	if r := FromModel("peer", pending, "root"); len(r.Steps) != 0 || r.AllocTRES != "" || r.Reason != "None" || r.NodeList != "" {
		t.Fatalf("pending record %+v", r)
	}
}

func TestMemString(t *testing.T) {
	for in, want := range map[int64]string{250: "250M", 16000: "16000M", 4096: "4G", 1 << 20: "1T", 1024 << 20: "1P"} {
		if got := MemString(in); got != want {
			t.Errorf("MemString(%d) = %q, want %q", in, got, want)
		}
	}
}
