package jobspec

import (
	"errors"
	"strings"
	"testing"

	"github.com/drover-hpc/drover/internal/model"
)

func TestGPUOptions(t *testing.T) {
	script := map[string]string{"/home/u/g.sh": "#!/bin/sh\n#SBATCH --gres=gpu:1\n"}
	for _, tc := range []struct {
		kind   Kind
		args   []string
		env    []string
		want   *model.GPUReq
		ntasks int // 0: not checked
	}{
		{Sbatch, []string{"--gres=gpu:2"}, nil, &model.GPUReq{PerNode: 2}, 0},
		{Sbatch, []string{"--gres=gpu:a100:2"}, nil, &model.GPUReq{Type: "a100", PerNode: 2}, 0},
		{Sbatch, []string{"--gres=gpu"}, nil, &model.GPUReq{PerNode: 1}, 0},
		{Sbatch, []string{"--gres=gpu:a100"}, nil, &model.GPUReq{Type: "a100", PerNode: 1}, 0},
		{Sbatch, []string{"--gres=gres:gpu:3,"}, nil, &model.GPUReq{PerNode: 3}, 0},
		{Sbatch, []string{"--gres=gpu:0,gpu:v100:2"}, nil, &model.GPUReq{Type: "v100", PerNode: 2}, 0},
		{Sbatch, []string{"-G", "4"}, nil, &model.GPUReq{Total: 4}, 0},
		{Sbatch, []string{"-G", "a100"}, nil, &model.GPUReq{Type: "a100", Total: 1}, 0},
		{Sbatch, []string{"--gpus=v100:3", "--cpus-per-gpu=4", "--mem-per-gpu=2G"}, nil, &model.GPUReq{Type: "v100", Total: 3, CPUsPerGPU: 4, MemPerGPU: 2048}, 0},
		{Sbatch, []string{"--gpus-per-node=a100:2"}, nil, &model.GPUReq{Type: "a100", PerNode: 2}, 0},
		// The last option given decides.
		{Sbatch, []string{"--gpus-per-node=2", "-n2", "--gpus-per-task=1"}, nil, &model.GPUReq{PerTask: 1}, 2},
		{Sbatch, []string{"--gpus-per-task=1", "-n2", "--gpus-per-node=2"}, nil, &model.GPUReq{PerNode: 2}, 2},
		{Sbatch, []string{"--gres=gpu:2", "--gres=none"}, nil, nil, 0},
		{Sbatch, []string{"--gres=gpu:2", "--gpus=0"}, nil, nil, 0},
		{Sbatch, []string{"--gres=gpu:0"}, nil, nil, 0},
		{Sbatch, []string{"--cpus-per-gpu=2"}, nil, nil, 0},
		// --gpus-per-task without -n: the task count follows from -N or --gpus.
		{Sbatch, []string{"-G", "4", "--gpus-per-task=2"}, nil, &model.GPUReq{PerTask: 2}, 2},
		{Sbatch, []string{"-N2", "--gpus-per-task=1"}, nil, &model.GPUReq{PerTask: 1}, 2},
		{Sbatch, []string{"-N2", "--ntasks-per-node=3", "--gpus-per-task=1"}, nil, &model.GPUReq{PerTask: 1}, 6},
		{Srun, []string{"--gpus-per-task=1", "true"}, nil, &model.GPUReq{PerTask: 1}, 0},
		// Environment over #SBATCH lines, the command line over both.
		{Sbatch, []string{"g.sh"}, nil, &model.GPUReq{PerNode: 1}, 0},
		{Sbatch, []string{"g.sh"}, []string{"SBATCH_GPUS=3"}, &model.GPUReq{Total: 3}, 0},
		{Sbatch, []string{"--gpus-per-node=2", "g.sh"}, []string{"SBATCH_GPUS=3"}, &model.GPUReq{PerNode: 2}, 0},
		{Sbatch, []string{"--gres=gpu:1"}, []string{"SBATCH_GRES=bogus:1"}, &model.GPUReq{PerNode: 1}, 0},
		{Sbatch, nil, []string{"SBATCH_GPUS_PER_NODE=a100:1", "SBATCH_CPUS_PER_GPU=2", "SBATCH_MEM_PER_GPU=1G"}, &model.GPUReq{Type: "a100", PerNode: 1, CPUsPerGPU: 2, MemPerGPU: 1024}, 0},
		{Salloc, nil, []string{"SALLOC_GPUS=2"}, &model.GPUReq{Total: 2}, 0},
		{Salloc, nil, []string{"SALLOC_GRES=gpu:a100:1"}, &model.GPUReq{Type: "a100", PerNode: 1}, 0},
		{Srun, []string{"true"}, []string{"SLURM_GPUS_PER_TASK=1", "SLURM_JOB_ID=4"}, &model.GPUReq{PerTask: 1}, 0},
		{Srun, []string{"--gres=gpu:1", "true"}, []string{"SLURM_GPUS_PER_NODE=2", "SLURM_JOB_ID=4"}, &model.GPUReq{PerNode: 1}, 0},
	} {
		args := tc.args
		if tc.kind == Sbatch && (len(args) == 0 || !strings.HasSuffix(args[len(args)-1], ".sh")) {
			args = append(args, "--wrap=x")
		}
		o := mustParse(t, tc.kind, args, testCtx(script, tc.env...))
		got := o.Spec.GPUs
		if (got == nil) != (tc.want == nil) || (got != nil && *got != *tc.want) {
			t.Errorf("%v %q %q: GPUs = %+v, want %+v", tc.kind, args, tc.env, got, tc.want)
		}
		if tc.ntasks != 0 && o.Spec.NTasks != tc.ntasks {
			t.Errorf("%v %q: NTasks = %d, want %d", tc.kind, args, o.Spec.NTasks, tc.ntasks)
		}
		if _, ok := o.Extra["gres"]; ok {
			t.Errorf("%q: --gres left in Extra", args)
		}
	}
}

