package service

import (
	"math"
	"testing"
	"time"

	"github.com/drover-hpc/drover/internal/fsm"
	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/sched/priority"
)

func TestLastReset(t *testing.T) {
	// Thursday 2026-11-26 13:45 UTC.
	now := time.Date(2026, 11, 26, 13, 45, 0, 0, time.UTC).Unix()
	want := map[priority.ResetPeriod]string{
		priority.ResetNone: "1970-01-01", priority.ResetNow: "1970-01-01", priority.ResetDaily: "2026-11-26",
		priority.ResetWeekly: "2026-11-22", priority.ResetMonthly: "2026-11-01", priority.ResetQuarterly: "2026-10-01",
		priority.ResetYearly: "2026-01-01",
	}
	for p, day := range want {
		got := time.Unix(LastReset(p, now, time.UTC), 0).UTC()
		if got.Format("2006-01-02") != day || got.Hour() != 0 || got.Minute() != 0 {
			t.Errorf("%v: %v, want %s 00:00", p, got, day)
		}
	}
}

func TestAccrueUsage(t *testing.T) {
	svc, d, _ := setup(t)
	id := running(t, svc, d, 1000, model.NodeAlloc{Node: "n1", CPUs: 2, Mem: 2048})
	snap := svc.store.Snapshot()
	key := priority.UsageKey("root", snap.Job(id).UserName)
	// 100 s on 2 CPUs: 200 CPU-seconds without billing weights.
	if u := AccrueUsage(snap, 1100, UsageRules{}); u[key] != 200 {
		t.Errorf("cpu-seconds %v", u)
	}
	// TRESBillingWeights CPU=1,Mem=1G bill 2+2 per second; MAX_TRES the larger.
	w, _ := priority.ParseTRESWeights("CPU=1,Mem=1G", true)
	rules := UsageRules{Billing: map[string][]priority.TRESWeight{"debug": w}}
	if u := AccrueUsage(snap, 1100, rules); u[key] != 400 {
		t.Errorf("billing %v", u[key])
	}
	rules.MaxTRES = true
	if u := AccrueUsage(snap, 1100, rules); u[key] != 200 {
		t.Errorf("MAX_TRES %v", u[key])
	}
	// Recorded usage decays by half over PriorityDecayHalfLife; the job
	// adds what it ran since.
	if _, err := d.Apply(fsm.TypePriorities, &fsm.Priorities{Usage: map[string]float64{key: 100, "x\x00y": 50}, UsageAt: 1100}); err != nil {
		t.Fatal(err)
	}
	snap = svc.store.Snapshot()
	u := AccrueUsage(snap, 1100+3600, UsageRules{HalfLife: 3600})
	if u["x\x00y"] != 25 || u[key] != 50+2*3600 {
		t.Errorf("decayed %v", u)
	}
	// A reset time since the last recording drops it: only what ran
	// after the reset counts.
	u = AccrueUsage(snap, 5000, UsageRules{ResetAt: 4000})
	if len(u) != 1 || u[key] != 2000 {
		t.Errorf("reset %v", u)
	}
	// A reset in the very second of the last recording still applies.
	if u := AccrueUsage(snap, 1100+60, UsageRules{ResetAt: 1100}); len(u) != 1 || u[key] != 2*60 {
		t.Errorf("reset at the recording's second %v", u)
	}
	// An empty recalculation (everything reset, nothing running) still
	// replaces the usage.
	if _, err := d.Apply(fsm.TypePriorities, &fsm.Priorities{UsageAt: 6000}); err != nil {
		t.Fatal(err)
	}
	if u, at := svc.store.Snapshot().Usage(); len(u) != 0 || at != 6000 {
		t.Errorf("after empty recalculation: %v at %d", u, at)
	}
}

// PriorityUsageResetPeriod=NOW drops the usage recorded before the
// settings came into force (start, reconfigure).
func TestUsageResetNow(t *testing.T) {
	svc, d, _ := setup(t)
	if _, err := d.Apply(fsm.TypePriorities, &fsm.Priorities{Usage: map[string]float64{"a\x00b": 50}, UsageAt: 900}); err != nil {
		t.Fatal(err)
	}
	st := *svc.Settings()
	st.Priority.UsageReset = priority.ResetNow
	if err := svc.InstallConfig(&st); err != nil {
		t.Fatal(err)
	}
	if at := svc.Settings().Priority.ResetNowAt; at != 1000 {
		t.Fatalf("ResetNowAt %d", at)
	}
	if u := svc.AccrueUsage(svc.store.Snapshot(), 1200); len(u) != 0 {
		t.Errorf("usage after NOW: %v", u)
	}
}

// Fair Tree is the default: the user who ran ranks below one who did
// not, and a user the tree has not seen (a first job) is ranked too.
func TestPrioritizerFairTree(t *testing.T) {
	svc, _, _ := setup(t)
	usage := map[string]float64{priority.UsageKey("root", "ann"): 100}
	p := svc.NewPrioritizer(svc.store.Snapshot(), usage)
	if f := p.FairShare("root", "ann"); f != 1 {
		t.Errorf("ann alone: %v", f)
	}
	if f := p.FairShare("root", "bob"); f != 1 {
		t.Errorf("bob, new: %v", f)
	}
	if f := p.FairShare("root", "ann"); f != 0.5 {
		t.Errorf("ann beside bob: %v", f)
	}
	rows := p.shareRows()
	if len(rows) != 3 || rows[1].User != "ann" || rows[1].LevelFS != 0.5 || !math.IsInf(rows[2].LevelFS, 1) {
		t.Errorf("rows %+v", rows)
	}
	// NO_FAIR_TREE: the classic 2^(-U/S).
	st := *svc.Settings()
	st.Priority.NoFairTree = true
	if err := svc.InstallConfig(&st); err != nil {
		t.Fatal(err)
	}
	p = svc.NewPrioritizer(svc.store.Snapshot(), usage)
	if f := p.FairShare("root", "ann"); f != 0.5 {
		t.Errorf("classic ann: %v", f)
	}
	if rows := p.shareRows(); !math.IsNaN(rows[1].LevelFS) {
		t.Errorf("classic rows %+v", rows)
	}
}
