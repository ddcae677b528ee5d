package sched

import (
	"cmp"
	"slices"

	"github.com/drover-hpc/drover/internal/model"
)

// Preempt configures preemption (slurm.conf PreemptType, PreemptMode,
// PreemptExemptTime). The zero value preempts nothing.
type Preempt struct {
	// Type is "partition_prio" (a job may preempt jobs of partitions
	// with a lower PriorityTier) or "" / "none".
	Type string
	// Mode is the cluster's PreemptMode (OFF, CANCEL, REQUEUE, SUSPEND);
	// a partition's own PreemptMode wins.
	Mode string
	// ExemptTime: a job that started less than this many seconds ago is
	// not preempted.
	ExemptTime int64
}

// Enabled reports whether any job may be preempted.
func (p Preempt) Enabled() bool { return p.Type == "partition_prio" }

// Preemption is one pending job's victims: the running jobs to requeue or
// cancel so that it can start. The preemptor keeps waiting (Resources)
// until they are gone; nothing is started in their place this cycle.
type Preemption struct {
	Job     model.JobID
	Victims []Victim
}

// Victim is a running job to preempt and how (CANCEL or REQUEUE).
type Victim struct {
	Job   model.JobID
	Mode  string
	Grace int64 // seconds between SIGTERM and SIGKILL
}

// ModeOf is how jobs of partition p are preempted under cfg.
func (p Preempt) ModeOf(part *model.Partition) string {
	if part != nil && part.PreemptMode != "" {
		return part.PreemptMode
	}
	if p.Mode == "" {
		return "OFF"
	}
	return p.Mode
}

// preemptFor looks for the fewest running jobs of lower PriorityTier
// whose resources, freed, let j start, lowest tier and priority first and
// of those the most recently started. It is a what-if over copies of the
// nodes: nothing in s changes but the victims' marks, so a later job of
// the same cycle does not pick them again. Jobs already being preempted
// (victims of an earlier cycle, still ending) count as free first, so a
// preemptor never takes more while they drain.
func (s *scheduler) preemptFor(j *model.Job, r *request, req, exc []int32) []Victim {
	pc := s.cfg.Preempt
	tier := s.in.Partitions[j.Partition].PriorityTier
	var draining, candidates []*model.Job
	for _, v := range s.in.Running {
		switch {
		case v.State != model.JobRunning || len(v.Alloc) == 0 || s.victims[v.ID]:
		case v.Preempted:
			if v.Completing {
				draining = append(draining, v)
			}
		case v.Completing, v.Suspended:
		default:
			vp := s.in.Partitions[v.Partition]
			if vp == nil || vp.PriorityTier >= tier {
				continue
			}
			if m := pc.ModeOf(vp); m != "CANCEL" && m != "REQUEUE" {
				continue
			}
			if pc.ExemptTime > 0 && v.StartTime+pc.ExemptTime > s.now {
				continue
			}
			if !s.touches(v, j.Partition) {
				continue
			}
			candidates = append(candidates, v)
		}
	}
	if len(candidates) == 0 {
		return nil
	}
	if len(draining) > 0 && s.fitsWithout(j, r, req, exc, draining) {
		return nil
	}
	slices.SortFunc(candidates, func(a, b *model.Job) int {
		ta, tb := s.in.Partitions[a.Partition].PriorityTier, s.in.Partitions[b.Partition].PriorityTier
		if c := cmp.Compare(ta, tb); c != 0 {
			return c
		}
		if c := cmp.Compare(a.Priority, b.Priority); c != 0 {
			return c
		}
		if c := cmp.Compare(b.StartTime, a.StartTime); c != 0 {
			return c
		}
		return cmp.Compare(b.ID, a.ID)
	})
	// Take victims in that order until the job fits; the CPU total is a
	// cheap bound that skips most what-ifs.
	need := int64(r.minCPUs())
	chosen := append([]*model.Job(nil), draining...)
	freed := s.c.free
	for _, v := range draining {
		freed += int64(allocCPUs(v))
	}
	fit := false
	for _, v := range candidates {
		chosen = append(chosen, v)
		freed += int64(allocCPUs(v))
		if freed >= need && s.fitsWithout(j, r, req, exc, chosen) {
			fit = true
			break
		}
	}
	if !fit {
		return nil
	}
	// Drop the victims that turned out not to be needed (an early pick on
	// a node the placement did not use), latest first.
	if len(chosen) <= 32 {
		for i := len(chosen) - 1; i >= len(draining); i-- {
			rest := slices.Delete(slices.Clone(chosen), i, i+1)
			if s.fitsWithout(j, r, req, exc, rest) {
				chosen = rest
			}
		}
	}
	var out []Victim
	for _, v := range chosen[len(draining):] {
		s.victims[v.ID] = true
		vp := s.in.Partitions[v.Partition]
		out = append(out, Victim{Job: v.ID, Mode: pc.ModeOf(vp), Grace: vp.GraceTime})
	}
	return out
}

// touches reports whether v holds a node of partition part.
func (s *scheduler) touches(v *model.Job, part string) bool {
	ps := s.c.parts[part]
	for _, a := range v.Alloc {
		if i, ok := s.c.index[a.Node]; ok && s.c.inPart(i, ps) {
			return true
		}
	}
	return false
}

// fitsWithout reports whether j could be placed if the jobs in gone had
// ended: the live nodes with their resources given back.
func (s *scheduler) fitsWithout(j *model.Job, r *request, req, exc []int32, gone []*model.Job) bool {
	nodes := slices.Clone(s.c.nodes)
	copied := map[int32]bool{}
	for _, v := range gone {
		for _, a := range v.Alloc {
			i, ok := s.c.index[a.Node]
			if !ok {
				continue
			}
			if !copied[i] {
				n := *nodes[i]
				nodes[i], copied[i] = &n, true
			}
			n := nodes[i]
			n.AllocCPUs = max(0, n.AllocCPUs-a.CPUs)
			n.AllocMem = max(0, n.AllocMem-a.Mem)
			n.AllocCores = n.AllocCores.AndNot(a.CPUIDs)
			n.AllocGPUs = n.AllocGPUs.AndNot(a.GPUs)
		}
	}
	c := newCluster(nodes, s.in.Partitions, true)
	rr := *r
	_, ok := c.place(viewLive, c.parts[j.Partition], &rr, req, exc)
	return ok
}

func allocCPUs(j *model.Job) int {
	n := 0
	for _, a := range j.Alloc {
		n += a.CPUs
	}
	return n
}
