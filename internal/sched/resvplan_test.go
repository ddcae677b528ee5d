package sched_test

import (
	"fmt"
	"maps"
	"math/rand"
	"testing"

	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/sched"
	"github.com/drover-hpc/drover/internal/sched/schedtest"
)

// planResv runs one backfill cycle with reservations, checks the plan's
// invariants and that no start breaks a reservation, and returns it.
func planResv(t *testing.T, c *schedtest.Cluster, rs []*model.Reservation, now int64, cfg sched.Config) *sched.Plan {
	t.Helper()
	in := c.Input()
	in.Reservations = rs
	p := sched.Schedule(in, now, cfg)
	if err := schedtest.CheckPlan(in, p); err != nil {
		t.Fatalf("plan breaks invariants:\n%v", err)
	}
	if err := checkReservations(in, p, now); err != nil {
		t.Fatal(err)
	}
	return p
}

// The picture: a maintenance window in an hour on the only node.
// A job whose limit reaches into it waits for maintenance and is planned
// for the window's end; a job that ends before it starts now.
func TestBackfillPlansAfterMaint(t *testing.T) {
	c := schedtest.New()
	oneNode(c, 4, 1000)
	const now = 10000
	rs := []*model.Reservation{{Name: "maint", Start: now + 3600, End: now + 7200, Flags: model.ResvMaint,
		Nodes: []string{"n1"}, Users: []string{"root"}}}
	long := submit(c, 1, func(s *model.JobSpec) { s.NTasks, s.TimeLimit = 4, 7200 })
	short := submit(c, 1, func(s *model.JobSpec) { s.NTasks, s.TimeLimit = 4, 1800 })
	p := planResv(t, c, rs, now, bfCfg)
	got := outcomes(p)
	if got[short.ID] != "start n1:4:0" || got[long.ID] != model.ReasonResvMaint {
		t.Errorf("outcomes %s", show(got))
	}
	if st := p.StartTimes[long.ID]; st != now+7200 {
		t.Errorf("long job planned at %d, want the window's end %d", st, now+7200)
	}
	if !maps.Equal(p.PlannedNodes, map[string]bool{"n1": true}) {
		t.Errorf("planned nodes %v", p.PlannedNodes)
	}
	// With a coarse resolution the plan still starts at or after the end.
	cfg := bfCfg
	cfg.BfResolution = 300
	if st := planResv(t, c, rs, now+1, cfg).StartTimes[long.ID]; st < now+7200 || st >= now+7200+300 {
		t.Errorf("resolution 300: long job planned at %d, want within 300 s after %d", st, now+7200)
	}
}

// Lower-ordered jobs are planned around the window too, not onto it: the
// reservation's node is free until the window, the other node is busy for
// long. A 2-hour job is planned on n1 after the window (earlier than n2
// frees up), and a 1-hour job behind it fits before the window.
func TestBackfillPlansAroundWindow(t *testing.T) {
	c := schedtest.New()
	c.AddNodes("n", 2, 4, 1000)
	c.AddPartition("p")
	const now = 10000
	runFor(c, "n2", 4, "", now, 20000) // n2 busy until now+20000
	rs := []*model.Reservation{{Name: "lab", Start: now + 3600, End: now + 7200,
		Nodes: []string{"n1"}, Users: []string{"alice"}}}
	first := submit(c, 1, func(s *model.JobSpec) { s.NTasks, s.TimeLimit = 4, 7200 })
	second := submit(c, 1, func(s *model.JobSpec) { s.NTasks, s.TimeLimit = 4, 7200 })
	fits := submit(c, 1, func(s *model.JobSpec) { s.NTasks, s.TimeLimit = 4, 3600 })
	p := planResv(t, c, rs, now, bfCfg)
	if st := p.StartTimes[first.ID]; st != now+7200 {
		t.Errorf("first job planned at %d, want %d (after the window, on n1)", st, now+7200)
	}
	// The second waits for the first (n1 until now+14400) or for n2
	// (now+20000): never inside the window.
	if st := p.StartTimes[second.ID]; st != now+14400 {
		t.Errorf("second job planned at %d, want %d", st, now+14400)
	}
	if got := outcomes(p)[fits.ID]; got != "start n1:4:0" {
		t.Errorf("1-hour job: %s, want a start before the window", got)
	}
	// Kept off n1 by a (non-MAINT) reservation: Slurm 22.05's reason for
	// that is the maintenance one too.
	if r := p.Reasons[first.ID]; r != model.ReasonResvMaint {
		t.Errorf("first job reason %q", r)
	}
}

