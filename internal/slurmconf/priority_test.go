package slurmconf

import (
	"strings"
	"testing"

	"github.com/drover-hpc/drover/internal/sched/priority"
)

func TestPriorityKeys(t *testing.T) {
	c := mustParse(t, "PriorityType=priority/multifactor\n"+
		"PriorityWeightTRES=CPU=1000,Mem=2000,GRES/gpu=3000\n"+
		"PriorityFlags=MAX_TRES,NO_NORMAL_ALL,CALCULATE_RUNNING,NO_NORMAL_AGE,SMALL_RELATIVE_TO_TIME,FANCY\n"+
		"PriorityUsageResetPeriod=Monthly\n"+
		"NodeName=n1 CPUs=4\n"+
		"PartitionName=p Nodes=n1 TRESBillingWeights=CPU=1.0,Mem=0.25G,GRES/gpu=2.0\n", nil)
	p := c.Priority
	if len(p.WeightTRES) != 3 || p.WeightTRES[2] != (priority.TRESWeight{Name: "gres/gpu", Weight: 3000}) || p.WeightTRESRaw != "CPU=1000,Mem=2000,GRES/gpu=3000" {
		t.Errorf("WeightTRES %+v", p.WeightTRES)
	}
	if !p.MaxTRES || !p.NoNormalPart || !p.NoNormalQOS || !p.NoNormalTRES || !p.CalculateRunning || !p.SmallRelativeToTime || p.NoFairTree {
		t.Errorf("flags %+v", p)
	}
	if p.UsageReset != priority.ResetMonthly {
		t.Errorf("reset %v", p.UsageReset)
	}
	if w := c.Partitions[0].BillingWeights; len(w) != 3 || w[1].Name != "mem" {
		t.Errorf("billing %+v", w)
	}
	// Unknown flags are warned about, by name, and not fatal.
	warn := strings.Join(c.Warnings, "\n")
	for _, w := range []string{`PriorityFlags: unknown flag "NO_NORMAL_AGE" ignored`, `PriorityFlags: unknown flag "FANCY" ignored`} {
		if !strings.Contains(warn, w) {
			t.Errorf("warnings lack %s:\n%s", w, warn)
		}
	}
	if c := mustParse(t, "PriorityFlags=DEPTH_OBLIVIOUS\n", nil); !c.Priority.NoFairTree {
		t.Error("DEPTH_OBLIVIOUS implies NO_FAIR_TREE")
	}
}

// Absurd weights are refused at start, with the key named.
func TestPriorityAbsurdWeights(t *testing.T) {
	for _, tc := range []struct{ line, want string }{
		{"PriorityWeightAge=-1", "PriorityWeightAge"},
		{"PriorityWeightFairshare=4294967296", "PriorityWeightFairshare"},
		{"PriorityWeightQOS=1e3", "PriorityWeightQOS"},
		{"PriorityWeightTRES=CPU=-5", "PriorityWeightTRES"},
		{"PriorityWeightTRES=GRES/gpu=99999999999", "PriorityWeightTRES"},
		{"PriorityUsageResetPeriod=HOURLY", "PriorityUsageResetPeriod"},
		{"NodeName=n1 CPUs=4\nPartitionName=p Nodes=n1 TRESBillingWeights=CPU=-1", "TRESBillingWeights"},
	} {
		_, err := parse(t, tc.line+"\n", nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v", tc.line, err)
		}
	}
}
