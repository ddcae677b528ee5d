package jobspec

import (
	"strings"
	"testing"

	"github.com/drover-hpc/drover/internal/model"
)

func TestGPUOptions(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want *model.GPUReq
	}{
		{[]string{"--gres=gpu:2"}, &model.GPUReq{PerNode: 2}},
		{[]string{"--gres=gpu:a100:2"}, &model.GPUReq{Type: "a100", PerNode: 2}},
		{[]string{"--gres=gpu"}, &model.GPUReq{PerNode: 1}},
		{[]string{"-G", "4"}, &model.GPUReq{Total: 4}},
		{[]string{"--gpus=v100:3", "--cpus-per-gpu=4", "--mem-per-gpu=2G"}, &model.GPUReq{Type: "v100", Total: 3, CPUsPerGPU: 4, MemPerGPU: 2048}},
		{[]string{"--gpus-per-node=2", "--gpus-per-task=1"}, &model.GPUReq{PerTask: 1}},
		{[]string{"--gres=gpu:2", "--gres=none"}, nil},
		{[]string{"--gpus=0"}, nil},
		{[]string{"--cpus-per-gpu=2"}, nil},
	} {
		o := mustParse(t, Sbatch, append(tc.args, "--wrap=x"), testCtx(nil))
		got := o.Spec.GPUs
		if (got == nil) != (tc.want == nil) || (got != nil && *got != *tc.want) {
			t.Errorf("%v: GPUs = %+v, want %+v", tc.args, got, tc.want)
		}
	}
	for _, bad := range [][]string{{"--gres=mps:100"}, {"--gres=gpu:0"}, {"--gres=gpu:a:b:c"}, {"--gpus=x"}, {"--gpus-per-task=-1"}, {"--cpus-per-gpu=0"}} {
		_, err := Parse(Sbatch, append(bad, "--wrap=x"), testCtx(nil))
		if err == nil || !strings.Contains(err.Error(), "specification") {
			t.Errorf("%v: %v", bad, err)
		}
	}
	// The batch environment's SBATCH_GPUS_PER_NODE reads like the option.
	o := mustParse(t, Sbatch, []string{"--wrap=x"}, testCtx(nil, "SBATCH_GPUS_PER_NODE=a100:1"))
	if g := o.Spec.GPUs; g == nil || g.PerNode != 1 || g.Type != "a100" {
		t.Errorf("SBATCH_GPUS_PER_NODE: %+v", g)
	}
}
