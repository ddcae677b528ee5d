package sched_test

import (
	"reflect"
	"testing"

	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/sched"
	"github.com/drover-hpc/drover/internal/sched/schedtest"
)

// bf_max_job_array_resv: an array's tasks that can start now all start;
// of those that wait, only the first N get a planned start, the others
// keep their reason without one, and the CPUs the unplanned ones would
// have held are what a later job is planned on.
func TestBfMaxJobArrayResv(t *testing.T) {
	const now = 1000
	build := func() (*schedtest.Cluster, []*model.Job, []*model.Job, *model.Job) {
		c := schedtest.New()
		c.AddNode("n1", 8, 8000)
		c.AddPartition("p")
		runFor(c, "n1", 4, "", now-10, 110) // 4 of 8 CPUs until 1100
		s := schedtest.Spec()
		s.TimeLimit = 100
		s.Array = &model.ArraySpec{TaskIDs: make([]int, 30)}
		for i := range s.Array.TaskIDs {
			s.Array.TaskIDs[i] = i
		}
		a := c.SubmitArray(s)
		s2 := *s
		s2.Array = &model.ArraySpec{TaskIDs: []int{0, 1, 2}}
		b := c.SubmitArray(&s2)
		other := schedtest.Spec()
		other.TimeLimit = 100
		return c, a, b, c.Submit(other)
	}
	plan := func(bound int) (*sched.Plan, []*model.Job, []*model.Job, *model.Job) {
		c, a, b, other := build()
		cfg := bfCfg
		cfg.BfMaxJobArrayResv = bound
		return sched.Schedule(c.Input(), now, cfg), a, b, other
	}

	free, a, b, other := plan(0)
	bounded, _, _, _ := plan(20)
	if got := len(bounded.Starts); got != 4 {
		t.Fatalf("started %d tasks now, want 4 (the free CPUs)", got)
	}
	if !reflect.DeepEqual(startedIDs(bounded), startedIDs(free)) {
		t.Errorf("starts now differ: %v bounded, %v unbounded", startedIDs(bounded), startedIDs(free))
	}
	if !reflect.DeepEqual(bounded.Reasons, free.Reasons) {
		t.Errorf("reasons differ with the bound:\n%v\n%v", bounded.Reasons, free.Reasons)
	}
	// Unbounded: the 26 waiting tasks of a are planned 8 at a time every
	// 100 s from 1100 (when the running job and the 4 started tasks end),
	// then the 3 of b and the other job.
	for k, j := range a[4:] {
		if _, ok := free.StartTimes[j.ID]; !ok {
			t.Fatalf("unbounded: waiting task %d has no planned start", k+4)
		}
		st, ok := bounded.StartTimes[j.ID]
		if k < 20 && (!ok || st != free.StartTimes[j.ID]) {
			t.Errorf("task %d: planned %d (%v), want %d as unbounded", k+4, st, ok, free.StartTimes[j.ID])
		}
		if k >= 20 && ok {
			t.Errorf("task %d (the %dth waiting) planned at %d past the bound of 20", k+4, k+1, st)
		}
		if k >= 20 && len(bounded.StartNodes[j.ID]) > 0 {
			t.Errorf("task %d has planned nodes %v past the bound", k+4, bounded.StartNodes[j.ID])
		}
	}
	// Another array counts apart: all 3 of b are planned, and each (and
	// the other job) sooner, in the room a's unplanned tasks left.
	for _, j := range append(b, other) {
		st, ok := bounded.StartTimes[j.ID]
		if !ok || st >= free.StartTimes[j.ID] {
			t.Errorf("job %d planned at %d (%v), want before %d (unbounded)", j.ID, st, ok, free.StartTimes[j.ID])
		}
	}
	// 20 tasks of a (8 at 1100, 8 at 1200, 4 at 1300) leave 4 CPUs at
	// 1300: b's three and the other job take them.
	for _, j := range append(b, other) {
		if st := bounded.StartTimes[j.ID]; st != 1300 {
			t.Errorf("job %d planned at %d, want 1300", j.ID, st)
		}
	}
	// A bound no array reaches changes nothing.
	wide, _, _, _ := plan(40)
	if !reflect.DeepEqual(wide, free) {
		t.Errorf("a bound of 40 changed the plan of 30-task and 3-task arrays")
	}
}
