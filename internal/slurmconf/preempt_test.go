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
	if strings.Contains(strings.Join(cfg.Warnings, "\n"), "strict_order") || cfg.PreemptYoungestFirst || cfg.PreemptWithin {
		t.Errorf("strict_order: warnings %q; youngest %v within %v", cfg.Warnings, cfg.PreemptYoungestFirst, cfg.PreemptWithin)
	}
	// youngest_first under both names (PreemptParameters, and 22.05's
	// SchedulerParameters=preempt_youngest_first), WITHIN, and what is
	// not modelled.
	for _, text := range []string{"PreemptParameters=youngest_first,send_user_signal\n",
		"SchedulerParameters=preempt_youngest_first,preempt_strict_order\nPreemptMode=WITHIN,REQUEUE\n"} {
		cfg, err := Parse(strings.NewReader(text+"NodeName=n1 CPUs=4\n"), "slurm.conf")
		if err != nil || !cfg.PreemptYoungestFirst {
			t.Errorf("%q: %v, youngest_first %v", text, err, cfg != nil && cfg.PreemptYoungestFirst)
			continue
		}
		all := strings.Join(cfg.Warnings, "\n")
		warned := strings.Contains(all, `PreemptParameters: "send_user_signal" is not modelled`)
		if strings.Contains(text, "send_user_signal") != warned || strings.Contains(all, "preempt_") {
			t.Errorf("%q: warnings %q", text, cfg.Warnings)
		}
		if w := strings.Contains(text, "WITHIN"); w != cfg.PreemptWithin || (w && cfg.PreemptMode != "REQUEUE") {
			t.Errorf("%q: within %v mode %q", text, cfg.PreemptWithin, cfg.PreemptMode)
		}
	}
	if p := cfg.Partitions[0]; p.OverSubscribe != "FORCE:2" || p.PreemptMode != "OFF" {
		t.Errorf("partition %+v", p)
	}
	def, _ := Parse(strings.NewReader("NodeName=n1 CPUs=4\n"), "slurm.conf")
	if def.SchedulerTimeSlice != 30 || def.PreemptReorderCount != 1 {
		t.Errorf("defaults: slice %d reorder %d", def.SchedulerTimeSlice, def.PreemptReorderCount)
	}
	for _, bad := range []string{"SchedulerTimeSlice=0", "PreemptMode=GANG,WITHIN", "PreemptMode=WITHIN,bogus", "PreemptParameters=reorder_count=9", "PreemptParameters=min_exempt_priority=x"} {
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