func TestGPUOptionErrors(t *testing.T) {
	const gres = "error: Invalid generic resource (gres) specification"
	for _, tc := range []struct {
		kind  Kind
		args  []string
		env   []string
		lines string
		exit  int
	}{
		{Sbatch, []string{"--gres=mps:100"}, nil, "sbatch: " + gres, 0},
		{Sbatch, []string{"--gres=gpu:a:b:c"}, nil, "sbatch: " + gres, 0},
		{Sbatch, []string{"--gres=gpu:"}, nil, "sbatch: " + gres, 0},
		{Sbatch, []string{"--gres=gpu:1,gpu:a100:1"}, nil, "sbatch: " + gres, 0},
		{Sbatch, []string{"--gpus=a:b:1"}, nil, "sbatch: " + gres, 0},
		{Sbatch, []string{"--gpus-per-task=-1"}, nil, "sbatch: " + gres, 0},
		{Sbatch, []string{"--gpus-per-node=2", "--gres=shard:1"}, nil, "sbatch: " + gres, 0},
		{Sbatch, nil, []string{"SBATCH_GPUS=x:y:z"}, "sbatch: " + gres, 0},
		{Salloc, []string{"--gres=foo"}, nil, "salloc: " + gres, 0},
		{Srun, []string{"--gres=foo", "true"}, nil, "srun: " + gres, 0},
		{Sbatch, []string{"--cpus-per-gpu=0"}, nil, "sbatch: error: Invalid numeric value \"0\" for --cpus-per-gpu.", 0},
		{Sbatch, []string{"--mem-per-gpu=1G"}, nil, "sbatch: error: Requested mem_per_tres=gres:gpu:1024 but did not request any GPU.\nsbatch: " + gres, 0},
		{Sbatch, []string{"-G1", "-c2", "--cpus-per-gpu=2"}, nil, "sbatch: error: --cpus-per-gpu is mutually exclusive with --cpus-per-task\nsbatch: " + gres, 0},
		{Sbatch, []string{"--gpus-per-task=1"}, nil, "sbatch: error: Failed to validate job spec. --gpus-per-task used without either --gpus or -n/--ntasks is not allowed.\nsbatch: " + gres, 0},
		{Sbatch, []string{"-N2", "-c2", "--gpus-per-task=1"}, nil, "sbatch: error: Failed to validate job spec. --gpus-per-task used without either --gpus or -n/--ntasks is not allowed.\nsbatch: " + gres, 0},
		{Sbatch, []string{"-G3", "--gpus-per-task=2"}, nil, "sbatch: error: Failed to validate job spec, --gpus not multiple of --gpus-per-task\nsbatch: " + gres, 0},
		{Sbatch, []string{"--mem=1G", "--mem-per-gpu=1G", "-G1"}, nil, "sbatch: fatal: --mem, --mem-per-cpu, and --mem-per-gpu are mutually exclusive.", 0},
		// The option checks come first, as in Slurm.
		{Sbatch, []string{"--gres=mps:1", "--time=abc"}, nil, "sbatch: error: Invalid --time specification", 255},
	} {
		args := tc.args
		if tc.kind == Sbatch {
			args = append(args, "--wrap=x")
		}
		_, err := Parse(tc.kind, args, testCtx(nil, tc.env...))
		var e *Error
		if !errors.As(err, &e) {
			t.Errorf("%v %q: error %v is not *Error", tc.kind, args, err)
			continue
		}
		if got := strings.Join(e.Lines(), "\n"); got != tc.lines || e.Exit != tc.exit {
			t.Errorf("%v %q:\n got %q (exit %d)\nwant %q (exit %d)", tc.kind, args, got, e.Exit, tc.lines, tc.exit)
		}
	}
}
