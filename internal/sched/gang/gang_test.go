package gang

import (
	"slices"
	"testing"

	"github.com/drover-hpc/drover/internal/model"
)

func cores(ids ...int) model.Bitmap { return model.BitmapOf(ids...) }

func on(ids ...int) []model.NodeAlloc {
	return []model.NodeAlloc{{Node: "n1", CPUs: len(ids), CPUIDs: cores(ids...)}}
}

func input(now int64, jobs ...Job) Input {
	return Input{Jobs: jobs, Size: map[string]int{"n1": 4}, Now: now, Slice: 30}
}

func TestDecide(t *testing.T) {
	for _, tc := range []struct {
		name            string
		in              Input
		suspend, resume []model.JobID
	}{
		{"slice not over: nothing moves",
			input(100, Job{ID: 1, Alloc: on(0, 1, 2, 3), Running: true, Sliced: true, Since: 80},
				Job{ID: 2, Alloc: on(0, 1, 2, 3), Sliced: true, Since: 80}), nil, nil},
		{"slice over: the two swap",
			input(110, Job{ID: 1, Alloc: on(0, 1, 2, 3), Running: true, Sliced: true, Since: 80},
				Job{ID: 2, Alloc: on(0, 1, 2, 3), Sliced: true, Since: 80}), []model.JobID{1}, []model.JobID{2}},
		{"slice over, nobody waiting: keeps running",
			input(110, Job{ID: 1, Alloc: on(0, 1), Running: true, Sliced: true, Since: 80},
				Job{ID: 2, Alloc: on(2, 3), Running: true, Sliced: true, Since: 0}), nil, nil},
		{"longest waiting first, the other stays suspended",
			input(110, Job{ID: 1, Alloc: on(0, 1, 2, 3), Running: true, Sliced: true, Since: 80},
				Job{ID: 2, Alloc: on(0, 1), Sliced: true, Since: 70},
				Job{ID: 3, Alloc: on(0, 1), Sliced: true, Since: 60}), []model.JobID{1}, []model.JobID{3}},
		{"preemption victim resumes when its CPUs are free",
			input(110, Job{ID: 1, Alloc: on(0, 1), Since: 100, Rank: 1}), nil, []model.JobID{1}},
		{"not while its preemptor waits",
			input(110, Job{ID: 1, Alloc: on(0, 1), Since: 100, Blocked: true}), nil, nil},
		{"nor while others hold its CPUs",
			Input{Jobs: []Job{{ID: 1, Alloc: on(0, 1), Since: 100}}, Busy: map[string]model.Bitmap{"n1": cores(1)},
				Used: map[string]int{"n1": 1}, Size: map[string]int{"n1": 4}, Now: 110, Slice: 30}, nil, nil},
		{"a job that does not time-slice is never suspended",
			input(500, Job{ID: 1, Alloc: on(0, 1, 2, 3), Running: true, Since: 0},
				Job{ID: 2, Alloc: on(0, 1, 2, 3), Sliced: true, Since: 10}), nil, nil},
	} {
		d := Decide(tc.in)
		if !slices.Equal(d.Suspend, tc.suspend) || !slices.Equal(d.Resume, tc.resume) {
			t.Errorf("%s: suspend %v resume %v, want %v %v", tc.name, d.Suspend, d.Resume, tc.suspend, tc.resume)
		}
	}
}

// TestDecideAlternates runs two FORCE:2 jobs over ten slices: they take
// turns, each running half of the time, never both at once.
func TestDecideAlternates(t *testing.T) {
	jobs := []Job{
		{ID: 1, Alloc: on(0, 1, 2, 3), Running: true, Sliced: true, Since: 0},
		{ID: 2, Alloc: on(0, 1, 2, 3), Sliced: true, Since: 0},
	}
	ran := map[model.JobID]int64{}
	for now := int64(1); now <= 300; now++ {
		d := Decide(input(now, jobs...))
		for i := range jobs {
			j := &jobs[i]
			if slices.Contains(d.Suspend, j.ID) {
				j.Running, j.Since = false, now
			}
			if slices.Contains(d.Resume, j.ID) {
				j.Running, j.Since = true, now
			}
		}
		if jobs[0].Running == jobs[1].Running {
			t.Fatalf("at %d both jobs running=%v", now, jobs[0].Running)
		}
		for _, j := range jobs {
			if j.Running {
				ran[j.ID]++
			}
		}
	}
	if ran[1] < 140 || ran[2] < 140 {
		t.Errorf("run seconds %v, want about 150 each", ran)
	}
}
