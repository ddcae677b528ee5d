package scontrol

import (
	"strings"
	"testing"

	"github.com/drover-hpc/drover/internal/model"
)

// gpuJob is sample_gpu of scontrol_show_job.txt (--gres=gpu:2), running.
func gpuJob() *fakeClient {
	fc := referenceJobs()
	j := fc.jobs[0]
	j.ID, j.Name, j.Spec.Name = 41937, "sample_gpu", "sample_gpu"
	j.Spec.GPUs = &model.GPUReq{PerNode: 2}
	j.Alloc = []model.NodeAlloc{{Node: "vm", CPUs: 1, Mem: 250, CPUIDs: model.BitmapOf(0), GPUs: model.BitmapOf(0, 1)}}
	fc.jobs = fc.jobs[:1]
	return fc
}

func TestShowJobGPUs(t *testing.T) {
	res := run(t, gpuJob(), nil, "show", "job", "41937")
	for _, want := range []string{
		// scontrol_show_job.txt, job 41937.
		"\n   TRES=cpu=1,mem=250M,node=1,billing=1,gres/gpu=2\n",
		"\n   Power=\n   TresPerNode=gres:gpu:2\n   \n\n",
	} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("missing %q in\n%s", want, res.stdout)
		}
	}
	if strings.Contains(res.stdout, "JOB_GRES") {
		t.Errorf("JOB_GRES without -d:\n%s", res.stdout)
	}

	// -d: the job's GPUs in all and per run of like nodes (the layout of
	// JOB_GRES=(null) / "  Nodes=vm CPU_IDs=0-1 Mem=500 GRES=" there).
	fc := gpuJob()
	j := fc.jobs[0]
	j.Spec.GPUs = &model.GPUReq{Type: "a100", Total: 6, CPUsPerGPU: 2, MemPerGPU: 4096}
	j.Alloc = []model.NodeAlloc{
		{Node: "g1", CPUs: 4, Mem: 8192, CPUIDs: model.BitmapOf(0, 1, 2, 3), GPUs: model.BitmapOf(0, 1)},
		{Node: "g2", CPUs: 4, Mem: 8192, CPUIDs: model.BitmapOf(0, 1, 2, 3), GPUs: model.BitmapOf(0, 1)},
		{Node: "g3", CPUs: 4, Mem: 8192, CPUIDs: model.BitmapOf(4, 5, 6, 7), GPUs: model.BitmapOf(2, 3)},
		{Node: "g4", CPUs: 1, Mem: 100, CPUIDs: model.BitmapOf(0)},
	}
	res = run(t, fc, nil, "-d", "show", "job", "41937")
	for _, want := range []string{
		"\n   TRES=cpu=13,mem=24676M,node=4,billing=13,gres/gpu=6\n",
		"CoreSpec=*\n   JOB_GRES=gpu:a100:6\n" +
			"     Nodes=g[1-2] CPU_IDs=0-3 Mem=8192 GRES=gpu:a100:2(IDX:0-1)\n" +
			"     Nodes=g3 CPU_IDs=4-7 Mem=8192 GRES=gpu:a100:2(IDX:2-3)\n" +
			"     Nodes=g4 CPU_IDs=0 Mem=100 GRES=\n   MinCPUsNode=",
		"\n   Power=\n   CpusPerTres=gres:gpu:2\n   MemPerTres=gres:gpu:4096\n   TresPerJob=gres:gpu:a100:6\n   \n\n",
	} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("-d: missing %q in\n%s", want, res.stdout)
		}
	}

	// Pending: the request counts, TresPerTask.
	fc = gpuJob()
	j = fc.jobs[0]
	j.State, j.Alloc, j.StartTime = model.JobPending, nil, 0
	j.Spec.GPUs, j.Spec.NTasks = &model.GPUReq{PerTask: 1}, 3
	res = run(t, fc, nil, "-d", "show", "job", "41937")
	for _, want := range []string{",gres/gpu=3\n", "\n   TresPerTask=gres:gpu:1\n"} {
		if !strings.Contains(res.stdout, want) || strings.Contains(res.stdout, "JOB_GRES") {
			t.Errorf("pending: missing %q (or JOB_GRES shown) in\n%s", want, res.stdout)
		}
	}
}

func TestShowNodeGres(t *testing.T) {
	fc := referenceCluster()
	n := fc.nodes[0]
	n.GPUs = []model.GPU{{Index: 0}, {Index: 1}, {Index: 2}, {Index: 3}}
	n.AllocGPUs = model.BitmapOf(0, 1)
	res := run(t, fc, nil, "show", "node", "vm")
	// scontrol_show_node.txt: AllocTRES ends with the GPUs in use; no
	// GresUsed without -d.
	if !strings.Contains(res.stdout, "\n   AllocTRES=cpu=8,mem=2000M,gres/gpu=2\n") || strings.Contains(res.stdout, "GresUsed") {
		t.Errorf("show node:\n%s", res.stdout)
	}
	res = run(t, fc, nil, "-d", "show", "node", "vm")
	if !strings.Contains(res.stdout, "\n   Gres=gpu:4\n   GresDrain=N/A\n   GresUsed=gpu:2\n   NodeAddr=") {
		t.Errorf("-d show node:\n%s", res.stdout)
	}
	n.Gres, n.GPUs = "", nil
	res = run(t, fc, nil, "-d", "show", "node", "vm")
	if !strings.Contains(res.stdout, "\n   Gres=(null)\n   GresDrain=N/A\n   NodeAddr=") {
		t.Errorf("-d show node without GRES:\n%s", res.stdout)
	}
}

func TestShowStepGPUs(t *testing.T) {
	fc := stepJobs()
	st := fc.jobs[1].Steps[0]
	st.Layout[0].GPUs = model.BitmapOf(0, 1)
	st.Spec.GPUs = &model.GPUReq{Type: "a100", Total: 2, MemPerGPU: 1024}
	res := run(t, fc, nil, "show", "step", "301.0")
	for _, want := range []string{
		"\n   TRES=cpu=8,mem=0,node=1,gres/gpu=2\n",
		"\n   SrunHost:Pid=10.0.0.5:4321\n   MemPerTres=gres:gpu:1024\n   TresPerStep=gres:gpu:a100:2\n\n",
	} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("missing %q in\n%s", want, res.stdout)
		}
	}
}
