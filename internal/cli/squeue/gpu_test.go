package squeue

import (
	"testing"

	"github.com/drover-hpc/drover/internal/model"
)

// TestGPUFields checks the TRES-per-x columns against what Slurm 22.05
// stores for --gres/--gpus* (scontrol_show_job.txt: TresPerNode=gres:gpu:2)
// and the gres/gpu count TRES_ALLOC ends with.
func TestGPUFields(t *testing.T) {
	perNode := refJob(41937, "sample_gpu", 103, model.ReasonPriority)
	perNode.Spec.GPUs = &model.GPUReq{PerNode: 2}
	typed := refJob(50, "typed", 1, model.ReasonPriority)
	typed.Spec.GPUs = &model.GPUReq{Type: "a100", Total: 4, CPUsPerGPU: 2, MemPerGPU: 1024}
	typed.Spec.MinNodes = 2
	perTask := refJob(51, "pertask", 1, model.ReasonPriority)
	perTask.Spec.GPUs, perTask.Spec.NTasks = &model.GPUReq{PerTask: 1}, 3
	run := refJob(52, "run", 1, model.ReasonNone)
	run.State, run.StartTime = model.JobRunning, refNow.Unix()-5
	run.Spec.GPUs = &model.GPUReq{PerNode: 2}
	run.Alloc = []model.NodeAlloc{{Node: "g1", CPUs: 1, Mem: 250, GPUs: model.BitmapOf(0, 1)}, {Node: "g2", CPUs: 1, Mem: 250, GPUs: model.BitmapOf(2, 3)}}
	plain := refJob(53, "plain", 1, model.ReasonPriority)
	client := &fakeClient{jobs: []*model.Job{perNode, typed, perTask, run, plain}, now: refNow.Unix()}

	out, errOut, code := runSqueue(t, client, nil, "-h", "--sort=i", "-o", "%i|%b")
	want := "50|N/A\n51|N/A\n52|gres:gpu:2\n53|N/A\n41937|gres:gpu:2\n"
	if code != 0 || errOut != "" || out != want {
		t.Errorf("%%b: exit %d %q\ngot  %q\nwant %q", code, errOut, out, want)
	}
	out, _, _ = runSqueue(t, client, nil, "-h", "--sort=i", "-O",
		"JobID:|,tres-per-node:|,tres-per-job:|,tres-per-task:|,tres-per-socket:|,cpus-per-tres:|,mem-per-tres:|,tres-alloc:")
	want = "50|N/A|gres:gpu:a100:4|N/A|N/A|gres:gpu:2|gres:gpu:1024|cpu=1,mem=500M,node=2,billing=1,gres/gpu=4\n" +
		"51|N/A|N/A|gres:gpu:1|N/A|N/A|N/A|cpu=3,mem=250M,node=1,billing=3,gres/gpu=3\n" +
		"52|gres:gpu:2|N/A|N/A|N/A|N/A|N/A|cpu=2,mem=500M,node=2,billing=2,gres/gpu=4\n" +
		"53|N/A|N/A|N/A|N/A|N/A|N/A|cpu=1,mem=250M,node=1,billing=1\n" +
		"41937|gres:gpu:2|N/A|N/A|N/A|N/A|N/A|cpu=1,mem=250M,node=1,billing=1,gres/gpu=2\n"
	if out != want {
		t.Errorf("-O:\ngot  %q\nwant %q", out, want)
	}
}

func TestStepGPUFields(t *testing.T) {
	jobs := stepQueue()
	train := jobs[2].Steps[0]
	train.Spec = &model.StepSpec{GPUs: &model.GPUReq{Type: "a100", PerNode: 2, CPUsPerGPU: 4}}
	client := &fakeClient{jobs: jobs, now: refNow.Unix()}
	out, _, _ := runSqueue(t, client, nil, "-s", "202_3.0", "-o", "%i %b")
	if want := "STEPID TRES_PER_JOB\n202_3.0 gres:gpu:a100:2\n"; out != want {
		t.Errorf("-s %%b: got %q want %q", out, want)
	}
	out, _, _ = runSqueue(t, client, nil, "-h", "-s", "202_3.0,200.0", "-O", "StepID:|,tres-per-step:|,tres-per-task:|,cpus-per-tres:|,mem-per-tres:")
	if want := "200.0|(null)|(null)|(null)|(null)\n202_3.0|(null)|(null)|gres:gpu:4|(null)\n"; out != want {
		t.Errorf("-s -O: got %q want %q", out, want)
	}
}
