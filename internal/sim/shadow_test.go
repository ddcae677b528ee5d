package sim

import (
	"testing"

	"github.com/drover-hpc/drover/internal/model"
)

// shadowCut keeps the jobs up to the last one the head's reservation does
// not prove idle: one that fits the free CPUs and either ends before the
// reservation can start or fits beside the free nodes it must hold.
func TestShadowCut(t *testing.T) {
	// 10 one-CPU nodes at now=1000: 3 free; running job 1 (4 CPUs) ends
	// by its limit at 1130, job 2 (3 CPUs) at 1500. The head (job 3)
	// needs 6: the releases reach 3+4 = 7 at 1130, rounded up to 1140,
	// so its reservation starts by 1140 and holds at least 6-4 = 2 of the
	// 3 free nodes: 1 is left beside it until then.
	job := func(id int, start, limit int64) *model.Job {
		return &model.Job{ID: model.JobID(id), StartTime: start, TimeLimit: limit}
	}
	running := []*model.Job{job(1, 0, 1130), job(2, 500, 1000)}
	for _, tc := range []struct {
		name  string
		need  []int   // of the pending jobs after the head
		limit []int64 // their limits
		want  int
	}{
		{"all held", []int{2, 3, 5}, []int64{500, 500, 500}, 0},
		{"one fits beside", []int{2, 1, 2}, []int64{500, 500, 500}, 3},
		{"ends before", []int{2, 2, 3}, []int64{140, 141, 500}, 2},
		{"window too short to meet it", []int{3}, []int64{139}, 2},
	} {
		need := []int{4, 3, 6}
		pending := []*model.Job{job(3, 0, 100)}
		for k, n := range tc.need {
			need = append(need, n)
			pending = append(pending, job(4+k, 0, tc.limit[k]))
		}
		g := newGate(need, 10, Policies["backfill"], true)
		if got := g.shadowCut(pending, 3, running, 1000); got != tc.want {
			t.Errorf("%s: shadowCut %d, want %d", tc.name, got, tc.want)
		}
	}
	// Past the window: the head may get no reservation, nothing is cut.
	g := newGate([]int{4, 3, 6, 2}, 10, Policies["backfill"], true)
	g.window = 100
	pending := []*model.Job{job(3, 0, 100), job(4, 0, 500)}
	if got := g.shadowCut(pending, 3, running, 1000); got != 2 {
		t.Errorf("head's instant past the window: shadowCut %d, want 2", got)
	}
}
