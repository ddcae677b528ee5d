package sched_test

import (
	"math/rand"
	"reflect"
	"slices"
	"testing"

	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/sched"
	"github.com/drover-hpc/drover/internal/sched/schedtest"
)

// TestTwinsKeepPlans compares plans made with verdicts copied between twin
// jobs (twin.go) and without: starts, reasons, planned starts and nodes,
// preemptions and failed dependencies must be the same. The clusters are
// schedtest.Random's plus large arrays with time limits (one spec for all
// their tasks), some of whose tasks differ in one field a gate reads, over
// several cycles under builtin, backfill with its bounds, MaxJobsPerCycle
// and preemption.
func TestTwinsKeepPlans(t *testing.T) {
	defer sched.SetPlainTwins(false)
	copies := 0
	for seed := range int64(300) {
		rng := rand.New(rand.NewSource(seed))
		c := schedtest.Random(rng)
		parts := slices.Sorted(func(yield func(string) bool) {
			for p := range c.Partitions {
				if !yield(p) {
					return
				}
			}
		})
		for range 1 + rng.Intn(3) {
			s := schedtest.RandomSpec(rng, c, parts)
			s.Dependency = nil
			if rng.Intn(3) > 0 {
				s.TimeLimit = int64(60 * (1 + rng.Intn(30)))
			}
			s.Array = &model.ArraySpec{}
			if rng.Intn(5) == 0 {
				s.Array.Throttle = 1 + rng.Intn(8)
			}
			for k := range 5 + rng.Intn(40) {
				s.Array.TaskIDs = append(s.Array.TaskIDs, k)
			}
			prio := uint32(rng.Intn(5))
			for _, j := range c.SubmitArray(s) {
				j.Priority = prio
				perturb(rng, j)
				if n := c.Nodes[rng.Intn(len(c.Nodes))]; rng.Intn(8) == 0 && n.Usable() && n.FreeCPUs() >= 1 {
					c.Run(j, 900+int64(rng.Intn(100)), []model.NodeAlloc{{Node: n.Name, CPUs: 1}})
				}
			}
			copies += len(s.Array.TaskIDs)
		}
		// Jobs alike that are not an array: one spec, ids in a row.
		s := schedtest.RandomSpec(rng, c, parts)
		s.Dependency = nil
		for range rng.Intn(10) {
			perturb(rng, c.Submit(s))
		}
		cfg := sched.Config{}
		switch rng.Intn(4) {
		case 1, 2, 3:
			cfg = sched.Config{Backfill: true, BfResolution: int64(1 + rng.Intn(100))}
			if rng.Intn(3) == 0 {
				cfg.BfMaxJobTest = 1 + rng.Intn(20)
			}
			if rng.Intn(3) == 0 {
				cfg.BfMaxJobUser = 1 + rng.Intn(10)
			}
			if rng.Intn(2) == 0 {
				cfg.BfMaxJobArrayResv = 1 + rng.Intn(10)
			}
			if rng.Intn(3) == 0 {
				cfg.BfWindow = int64(600 + rng.Intn(7200))
			}
		}
		if rng.Intn(4) == 0 {
			cfg.MaxJobsPerCycle = 1 + rng.Intn(10)
		}
		if rng.Intn(4) == 0 {
			cfg.Preempt = sched.Preempt{Type: "partition_prio", Mode: "REQUEUE"}
		}
		now := int64(1000)
		for cycle := range 4 {
			in := c.Input()
			sched.SetPlainTwins(true)
			want := sched.Schedule(in, now, cfg)
			sched.SetPlainTwins(false)
			got := sched.Schedule(in, now, cfg)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("seed %d cycle %d %+v: plans differ with twins' verdicts copied\n got %+v\nwant %+v",
					seed, cycle, cfg, got, want)
			}
			if err := c.Apply(got, now); err != nil {
				t.Fatal(err)
			}
			now += int64(rng.Intn(600))
			ids := slices.Sorted(func(yield func(model.JobID) bool) {
				for id := range c.Jobs {
					if !yield(id) {
						return
					}
				}
			})
			for _, id := range ids {
				if j := c.Jobs[id]; j.State == model.JobRunning && rng.Intn(2) == 0 {
					c.Finish(j, model.JobCompleted, 0, now)
				}
			}
		}
	}
	if copies < 3000 {
		t.Fatalf("only %d array tasks: the clusters test little", copies)
	}
}

// perturb changes, now and then, one field of j that a gate reads, so that
// it is no longer its predecessor's twin.
func perturb(rng *rand.Rand, j *model.Job) {
	switch rng.Intn(24) {
	case 0:
		j.HoldUser = true
	case 1:
		j.HoldAdmin = true
	case 2:
		j.TimeLimit = int64(60 * (1 + rng.Intn(30)))
	case 3:
		j.Priority++
	case 4:
		j.BeginTime = int64(900 + rng.Intn(400))
	case 5:
		j.UserID++
	case 6:
		j.Reason = model.ReasonRequeuedHeld
		j.HoldAdmin = true
	case 7:
		j.DepFailed = true
	}
}
