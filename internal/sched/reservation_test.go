package sched_test

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/sched"
	"github.com/drover-hpc/drover/internal/sched/resv"
	"github.com/drover-hpc/drover/internal/sched/schedtest"
)

// scheduleResv runs one cycle with reservations and checks the plan's
// invariants, reservations included.
func scheduleResv(t *testing.T, c *schedtest.Cluster, rs []*model.Reservation, now int64, cfg sched.Config) map[model.JobID]string {
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
	return outcomes(p)
}

// checkReservations asserts that every start honours every reservation:
// no job outside a reservation on its nodes during its window, no job in
// one outside its nodes or before it starts.
func checkReservations(in *sched.Input, p *sched.Plan, now int64) error {
	set := resv.New(in.Reservations, now)
	jobs := map[model.JobID]*model.Job{}
	for _, j := range in.Pending {
		jobs[j.ID] = j
	}
	for _, st := range p.Starts {
		j := jobs[st.Job]
		end := resv.Never
		if limit := j.TimeLimit; limit > 0 {
			end = now + limit
		} else if part := in.Partitions[j.Partition]; part != nil && part.DefaultTime > 0 && limit != model.Unlimited {
			end = now + part.DefaultTime
		} else if part != nil && part.MaxTime > 0 && limit != model.Unlimited {
			end = now + part.MaxTime
		}
		for _, a := range st.Alloc {
			if !set.Allowed(j.Spec.Reservation, a.Node, now, end) {
				return fmt.Errorf("job %d (reservation %q, until %d) started on %s against a reservation", j.ID, j.Spec.Reservation, end, a.Node)
			}
		}
	}
	return nil
}

func bothPolicies(t *testing.T, fn func(t *testing.T, cfg sched.Config)) {
	for _, bf := range []bool{false, true} {
		t.Run(fmt.Sprintf("backfill=%v", bf), func(t *testing.T) { fn(t, sched.Config{Backfill: bf}) })
	}
}

func TestReservationMaintMasksNode(t *testing.T) {
	bothPolicies(t, func(t *testing.T, cfg sched.Config) {
		c := schedtest.New()
		c.AddNode("n1", 4, 1000)
		c.AddNode("n2", 4, 1000)
		c.AddPartition("p")
		rs := []*model.Reservation{{Name: "maint", Start: 0, End: 5000, Flags: model.ResvMaint,
			Nodes: []string{"n1"}, Users: []string{"user"}}}
		a := submit(c, 1, func(s *model.JobSpec) { s.NTasks = 4 })
		b := submit(c, 1, func(s *model.JobSpec) { s.NTasks = 4 })
		in := submit(c, 1, func(s *model.JobSpec) { s.NTasks = 4; s.Reservation = "maint" })
		got := scheduleResv(t, c, rs, 1000, cfg)
		want := map[model.JobID]string{a.ID: "start n2:4:0", b.ID: model.ReasonResvMaint, in.ID: "start n1:4:0"}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("outcomes:\n got  %s\n want %s", show(got), show(want))
		}
	})
}

func TestReservationNotYetActive(t *testing.T) {
	bothPolicies(t, func(t *testing.T, cfg sched.Config) {
		c := schedtest.New()
		oneNode(c, 4, 1000)
		rs := []*model.Reservation{{Name: "later", Start: 2000, End: 3000, Nodes: []string{"n1"}, Users: []string{"user"}}}
		j := submit(c, 1, func(s *model.JobSpec) { s.Reservation = "later" })
		gone := submit(c, 1, func(s *model.JobSpec) { s.Reservation = "deleted" })
		got := scheduleResv(t, c, rs, 1000, cfg)
		if got[j.ID] != model.ReasonReservation || got[gone.ID] != model.ReasonReservation {
			t.Errorf("outcomes %s", show(got))
		}
		// Once the window opens the job runs there.
		if got := scheduleResv(t, c, rs, 2000, cfg); got[j.ID] != "start n1:1:0" {
			t.Errorf("at start: %s", show(got))
		}
	})
}

// A job that ends before a future reservation starts backfills onto its
// node; one whose limit reaches into the window does not.
func TestBackfillAroundFutureReservation(t *testing.T) {
	func(t *testing.T, cfg sched.Config) {
		c := schedtest.New()
		oneNode(c, 4, 1000)
		rs := []*model.Reservation{{Name: "r", Start: 1000 + 3600, End: 1000 + 7200, Nodes: []string{"n1"}, Users: []string{"other"}}}
		long := submit(c, 1, func(s *model.JobSpec) { s.TimeLimit = 7200 })
		short := submit(c, 1, func(s *model.JobSpec) { s.TimeLimit = 1800 })
		unlimited := submit(c, 1, func(s *model.JobSpec) { s.TimeLimit = model.Unlimited })
		got := scheduleResv(t, c, rs, 1000, cfg)
		if got[short.ID] != "start n1:1:0" {
			t.Errorf("short job: %s", show(got))
		}
		for _, j := range []*model.Job{long, unlimited} {
			if got[j.ID] == "" || got[j.ID][:5] == "start" {
				t.Errorf("job %d (limit %d) must not start before the reservation: %s", j.ID, j.TimeLimit, show(got))
			}
		}
		// After the window, the long job runs.
		if got := scheduleResv(t, c, rs, 1000+7200, cfg); got[long.ID][:5] != "start" {
			t.Errorf("after the window: %s", show(got))
		}
	}(t, sched.Config{Backfill: true})
}

