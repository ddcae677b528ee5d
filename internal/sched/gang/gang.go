// Package gang decides which of the jobs that share CPUs run in the
// current time slice: gang scheduling (PreemptMode=SUSPEND,GANG with
// OverSubscribe=FORCE:N partitions) and the resumption of jobs suspended
// by preemption. It is a pure function over a description of the jobs;
// the controller commits its decision as one replicated command and
// freezes or thaws the jobs through the cgroup freezer.
//
// It must not import state, fsm or anything that does I/O (see
// internal/sched's import rules).
package gang

import (
	"cmp"
	"slices"

	"github.com/drover-hpc/drover/internal/model"
)

// Job is one job the slicer may suspend or resume.
type Job struct {
	ID    model.JobID
	Alloc []model.NodeAlloc
	// Running: not suspended now. Suspended jobs hold no CPUs.
	Running bool
	// Sliced: the job time-slices (a gang partition's); a running job
	// that is not sliced is never suspended here, only resumed.
	Sliced bool
	// Since is when the job last began running or was suspended.
	Since int64
	// Blocked: a suspended job that must stay so (its preemptor still
	// waits to start on its CPUs).
	Blocked bool
	// Rank orders suspended jobs for resumption: higher first (partition
	// PriorityTier).
	Rank int
}

// Input is one decision's view of the cluster.
type Input struct {
	Jobs []Job
	// Busy is each node's CPUs held by jobs not in Jobs (CPU ids, and
	// their count for allocations without ids); Size each node's CPUs.
	Busy  map[string]model.Bitmap
	Used  map[string]int
	Size  map[string]int
	Now   int64
	Slice int64 // SchedulerTimeSlice, seconds
}

// Decision lists the jobs to suspend and to resume, in ID order.
type Decision struct {
	Suspend, Resume []model.JobID
}

// Decide picks this slice's running set: running jobs whose slice is not
// over (and running jobs that do not time-slice) keep their CPUs; then
// suspended jobs, highest rank and longest waiting first, take what is
// free; then jobs whose slice is over keep running where nobody took
// their CPUs. Jobs left out are suspended, those let in resumed.
func Decide(in Input) Decision {
	busy := map[string]model.Bitmap{}
	used := map[string]int{}
	for n, b := range in.Busy {
		busy[n] = b
	}
	for n, u := range in.Used {
		used[n] = u
	}
	fits := func(j *Job) bool {
		for _, a := range j.Alloc {
			if a.CPUIDs.Intersects(busy[a.Node]) || used[a.Node]+a.CPUs > in.Size[a.Node] {
				return false
			}
		}
		return true
	}
	take := func(j *Job) {
		for _, a := range j.Alloc {
			busy[a.Node] = busy[a.Node].Or(a.CPUIDs)
			used[a.Node] += a.CPUs
		}
	}
	var keep, waiting, expired []*Job
	for i := range in.Jobs {
		j := &in.Jobs[i]
		switch {
		case j.Running && (!j.Sliced || in.Now-j.Since < in.Slice):
			keep = append(keep, j)
		case j.Running:
			expired = append(expired, j)
		case !j.Blocked:
			waiting = append(waiting, j)
		}
	}
	slices.SortFunc(waiting, func(a, b *Job) int {
		if c := cmp.Compare(b.Rank, a.Rank); c != 0 {
			return c
		}
		if c := cmp.Compare(a.Since, b.Since); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	slices.SortFunc(expired, func(a, b *Job) int {
		if c := cmp.Compare(a.Since, b.Since); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	for _, j := range keep {
		take(j)
	}
	var d Decision
	for _, j := range waiting {
		if fits(j) {
			take(j)
			d.Resume = append(d.Resume, j.ID)
		}
	}
	for _, j := range expired {
		if fits(j) {
			take(j)
		} else {
			d.Suspend = append(d.Suspend, j.ID)
		}
	}
	slices.Sort(d.Suspend)
	slices.Sort(d.Resume)
	return d
}
