package agent

import (
	"testing"
	"time"

	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/slurmconf"
)

func TestTaskGPUs(t *testing.T) {
	step := model.BitmapOf(1, 3, 4, 6)
	req := &model.GPUReq{PerTask: 2}
	for local, want := range []string{"1,3", "4,6", ""} {
		if got := taskGPUs(req, step, local).String(); got != want {
			t.Errorf("task %d: %q, want %q", local, got, want)
		}
	}
	if taskGPUs(&model.GPUReq{PerNode: 2}, step, 0) != nil || taskGPUs(nil, step, 0) != nil {
		t.Error("without --gpus-per-task every task sees the step's GPUs")
	}
}

func TestCPUMapping(t *testing.T) {
	iso := &isolation{real: []int{0, 1}}
	if got := iso.cpuList(model.BitmapOf(0, 1, 2, 5)).String(); got != "0-1" {
		t.Errorf("virtual ids on 2 CPUs: %q", got)
	}
	iso.real = []int{2, 3, 8, 9}
	if got := iso.cpuList(model.BitmapOf(1, 2)).String(); got != "3,8" {
		t.Errorf("ids onto an affinity set: %q", got)
	}
	for ids, want := range map[string]string{"0-1": "0x3", "4": "0x10", "0,5,9": "0x221", "": "0x0"} {
		b, _ := model.ParseBitmap(ids)
		if got := cpuMask(b); got != want {
			t.Errorf("cpuMask(%s) = %s, want %s", ids, got, want)
		}
	}
}

func TestAcctFrequency(t *testing.T) {
	for v, want := range map[string]time.Duration{"": 30 * time.Second, "task=5": 5 * time.Second, "energy=10,task=2": 2 * time.Second, "15": 15 * time.Second} {
		cfg := &slurmconf.Config{}
		if v != "" {
			cfg.Raw = []slurmconf.KV{{Key: "JobAcctGatherFrequency", Value: v}}
		}
		if got := acctFrequency(cfg); got != want {
			t.Errorf("JobAcctGatherFrequency=%q: %v, want %v", v, got, want)
		}
	}
}