// TestReservationProperty: over random clusters, queues and reservations,
// no job is ever placed on a node that a reservation it is not in holds
// during the job's time limit, and no job in a reservation lands outside
// its nodes or before its window (checkReservations, every cycle).
func TestReservationProperty(t *testing.T) {
	seeds := 300
	if testing.Short() {
		seeds = 40
	}
	placedIn, checked := 0, 0
	for seed := range int64(seeds) {
		rng := rand.New(rand.NewSource(seed))
		c := schedtest.Random(rng)
		now := int64(10000)
		var rs []*model.Reservation
		for k := range 1 + rng.Intn(3) {
			r := &model.Reservation{Name: fmt.Sprintf("r%d", k), Users: []string{"user"}}
			r.Start = now + int64(rng.Intn(3)-1)*int64(rng.Intn(4000))
			r.End = r.Start + 1 + int64(rng.Intn(8000))
			if rng.Intn(4) == 0 {
				r.Flags |= model.ResvMaint
			}
			if rng.Intn(6) == 0 {
				r.Flags |= model.ResvFlex
			}
			for _, n := range c.Nodes {
				if rng.Intn(3) == 0 {
					r.Nodes = append(r.Nodes, n.Name)
				}
			}
			rs = append(rs, r)
		}
		for _, j := range c.Pending() {
			switch rng.Intn(4) {
			case 0:
				j.Spec.Reservation = rs[rng.Intn(len(rs))].Name
			case 1:
				j.TimeLimit = int64(60 * (1 + rng.Intn(200)))
			}
		}
		cfg := sched.Config{Backfill: seed%2 == 1}
		for cycle := range 3 {
			in := c.Input()
			in.Reservations = rs
			p := sched.Schedule(in, now, cfg)
			if err := checkReservations(in, p, now); err != nil {
				t.Fatalf("seed %d cycle %d: %v", seed, cycle, err)
			}
			if err := schedtest.CheckPlan(in, p); err != nil {
				t.Fatalf("seed %d cycle %d: %v", seed, cycle, err)
			}
			for _, st := range p.Starts {
				checked++
				if c.Jobs[st.Job].Spec.Reservation != "" {
					placedIn++
				}
			}
			if err := c.Apply(p, now); err != nil {
				t.Fatalf("seed %d cycle %d: apply: %v", seed, cycle, err)
			}
			now += int64(rng.Intn(3000))
		}
	}
	if checked < seeds || placedIn == 0 {
		t.Fatalf("only %d starts (%d in reservations) over %d seeds: generator too easy", checked, placedIn, seeds)
	}
}

// BenchmarkScheduleReservations is BenchmarkBackfill10kNodes50kJobs's
// pass with and without reservations: a MAINT reservation on 10% of the
// nodes from now+1h, and 5% of the jobs in a lab reservation of 500 nodes.
// Reservations must cost little per job.
func BenchmarkScheduleReservations(b *testing.B) {
	const now = 100000
	c := backfillCluster(10000, 50000)
	var maint, lab []string
	for i, n := range c.Nodes {
		switch {
		case i%10 == 0:
			maint = append(maint, n.Name)
		case i%20 == 1:
			lab = append(lab, n.Name)
		}
	}
	rs := []*model.Reservation{
		{Name: "maint", Start: now + 3600, End: now + 7200, Flags: model.ResvMaint, Nodes: maint, Users: []string{"root"}},
		{Name: "lab", Start: 0, End: now + 86400, Nodes: lab, Users: []string{"user"}},
	}
	for i, j := range c.Pending() {
		if i%20 == 0 {
			s := *j.Spec
			s.Reservation = "lab"
			j.Spec = &s
		}
	}
	for _, with := range []bool{false, true} {
		for _, bc := range []struct {
			name string
			cfg  sched.Config
		}{
			{"builtin", sched.Config{}},
			{"backfill_max_job_test=500", sched.Config{Backfill: true, BfResolution: 60, BfMaxJobTest: 500}},
		} {
			b.Run(fmt.Sprintf("reservations=%v/%s", with, bc.name), func(b *testing.B) {
				in := c.Input()
				if with {
					in.Reservations = rs
				}
				var p *sched.Plan
				for b.Loop() {
					p = sched.Schedule(in, now, bc.cfg)
				}
				b.ReportMetric(float64(len(p.Starts)), "starts")
			})
		}
	}
}
