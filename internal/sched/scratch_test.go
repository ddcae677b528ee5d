package sched_test

import (
	"fmt"
	"math/rand"
	"reflect"
	"testing"

	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/sched"
	"github.com/drover-hpc/drover/internal/sched/schedtest"
)

// TestScratchPlans runs one Scratch through the passes of many random
// clusters in a row (sizes, partitions, GPUs, reservations and policies
// change from one to the next) and checks that every pass plans exactly
// what Schedule plans without one: a Scratch lends memory, never results.
func TestScratchPlans(t *testing.T) {
	seeds := 300
	if testing.Short() {
		seeds = 60
	}
	var sc sched.Scratch
	starts, planned, preempts := 0, 0, 0
	for seed := range int64(seeds) {
		rng := rand.New(rand.NewSource(seed))
		var c *schedtest.Cluster
		now := int64(1000)
		if seed%3 == 0 {
			c = randomTimed(rng) // GPUs, time limits
		} else {
			c = schedtest.Random(rng)
		}
		var rs []*model.Reservation
		if seed%4 == 1 {
			for k := range 1 + rng.Intn(3) {
				r := &model.Reservation{Name: fmt.Sprintf("r%d", k), Users: []string{"user"}}
				r.Start = now + int64(rng.Intn(3)-1)*int64(rng.Intn(4000))
				r.End = r.Start + 1 + int64(rng.Intn(8000))
				if rng.Intn(4) == 0 {
					r.Flags |= model.ResvMaint
				}
				for _, n := range c.Nodes {
					if rng.Intn(3) == 0 {
						r.Nodes = append(r.Nodes, n.Name)
					}
				}
				rs = append(rs, r)
			}
		}
		cfg := sched.Config{Backfill: seed%2 == 0 || seed%3 == 0}
		if seed%3 == 2 {
			cfg.Preempt = sched.Preempt{Type: "partition_prio", Mode: []string{"CANCEL", "REQUEUE", "SUSPEND"}[rng.Intn(3)]}
		}
		switch rng.Intn(4) {
		case 1:
			cfg.BfWindow, cfg.BfResolution = int64(600*(1+rng.Intn(10))), int64(1+rng.Intn(120))
		case 2:
			cfg.BfMaxJobTest, cfg.BfMaxJobUser = 1+rng.Intn(4), 1+rng.Intn(3)
		case 3:
			cfg.MaxJobsPerCycle = 1 + rng.Intn(3)
		}
		for cycle := range 4 {
			in := c.Input()
			in.Reservations = rs
			want := sched.Schedule(in, now, cfg)
			got := sched.ScheduleUntil(in, now, cfg, nil, &sc)
			if !reflect.DeepEqual(want, got) {
				t.Fatalf("seed %d cycle %d: with a Scratch\n%+v\nwithout\n%+v", seed, cycle, got, want)
			}
			starts += len(got.Starts)
			planned += len(got.StartTimes)
			preempts += len(got.Preempts)
			if err := c.Apply(want, now); err != nil {
				t.Fatalf("seed %d cycle %d: apply: %v", seed, cycle, err)
			}
			now += int64(rng.Intn(600))
			// Configuration changes between passes: verdicts a Scratch
			// keeps must not outlive them.
			if rng.Intn(2) == 0 {
				n := c.Nodes[rng.Intn(len(c.Nodes))]
				switch rng.Intn(5) {
				case 0:
					n.Drain = !n.Drain
				case 1:
					n.Weight = rng.Intn(3)
				case 2:
					n.Responding = !n.Responding
				case 3:
					n.Memory += 256
				case 4:
					if p := c.Partitions["p1"]; p != nil && len(p.Nodes) > 1 {
						p.Nodes = p.Nodes[1:]
					}
				}
			}
			for _, j := range c.Jobs {
				if j.State == model.JobRunning && rng.Intn(2) == 0 {
					c.Finish(j, model.JobCompleted, 0, now)
				}
			}
		}
	}
	t.Logf("%d starts, %d planned starts, %d preemptions over %d seeds", starts, planned, preempts, seeds)
	if starts < seeds || planned < seeds/4 || preempts == 0 {
		t.Fatalf("only %d starts, %d planned starts and %d preemptions over %d seeds: generator too easy", starts, planned, preempts, seeds)
	}
}
