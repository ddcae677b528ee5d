package sched

import (
	"cmp"
	"slices"
	"strings"

	"github.com/drover-hpc/drover/internal/model"
)

// Preempt configures preemption (slurm.conf PreemptType, PreemptMode,
// PreemptExemptTime, PreemptParameters). The zero value preempts nothing.
type Preempt struct {
	// Type is "partition_prio" (a job may preempt jobs of partitions
	// with a lower PriorityTier), "qos" (jobs whose QOS is in the Preempt
	// list of its own QOS) or "" / "none".
	Type string
	// Mode is the cluster's PreemptMode (OFF, CANCEL, REQUEUE, SUSPEND);
	// a QOS's (under qos) or partition's own PreemptMode wins.
	Mode string
	// Gang is PreemptMode's GANG flag: jobs of OverSubscribe=FORCE:N
	// partitions share CPUs by time slices (see gang.go).
	Gang bool
	// ExemptTime: a job that started less than this many seconds ago is
	// not preempted (a QOS's own PreemptExemptTime wins).
	ExemptTime int64
	// MinExemptPriority (PreemptParameters=min_exempt_priority): when
	// set, only jobs of lower priority may be preempted.
	MinExemptPriority int64
	// ReorderCount (PreemptParameters=reorder_count): passes that drop
	// victims the placement turned out not to need. 0 means Slurm's
	// default of one pass; negative means none.
	ReorderCount int
	// TimeSlice is SchedulerTimeSlice, seconds (gang slices; 0 = 30).
	TimeSlice int64
	// Within (PreemptMode=WITHIN, preempt/qos): a job may preempt jobs of
	// its own QOS of lower priority (a QOS's PreemptMode=WITHIN does the
	// same for that QOS alone).
	Within bool
	// YoungestFirst (PreemptParameters=youngest_first): victims are
	// taken by start time, the most recent first, whatever their tier or
	// priority (which still decide who may be preempted).
	YoungestFirst bool
}

// Enabled reports whether any job may be preempted or suspended for
// another.
func (p Preempt) Enabled() bool { return p.Type == "partition_prio" || p.Type == "qos" || p.Gang }

// Preemption is one pending job's victims: the running jobs to requeue,
// cancel or suspend so that it can start. The preemptor keeps waiting
// (Resources) until they are gone; nothing is started in their place this
// cycle.
type Preemption struct {
	Job     model.JobID
	Victims []Victim
}

// Victim is a running job to preempt and how: CANCEL, REQUEUE, SUSPEND
// (frozen, its CPUs lent to the preemptor, resumed when they are free
// again) or GANG (suspended to share its CPUs by time slices).
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

// freesCPUsOnly reports whether a victim preempted this way keeps its
// memory and GPUs: a suspended job stays in memory, as in Slurm.
func freesCPUsOnly(mode string) bool { return mode == "SUSPEND" || mode == "GANG" }

// preemptFor looks for the fewest running jobs j may preempt whose
// resources, freed, let j start, lowest tier and priority first and of
// those the most recently started. It is a what-if over copies of the
// nodes: nothing in s changes but the victims' marks, so a later job of
// the same cycle does not pick them again. Jobs already being preempted
// (victims of an earlier cycle, still ending) count as free first, so a
// preemptor never takes more while they drain. When no job may be
// preempted, a job of a gang partition may still suspend jobs it shares
// CPUs with (see gangCandidates).
func (s *scheduler) preemptFor(j *model.Job, r *request, req, exc []int32) []Victim {
	if t := s.cfg.Preempt.Type; t != "partition_prio" && t != "qos" {
		return s.pickVictims(j, r, req, exc, nil, s.gangCandidates(j)) // GANG alone
	}
	var draining, candidates []cand
	for _, v := range s.in.Running {
		switch {
		case v.State != model.JobRunning || len(v.Alloc) == 0 || s.victims[v.ID]:
		case v.Preempted:
			if v.Completing {
				draining = append(draining, cand{j: v})
			}
		case v.Completing, v.Suspended:
		default:
			m, ok := s.mayPreempt(j, v)
			if !ok || !s.touches(v, j.Partition) {
				continue
			}
			candidates = append(candidates, cand{j: v, mode: m, tier: s.victimTier(v)})
		}
	}
	if len(draining) > 0 && s.fitsWithout(j, r, req, exc, draining) {
		return nil
	}
	sortVictims(candidates, s.cfg.Preempt.YoungestFirst)
	if out := s.pickVictims(j, r, req, exc, draining, candidates); out != nil || !s.cfg.Preempt.Gang {
		return out
	}
	return s.pickVictims(j, r, req, exc, nil, s.gangCandidates(j))
}

