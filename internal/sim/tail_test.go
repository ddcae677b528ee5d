package sim

import (
	"fmt"
	"testing"

	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/sched"
)

// The tail ends a pass once every job left needs more free nodes than
// those no reservation made so far takes within its time limit.
func TestTailStop(t *testing.T) {
	// 10 one-CPU nodes at now=1000, n1-n3 free. Job 3 (6 CPUs) got a
	// reservation at 1140 on n1, n2 and four busy nodes: n3 is left free
	// beyond 1140, n1 and n2 until then.
	nodes := make([]*model.Node, 10)
	for i := range nodes {
		nodes[i] = &model.Node{Name: fmt.Sprintf("n%d", i+1), CPUs: 1, State: model.NodeUp, Responding: true}
		if i >= 3 {
			nodes[i].AllocCPUs = 1
		}
	}
	index := newNodeIndex(nodes)
	job := func(id int, limit int64) *model.Job {
		return &model.Job{ID: model.JobID(id), TimeLimit: limit}
	}
	reserved := &sched.Plan{StartTimes: map[model.JobID]int64{3: 1140},
		StartNodes: map[model.JobID][]string{3: {"n1", "n2", "n4", "n5", "n6", "n7"}}}
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
		tl := newTail(need, index)
		tl.begin(1000, nodes)
		if tl.stop(order, 0, &sched.Plan{}) {
			t.Errorf("%s: stopped before the head's reservation", tc.name)
		}
		if got := tl.stop(order, 1, reserved); got != tc.stop {
			t.Errorf("%s: stop %v, want %v", tc.name, got, tc.stop)
		}
	}
	// A start takes its nodes: job 4 (1 CPU) starts on n3, and only n1
	// and n2 are left, until 1140: job 5 (limit 100) may start, job 6
	// (limit 500) may not.
	need := []int{4, 3, 6, 1, 1, 1}
	started := &sched.Plan{StartTimes: reserved.StartTimes, StartNodes: reserved.StartNodes,
		Starts: []sched.Start{{Job: 4, Alloc: []model.NodeAlloc{{Node: "n3", CPUs: 1}}}}}
	for _, tc := range []struct {
		order []*model.Job
		stop  bool
	}{
		{[]*model.Job{job(3, 100), job(4, 50), job(5, 100), job(6, 500)}, false},
		{[]*model.Job{job(3, 100), job(4, 50), job(6, 500)}, true},
	} {
		tl := newTail(need, index)
		tl.begin(1000, nodes)
		tl.stop(tc.order, 0, &sched.Plan{})
		tl.stop(tc.order, 1, reserved)
		if got := tl.stop(tc.order, 2, started); got != tc.stop {
			t.Errorf("after a start, %d jobs left: stop %v, want %v", len(tc.order)-2, got, tc.stop)
		}
	}
}

// nodeIndex.of reads what a name → position map reads, for the trace
// model's names and any others.
func TestNodeIndex(t *testing.T) {
	var nodes []*model.Node
	for _, name := range []string{"n1", "n2", "n3", "gpu1", "n5", "n4", "n", "n07", "n10", "n9"} {
		nodes = append(nodes, &model.Node{Name: name})
	}
	x := newNodeIndex(nodes)
	for _, name := range []string{"n1", "n2", "n3", "gpu1", "n4", "n5", "n", "n07", "n7", "n10", "n9", "n6", "n0",
		"n11", "n99999999999999999999999", "n1x", "", "x"} {
		want := x.pos[name]
		if got := x.of(name); got != want {
			t.Errorf("of(%q) = %d, the map says %d", name, got, want)
		}
	}
}