// A DAILY window blocks each day within bf_window: a job that fits
// between two windows is planned in the gap, one that fits in no gap is
// not planned at all (never into tomorrow's window).
func TestBackfillDailyReservation(t *testing.T) {
	c := schedtest.New()
	oneNode(c, 4, 1000)
	const now, hour = 100000, 3600
	rs := []*model.Reservation{{Name: "daily", Start: now + hour, End: now + 2*hour, Flags: model.ResvDaily,
		Nodes: []string{"n1"}, Users: []string{"root"}}}
	gap := submit(c, 1, func(s *model.JobSpec) { s.NTasks, s.TimeLimit = 4, 22*hour })
	cfg := bfCfg
	cfg.BfWindow = 3 * 24 * hour
	p := planResv(t, c, rs, now, cfg)
	if st := p.StartTimes[gap.ID]; st != now+2*hour {
		t.Errorf("22-hour job planned at %d, want %d (between today's and tomorrow's window)", st, now+2*hour)
	}
	c2 := schedtest.New()
	oneNode(c2, 4, 1000)
	long := submit(c2, 1, func(s *model.JobSpec) { s.NTasks, s.TimeLimit = 4, 23*hour+1800 })
	p = planResv(t, c2, rs, now, cfg)
	if st, ok := p.StartTimes[long.ID]; ok {
		t.Errorf("23.5-hour job planned at %d; no gap between daily windows holds it", st)
	}
}

// A job of a reservation that has not started is planned at its start, on
// its nodes, and keeps the reason Reservation. A job of an active one
// whose nodes are busy past the window's end is not planned (Slurm starts
// a reservation's job no later than its end).
func TestBackfillJobInReservation(t *testing.T) {
	c := schedtest.New()
	c.AddNodes("n", 2, 4, 1000)
	c.AddPartition("p")
	const now = 10000
	rs := []*model.Reservation{{Name: "later", Start: now + 600, End: now + 1200,
		Nodes: []string{"n2"}, Users: []string{"user"}}}
	in := submit(c, 1, func(s *model.JobSpec) { s.NTasks, s.TimeLimit, s.Reservation = 4, 300, "later" })
	p := planResv(t, c, rs, now, bfCfg)
	if r := p.Reasons[in.ID]; r != model.ReasonReservation {
		t.Errorf("reason %q, want Reservation", r)
	}
	if st := p.StartTimes[in.ID]; st != now+600 {
		t.Errorf("planned at %d, want the window's start %d", st, now+600)
	}
	if !maps.Equal(p.PlannedNodes, map[string]bool{"n2": true}) {
		t.Errorf("planned nodes %v, want n2", p.PlannedNodes)
	}
	if len(p.Preempts) != 0 || len(p.Starts) != 0 {
		t.Errorf("starts %v, preempts %v", startedIDs(p), p.Preempts)
	}

	// Active, but n2 is busy until after the window: no plan.
	c2 := schedtest.New()
	c2.AddNodes("n", 2, 4, 1000)
	c2.AddPartition("p")
	runFor(c2, "n2", 4, "", now, 5000)
	act := []*model.Reservation{{Name: "now", Start: now - 10, End: now + 1200, Nodes: []string{"n2"}, Users: []string{"user"}}}
	busy := submit(c2, 1, func(s *model.JobSpec) { s.NTasks, s.TimeLimit, s.Reservation = 4, 300, "now" })
	p = planResv(t, c2, act, now, bfCfg)
	if st, ok := p.StartTimes[busy.ID]; ok {
		t.Errorf("planned at %d, after its reservation ends at %d", st, now+1200)
	}
	// Busy only until inside the window: planned then.
	c3 := schedtest.New()
	c3.AddNodes("n", 2, 4, 1000)
	c3.AddPartition("p")
	runFor(c3, "n2", 4, "", now, 500)
	ok := submit(c3, 1, func(s *model.JobSpec) { s.NTasks, s.TimeLimit, s.Reservation = 4, 3000, "now" })
	p = planResv(t, c3, act, now, bfCfg)
	if st := p.StartTimes[ok.ID]; st != now+500 {
		t.Errorf("planned at %d, want %d", st, now+500)
	}
}