// cand is a running job that may be preempted, and how; tier orders
// candidates (see victimTier).
type cand struct {
	j    *model.Job
	mode string // "" for a victim of an earlier cycle still ending
	tier int
}

// mayPreempt reports whether j may preempt the running job v under the
// configured PreemptType, and how.
func (s *scheduler) mayPreempt(j, v *model.Job) (string, bool) {
	pc := s.cfg.Preempt
	vp := s.in.Partitions[v.Partition]
	if vp == nil {
		return "", false
	}
	mode := pc.ModeOf(vp)
	exempt := pc.ExemptTime
	switch pc.Type {
	case "partition_prio":
		if vp.PriorityTier >= s.in.Partitions[j.Partition].PriorityTier {
			return "", false
		}
	case "qos":
		qj, qv := s.qosOf(j), s.qosOf(v)
		if qj == nil || qv == nil {
			return "", false
		}
		if qj.Name == qv.Name {
			// Slurm: the same QOS preempts itself only under WITHIN,
			// and then only jobs of lower priority.
			if !(pc.Within || qosWithin(qj.PreemptMode)) || j.Priority <= v.Priority {
				return "", false
			}
		} else if !slices.Contains(qj.Preempt, qv.Name) {
			return "", false
		}
		if m := qosMode(qv.PreemptMode); m != "" {
			mode = m
		}
		if qv.PreemptExemptTime > 0 {
			exempt = qv.PreemptExemptTime
		}
	default:
		return "", false
	}
	if mode != "CANCEL" && mode != "REQUEUE" && mode != "SUSPEND" {
		return "", false
	}
	if exempt > 0 && v.StartTime+exempt > s.now {
		return "", false
	}
	if pc.MinExemptPriority > 0 && int64(v.Priority) >= pc.MinExemptPriority {
		return "", false
	}
	return mode, true
}

// qosWithin reports whether a QOS PreemptMode (as sacctmgr stores it:
// "WITHIN", "WITHIN,REQUEUE") carries WITHIN.
func qosWithin(m string) bool {
	for _, f := range strings.Split(m, ",") {
		if f == "WITHIN" {
			return true
		}
	}
	return false
}

// qosMode is a QOS PreemptMode less GANG and WITHIN: the mode its jobs
// are preempted with, "" for the cluster's.
func qosMode(m string) string {
	for _, f := range strings.Split(m, ",") {
		if f != "WITHIN" && f != "GANG" && f != "" {
			return f
		}
	}
	return ""
}

// qosOf is the QOS a job runs under ("normal" when it named none), nil
// when the input carries no QOS table or the QOS is gone.
func (s *scheduler) qosOf(j *model.Job) *model.QOS {
	name := "normal"
	if j.Spec != nil && j.Spec.QOS != "" {
		name = j.Spec.QOS
	}
	return s.in.QOS[name]
}

// victimTier is v's rank as a victim, lowest preempted first: its QOS
// priority under preempt/qos, else its partition's PriorityTier.
func (s *scheduler) victimTier(v *model.Job) int {
	if s.cfg.Preempt.Type == "qos" {
		if q := s.qosOf(v); q != nil {
			return q.Priority
		}
		return 0
	}
	return s.in.Partitions[v.Partition].PriorityTier
}

