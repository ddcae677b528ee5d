package slurmconf

import (
	"strings"
	"testing"
)

func TestPreemptKeys(t *testing.T) {
	cfg, err := Parse(strings.NewReader("PreemptType=preempt/qos\nPreemptMode=SUSPEND,GANG\nSchedulerTimeSlice=3\n"+
		"PreemptParameters=min_exempt_priority=500,reorder_count=0,strict_order\n"+
		"NodeName=n1 CPUs=4\nPartitionName=p Nodes=ALL OverSubscribe=FORCE:2 PreemptMode=OFF\n"), "slurm.conf")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.PreemptType != "qos" || cfg.PreemptMode != "SUSPEND" || !cfg.PreemptGang || cfg.SchedulerTimeSlice != 3 ||
		cfg.PreemptMinExemptPriority != 500 || cfg.PreemptReorderCount != 0 {
		t.Errorf("parsed %+v", cfg)
	}
	if !strings.Contains(strings.Join(cfg.Warnings, "\n"), `PreemptParameters: "strict_order" is not modelled`) {
		t.Errorf("warnings %q", cfg.Warnings)
	}
	if p := cfg.Partitions[0]; p.OverSubscribe != "FORCE:2" || p.PreemptMode != "OFF" {
		t.Errorf("partition %+v", p)
	}
	def, _ := Parse(strings.NewReader("NodeName=n1 CPUs=4\n"), "slurm.conf")
	if def.SchedulerTimeSlice != 30 || def.PreemptReorderCount != 1 {
		t.Errorf("defaults: slice %d reorder %d", def.SchedulerTimeSlice, def.PreemptReorderCount)
	}
	for _, bad := range []string{"SchedulerTimeSlice=0", "PreemptParameters=reorder_count=9", "PreemptParameters=min_exempt_priority=x"} {
		if _, err := Parse(strings.NewReader(bad+"\n"), "slurm.conf"); err == nil || !strings.Contains(err.Error(), "slurm.conf:1") {
			t.Errorf("%s: %v", bad, err)
		}
	}
}

// The examples parse without warnings.
func TestPreemptExamples(t *testing.T) {
	for _, f := range []string{"../../examples/gang/slurm.conf", "../../examples/qos-preempt/slurm.conf", "../../examples/lab/slurm.conf"} {
		cfg, err := Load(f)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if len(cfg.Warnings) > 0 {
			t.Errorf("%s: %q", f, cfg.Warnings)
		}
	}
}
