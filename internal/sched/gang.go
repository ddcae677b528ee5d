package sched

import (
	"cmp"
	"slices"

	"github.com/drover-hpc/drover/internal/model"
)

// gangCandidates lists the running jobs a waiting job of a gang partition
// (PreemptMode=GANG, OverSubscribe=FORCE:N) may suspend so as to share
// their CPUs by time slices: jobs of its own partition whose CPUs are not
// already shared by N jobs. The one that has run longest since its last
// slice began comes first; the gang slicer (package sched/gang) then
// alternates them.
func (s *scheduler) gangCandidates(j *model.Job) []cand {
	p := s.in.Partitions[j.Partition]
	if p == nil || p.GangShare() < 2 {
		return nil
	}
	share := p.GangShare()
	var suspended []*model.Job
	var out []cand
	for _, v := range s.in.Running {
		if v.SchedSuspended && v.Partition == j.Partition {
			suspended = append(suspended, v)
		}
	}
	for _, v := range s.in.Running {
		if v.State != model.JobRunning || v.Partition != j.Partition || v.Suspended || v.Completing ||
			v.Preempted || len(v.Alloc) == 0 || s.victims[v.ID] {
			continue
		}
		// v, the jobs already suspended on its CPUs, and j.
		sharers := 2
		for _, w := range suspended {
			if sharesCPUs(v.Alloc, w.Alloc) {
				sharers++
			}
		}
		if sharers > share {
			continue
		}
		out = append(out, cand{j: v, mode: "GANG"})
	}
	slices.SortFunc(out, func(a, b cand) int {
		if c := cmp.Compare(sliceStart(a.j), sliceStart(b.j)); c != 0 {
			return c
		}
		return cmp.Compare(a.j.ID, b.j.ID)
	})
	return out
}

// sliceStart is when j's current slice of run time began.
func sliceStart(j *model.Job) int64 { return max(j.StartTime, j.SliceTime) }

// sharesCPUs reports whether two allocations hold a CPU in common.
func sharesCPUs(a, b []model.NodeAlloc) bool {
	for _, x := range a {
		for _, y := range b {
			if x.Node == y.Node && (x.CPUIDs.Intersects(y.CPUIDs) || x.CPUIDs.Count() == 0 || y.CPUIDs.Count() == 0) {
				return true
			}
		}
	}
	return false
}