// A running job of a reservation gives its nodes back at the window's
// end, not at its limit: a job planned for then is not pushed back, and a
// job of the reservation with a long limit still starts now in it.
func TestBackfillReservationJobEndsWithWindow(t *testing.T) {
	c := schedtest.New()
	oneNode(c, 4, 1000)
	const now = 10000
	rs := []*model.Reservation{{Name: "r", Start: now - 10, End: now + 1000, Nodes: []string{"n1"}, Users: []string{"user"}}}
	outside := submit(c, 1, func(s *model.JobSpec) { s.NTasks, s.TimeLimit = 4, 600 })
	in := submit(c, 1, func(s *model.JobSpec) { s.NTasks, s.TimeLimit, s.Reservation = 4, 5000, "r" })
	p := planResv(t, c, rs, now, bfCfg)
	if got := outcomes(p)[in.ID]; got != "start n1:4:0" {
		t.Errorf("job in the reservation: %s", got)
	}
	if st := p.StartTimes[outside.ID]; st != now+1000 {
		t.Errorf("outside job planned at %d, want the window's end %d", st, now+1000)
	}
}

// FLEX: a job of the reservation may also use nodes outside it, and is
// planned there when the reservation's nodes are busy.
func TestBackfillFlexReservation(t *testing.T) {
	c := schedtest.New()
	c.AddNodes("n", 2, 4, 1000)
	c.AddPartition("p")
	const now = 10000
	runFor(c, "n1", 4, "", now, 5000)
	runFor(c, "n2", 4, "", now, 300)
	rs := []*model.Reservation{{Name: "flex", Start: now - 10, End: now + 1000, Flags: model.ResvFlex,
		Nodes: []string{"n1"}, Users: []string{"user"}}}
	j := submit(c, 1, func(s *model.JobSpec) { s.NTasks, s.TimeLimit, s.Reservation = 4, 3000, "flex" })
	p := planResv(t, c, rs, now, bfCfg)
	if st := p.StartTimes[j.ID]; st != now+300 {
		t.Errorf("FLEX job planned at %d, want %d on n2", st, now+300)
	}
}

// Without reservations the plan is the same whether or not the input
// names an empty list: the blocks cost nothing when absent.
func TestBackfillNoReservationsUnchanged(t *testing.T) {
	c := schedtest.New()
	c.AddNodes("n", 3, 4, 1000)
	c.AddPartition("p")
	const now = 10000
	runFor(c, "n1", 4, "", now, 100)
	for k := range 6 {
		submit(c, 1, func(s *model.JobSpec) { s.NTasks, s.TimeLimit = 4, int64(200+100*k) })
	}
	a := planResv(t, c, nil, now, bfCfg)
	b := planResv(t, c, []*model.Reservation{}, now, bfCfg)
	if !maps.Equal(a.StartTimes, b.StartTimes) || !maps.Equal(outcomes(a), outcomes(b)) {
		t.Errorf("plans differ: %v vs %v", a.StartTimes, b.StartTimes)
	}
}

