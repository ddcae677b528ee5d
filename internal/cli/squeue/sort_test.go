package squeue

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/drover-hpc/drover/internal/model"
)

// TestSortRowsMatchesComparisons: sorting on the precomputed key table
// orders rows as comparing each key in turn (strings as strings, numbers
// as numbers, '-' reversing), then the job id, would.
func TestSortRowsMatchesComparisons(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	states := []model.JobState{model.JobPending, model.JobRunning, model.JobCompleted}
	var jobs []*model.Job
	for i := range 400 {
		j := &model.Job{ID: model.JobID(1000 + r.IntN(300)), ArrayTaskID: model.NoArrayTask,
			Partition: "p" + strconv.Itoa(r.IntN(3)), Name: []string{"", "a", "b", "ab"}[r.IntN(4)],
			UserName: "u" + strconv.Itoa(r.IntN(4)), Priority: uint32(r.IntN(5)), State: states[r.IntN(3)],
			SubmitTime: int64(r.IntN(4)), TimeLimit: []int64{model.Unlimited, 60, 3600}[r.IntN(3)],
			Spec: &model.JobSpec{Account: []string{"", "x", "y"}[r.IntN(3)]}}
		if i%3 == 0 {
			j.ArrayJobID, j.ArrayTaskID = j.ID, i
		}
		jobs = append(jobs, j)
	}
	// A queue whose jobs are alike in the default keys (held jobs of one
	// user): their columns order nothing; in id order, reversed, shuffled.
	alike := func(order func([]*model.Job)) []*model.Job {
		var out []*model.Job
		for i := range 300 {
			out = append(out, &model.Job{ID: model.JobID(5000 + i), ArrayTaskID: model.NoArrayTask, Partition: "debug",
				Name: "scale", Reason: model.ReasonHeldUser, HoldUser: true, Priority: uint32(i % 2 * r.IntN(2))})
		}
		order(out)
		return out
	}
	queues := [][]*model.Job{jobs, alike(func([]*model.Job) {}), alike(slices.Reverse[[]*model.Job]),
		alike(func(q []*model.Job) { r.Shuffle(len(q), func(a, b int) { q[a], q[b] = q[b], q[a] }) })}
	c := &renderCtx{now: 100}
	for q, spec := range []string{DefaultSort, "-j,u", "a,-V,-l", "-i", "T,-P,Q", "u,-j,p,a", DefaultSort, "P,t", "P,t", "P,-t,-p"} {
		jobs := queues[max(0, q-6)]
		keys, err := parseSort(spec)
		if err != nil {
			t.Fatal(err)
		}
		got := make([]*jobRow, len(jobs))
		for i, j := range jobs {
			got[i] = &jobRow{job: j}
		}
		want := slices.Clone(got)
		sortRows(got, keys, c)
		slices.SortStableFunc(want, func(a, b *jobRow) int {
			for _, k := range keys {
				sa, na := sortValue(k.letter, a, c)
				sb, nb := sortValue(k.letter, b, c)
				d := strings.Compare(sa, sb)
				if d == 0 {
					d = cmp.Compare(na, nb)
				}
				if k.desc {
					d = -d
				}
				if d != 0 {
					return d
				}
			}
			return compareID(a, b)
		})
		for i := range got {
			if compareID(got[i], want[i]) != 0 {
				t.Fatalf("queue %d, -S %s: row %d is job %s, want %s", q, spec, i, got[i].job.DisplayID(), want[i].job.DisplayID())
			}
		}
	}
}