// sortVictims orders candidates by preference: lowest tier, then lowest
// job priority, then the most recently started (youngest: by start time
// alone, as Slurm's preempt_youngest_first).
func sortVictims(candidates []cand, youngest bool) {
	slices.SortFunc(candidates, func(x, y cand) int {
		a, b := x.j, y.j
		if !youngest {
			if c := cmp.Compare(x.tier, y.tier); c != 0 {
				return c
			}
			if c := cmp.Compare(a.Priority, b.Priority); c != 0 {
				return c
			}
		}
		if c := cmp.Compare(b.StartTime, a.StartTime); c != 0 {
			return c
		}
		return cmp.Compare(b.ID, a.ID)
	})
}

// pickVictims takes candidates in order until j fits, then drops those
// the placement turned out not to need (reorder_count passes).
func (s *scheduler) pickVictims(j *model.Job, r *request, req, exc []int32, draining, candidates []cand) []Victim {
	if len(candidates) == 0 {
		return nil
	}
	// The CPU total is a cheap bound that skips most what-ifs.
	need := int64(r.minCPUs())
	chosen := append([]cand(nil), draining...)
	freed := s.c.free
	for _, v := range draining {
		freed += int64(allocCPUs(v.j))
	}
	fit := false
	for _, v := range candidates {
		chosen = append(chosen, v)
		freed += int64(allocCPUs(v.j))
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
	passes := s.cfg.Preempt.ReorderCount
	if passes == 0 {
		passes = 1
	}
	for range max(passes, 0) {
		if len(chosen) > 32 {
			break
		}
		dropped := false
		for i := len(chosen) - 1; i >= len(draining); i-- {
			rest := slices.Delete(slices.Clone(chosen), i, i+1)
			if s.fitsWithout(j, r, req, exc, rest) {
				chosen, dropped = rest, true
			}
		}
		if !dropped {
			break
		}
	}
	var out []Victim
	for _, v := range chosen[len(draining):] {
		s.victims[v.j.ID] = true
		out = append(out, Victim{Job: v.j.ID, Mode: v.mode, Grace: s.graceOf(v.j)})
	}
	return out
}

// graceOf is v's GraceTime: its QOS's under preempt/qos, else its
// partition's.
func (s *scheduler) graceOf(v *model.Job) int64 {
	if s.cfg.Preempt.Type == "qos" {
		if q := s.qosOf(v); q != nil && q.GraceTime > 0 {
			return q.GraceTime
		}
	}
	if p := s.in.Partitions[v.Partition]; p != nil {
		return p.GraceTime
	}
	return 0
}

// waitsForPreemptor reports whether j, requeued by preemption, must let
// its preemptor start first: without tiers (preempt/qos, or equal job
// priorities) the victim would otherwise win its CPUs straight back.
func (s *scheduler) waitsForPreemptor(j *model.Job) bool {
	if j.PreemptedFor == 0 || s.in.Jobs == nil {
		return false
	}
	p := s.in.Jobs.Job(j.PreemptedFor)
	return p != nil && p.State == model.JobPending
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
// ended (or, suspended, given their CPUs back): the live nodes with their
// resources given back.
func (s *scheduler) fitsWithout(j *model.Job, r *request, req, exc []int32, gone []cand) bool {
	nodes := slices.Clone(s.c.nodes)
	copied := map[int32]bool{}
	for _, v := range gone {
		for _, a := range v.j.Alloc {
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
			n.AllocCores = n.AllocCores.AndNot(a.CPUIDs)
			if !freesCPUsOnly(v.mode) {
				n.AllocMem = max(0, n.AllocMem-a.Mem)
				n.AllocGPUs = n.AllocGPUs.AndNot(a.GPUs)
			}
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