// TestBackfillPlanProperty: on random one-node clusters (the node of a
// planned start is then known) with random reservations, recurring ones
// included, no planned start puts a job on the node while a reservation
// it may not use holds it (any repeat of the window), no job of a
// reservation is planned outside its window, and every job that can only
// wait for a window that ends within bf_window gets a plan.
func TestBackfillPlanProperty(t *testing.T) {
	seeds := 400
	if testing.Short() {
		seeds = 50
	}
	planned := 0
	for seed := range int64(seeds) {
		rng := rand.New(rand.NewSource(seed))
		c := schedtest.New()
		oneNode(c, 4, 1000)
		const now, window = 100000, 4 * 86400
		if rng.Intn(2) == 0 {
			runFor(c, "n1", 1+rng.Intn(4), "", now-10, int64(60+rng.Intn(20000)))
		}
		var rs []*model.Reservation
		for k := range 1 + rng.Intn(3) {
			r := &model.Reservation{Name: fmt.Sprintf("r%d", k), Nodes: []string{"n1"}, Users: []string{"user"}}
			r.Start = now + int64(rng.Intn(40000)) - 10000
			r.End = r.Start + 1 + int64(rng.Intn(20000))
			switch rng.Intn(6) {
			case 5:
				r.Flags |= model.ResvOverlap
			case 0:
				r.Flags |= model.ResvDaily
			case 1:
				r.Flags |= model.ResvFlex
			case 2:
				r.Flags |= model.ResvMaint
			}
			rs = append(rs, r)
		}
		for range 2 + rng.Intn(6) {
			submit(c, 1, func(s *model.JobSpec) {
				s.NTasks = 1 + rng.Intn(4)
				s.TimeLimit = int64(60 * (1 + rng.Intn(600)))
				if rng.Intn(3) == 0 {
					s.Reservation = rs[rng.Intn(len(rs))].Name
				}
			})
		}
		cfg := sched.Config{Backfill: true, BfResolution: int64(1 + rng.Intn(120)), BfWindow: window}
		p := planResv(t, c, rs, now, cfg)
		for id, st := range p.StartTimes {
			planned++
			j := c.Jobs[id]
			end := st + j.TimeLimit
			var mine *model.Reservation
			for _, r := range rs {
				if r.Name == j.Spec.Reservation {
					mine = r
				}
			}
			for _, r := range rs {
				if mine != nil && r != mine && mine.Shadows(r) {
					continue // a MAINT (OVERLAP) reservation's job may use the others' (non-MAINT) nodes
				}
				own := r.Name == j.Spec.Reservation
				if own {
					if r.Flags&model.ResvFlex == 0 && (st < r.Start || st >= r.End) {
						t.Fatalf("seed %d: job %d of %s planned at %d, outside [%d, %d)", seed, id, r.Name, st, r.Start, r.End)
					}
					continue
				}
				for w := int64(0); w < 20; w++ {
					a, b := r.Start+w*r.Period(), r.End+w*r.Period()
					if a < end && st < b {
						t.Fatalf("seed %d: job %d (reservation %q) planned over [%d, %d), meeting %s's window [%d, %d)",
							seed, id, j.Spec.Reservation, st, end, r.Name, a, b)
					}
					if r.Period() == 0 {
						break
					}
				}
			}
		}
	}
	if planned < seeds {
		t.Fatalf("only %d planned starts over %d seeds: generator too easy", planned, seeds)
	}
}

