package sim

import (
	"testing"

	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/sched"
)

// The tail ends a pass once every job left needs more of the free nodes
// than the reservations made so far leave it over its time limit.
func TestTailStop(t *testing.T) {
	// 10 one-CPU nodes at now=1000, 3 free; running job 1 (4 CPUs) ends
	// by its limit at 1130, job 2 (3 CPUs) at 1500. Job 3 (6 CPUs, limit
	// 100) got a reservation at 1140: it holds at least 6-4 = 2 of the
	// free nodes over [1140, 1240), 1 is left beside it.
	job := func(id int, limit int64) *model.Job {
		return &model.Job{ID: model.JobID(id), TimeLimit: limit}
	}
	running := []*model.Job{job(1, 1130), job(2, 1000)}
	running[1].StartTime = 500
	reserved := &sched.Plan{StartTimes: map[model.JobID]int64{3: 1140}}
	for _, tc := range []struct {
		name string
		need []int   // of the jobs after job 3
		lim  []int64 // their limits
		stop bool
	}{
		{"all held", []int{2, 3, 5}, []int64{500, 500, 500}, true},
		{"one fits beside", []int{2, 1, 2}, []int64{500, 500, 500}, false},
		{"ends before the reservation", []int{2, 2}, []int64{140, 141}, false},
		{"meets it", []int{2, 2}, []int64{141, 141}, true},
	} {
		need := []int{4, 3, 6}
		order := []*model.Job{job(3, 100)}
		for k, n := range tc.need {
			need = append(need, n)
			order = append(order, job(4+k, tc.lim[k]))
		}
		tl := newTail(need)
		tl.begin(1000, 3, running)
		if tl.stop(order, 0, &sched.Plan{}) {
			t.Errorf("%s: stopped before the head's reservation", tc.name)
		}
		if got := tl.stop(order, 1, reserved); got != tc.stop {
			t.Errorf("%s: stop %v, want %v", tc.name, got, tc.stop)
		}
	}
	// A start takes a free node until its limit: job 4 (1 CPU, limit 50)
	// starts, 2 nodes are left, and the reservation still holds 1 of them
	// (6 nodes at 1140: at most 4 + 1 released by then), so job 5 (1 CPU)
	// may start beside it and job 6 (2 CPUs) may not.
	need := []int{4, 3, 6, 1, 1, 2}
	started := &sched.Plan{StartTimes: reserved.StartTimes, Starts: []sched.Start{{Job: 4}}}
	for _, tc := range []struct {
		order []*model.Job
		stop  bool
	}{
		{[]*model.Job{job(3, 100), job(4, 50), job(5, 500), job(6, 500)}, false},
		{[]*model.Job{job(3, 100), job(4, 50), job(6, 500)}, true},
	} {
		tl := newTail(need)
		tl.begin(1000, 3, running)
		tl.stop(tc.order, 0, &sched.Plan{})
		tl.stop(tc.order, 1, reserved)
		if got := tl.stop(tc.order, 2, started); got != tc.stop {
			t.Errorf("after a start, %d jobs left: stop %v, want %v", len(tc.order)-2, got, tc.stop)
		}
	}
}