// A job that names the reserved node (-w) is planned there after the
// window, waiting for maintenance meanwhile.
func TestBackfillRequiredNodeAfterMaint(t *testing.T) {
	c := schedtest.New()
	c.AddNodes("n", 2, 4, 1000)
	c.AddPartition("p")
	const now = 10000
	rs := []*model.Reservation{{Name: "maint", Start: now + 600, End: now + 1200, Flags: model.ResvMaint,
		Nodes: []string{"n1"}, Users: []string{"root"}}}
	pinned := submit(c, 1, func(s *model.JobSpec) { s.NTasks, s.TimeLimit, s.ReqNodes = 2, 3600, []string{"n1"} })
	free := submit(c, 1, func(s *model.JobSpec) { s.NTasks, s.TimeLimit = 2, 3600 })
	p := planResv(t, c, rs, now, bfCfg)
	if r := p.Reasons[pinned.ID]; r != model.ReasonResvMaint {
		t.Errorf("pinned job reason %q", r)
	}
	if st := p.StartTimes[pinned.ID]; st != now+1200 {
		t.Errorf("pinned job planned at %d, want %d", st, now+1200)
	}
	if got := outcomes(p)[free.ID]; got != "start n2:2:0" {
		t.Errorf("other job: %s", got)
	}
}

// Preemption never frees a node for a job that a reservation keeps off
// it: the guaranteed job pinned to the node in maintenance soon waits and
// preempts nobody; without -w it preempts the besteffort job on the
// other node.
func TestBackfillReservedNodeNotPreempted(t *testing.T) {
	c := newLab(t, 2, 4)
	const now = 10000
	for range 2 {
		submit(c, 1, func(s *model.JobSpec) { s.Partition, s.CPUsPerTask, s.TimeLimit = "besteffort", 8, 36000 })
		runAll(t, c, now-100, requeueBF)
	}
	rs := []*model.Reservation{{Name: "maint", Start: now + 600, End: now + 1200, Flags: model.ResvMaint,
		Nodes: []string{"g1"}, Users: []string{"root"}}}
	pinned := submit(c, 1, func(s *model.JobSpec) {
		s.Partition, s.CPUsPerTask, s.TimeLimit, s.ReqNodes = "gpu", 8, 3600, []string{"g1"}
	})
	p := planResv(t, c, rs, now, requeueBF)
	if len(p.Preempts) != 0 || p.Reasons[pinned.ID] != model.ReasonResvMaint {
		t.Fatalf("preemptions %+v, reason %q: want none, maintenance", p.Preempts, p.Reasons[pinned.ID])
	}
	// The besteffort job on g1 holds it until its limit: no earlier.
	if st := p.StartTimes[pinned.ID]; st != now-100+36000 {
		t.Errorf("pinned job planned at %d, want %d", st, now-100+36000)
	}
	pinned.Spec.ReqNodes = nil
	p = planResv(t, c, rs, now, requeueBF)
	if len(p.Preempts) != 1 || len(p.Preempts[0].Victims) != 1 || c.Jobs[p.Preempts[0].Victims[0].Job].Alloc[0].Node != "g2" {
		t.Fatalf("preemptions %+v: want the besteffort job on g2", p.Preempts)
	}
}

// A job of a FLEX reservation that has not started yet starts now (Slurm's
// FLEX lets it begin before the window), outside the reservation's nodes
// when they are busy.
func TestFlexJobStartsBeforeWindow(t *testing.T) {
	c := schedtest.New()
	c.AddNodes("n", 2, 4, 1000)
	c.AddPartition("p")
	const now = 10000
	runFor(c, "n1", 4, "", now, 5000)
	rs := []*model.Reservation{{Name: "flex", Start: now + 600, End: now + 1200, Flags: model.ResvFlex,
		Nodes: []string{"n1"}, Users: []string{"user"}}}
	j := submit(c, 1, func(s *model.JobSpec) { s.NTasks, s.TimeLimit, s.Reservation = 4, 3000, "flex" })
	for _, cfg := range []sched.Config{{}, bfCfg} {
		if got := outcomes(planResv(t, c, rs, now, cfg))[j.ID]; got != "start n2:4:0" {
			t.Errorf("backfill=%v: FLEX job before its window: %s", cfg.Backfill, got)
		}
	}
}
