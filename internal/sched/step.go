package sched

import (
	"errors"
	"slices"
	"strings"

	"github.com/drover-hpc/drover/internal/model"
)

// ErrStepBusy is PlaceStep's answer when the step fits the job's
// allocation but other running steps hold the CPUs it needs: srun waits
// and asks again.
var ErrStepBusy = errors.New("Requested nodes are busy")

// StepError is a step request that can never be satisfied inside its job;
// Msg is Slurm's wording. Callers tell it from ErrStepBusy (retry) and
// fail the step.
type StepError struct{ Msg string }

func (e *StepError) Error() string { return e.Msg }

// Final step errors, worded as Slurm words them.
const (
	msgStepNodeConfig = "Requested node configuration is not available"
	msgStepTooMany    = "More processors requested than permitted"
	msgStepDist       = "Invalid distribution"
	msgStepGres       = "Invalid generic resource (gres) specification"
)

func stepErr(msg string) error { return &StepError{Msg: msg} }

// PlaceStep lays out a new step of spec inside the running job j: which of
// the job's nodes it uses, how many CPUs it holds on each, and the global
// ranks of the tasks each runs. down reports nodes that cannot take tasks
// now (nil: none). The layout is in the job's allocation order.
//
// Rules, in Slurm's ≥21.08 step semantics:
//   - Candidates are the job's nodes less down and --exclude'd ones. Nodes
//     named with --nodelist must belong to the job and are always used.
//   - Node count: -N (a range may grow up to its maximum when the tasks do
//     not fit the minimum); else ceil(-n / --ntasks-per-node); else the
//     --nodelist size; else every candidate, or -n of them when fewer. Never
//     more nodes than tasks.
//   - Tasks: -n; else nodes × --ntasks-per-node; else one per node.
//   - Tasks are balanced over the nodes (the first ones take the remainder),
//     at most allocCPUs/cpus-per-task (and --ntasks-per-node) per node; the
//     excess moves on to later nodes with room.
//   - block (default, also "*") gives consecutive ranks per node; cyclic
//     deals ranks round-robin. Only the part before ':' or ',' counts;
//     plane and arbitrary are not supported.
//   - A step holds all of the job's CPUs on its nodes unless --exact (then
//     tasks × cpus-per-task). --overlap steps hold nothing and never wait.
//
// Errors: *StepError when the step can never fit the job; ErrStepBusy when
// it fits but running steps hold the CPUs. When the step may choose among
// the job's nodes, nodes free now are preferred.
func PlaceStep(j *model.Job, down func(node string) bool, spec *model.StepSpec) ([]model.StepNode, error) {
	if j == nil || spec == nil {
		return nil, stepErr(msgStepNodeConfig)
	}
	cyclic, err := stepCyclic(spec.Distribution)
	if err != nil {
		return nil, err
	}

	// The job's nodes in allocation order, with their CPUs.
	alloc := make(map[string]int, len(j.Alloc))
	index := make(map[string]int, len(j.Alloc))
	for _, a := range j.Alloc {
		if _, dup := alloc[a.Node]; !dup {
			index[a.Node] = len(index)
			alloc[a.Node] = a.CPUs
		}
	}
	excluded := make(map[string]bool, len(spec.ExcNodes))
	for _, n := range spec.ExcNodes {
		excluded[n] = true
	}
	usable := func(n string) bool { return !excluded[n] && (down == nil || !down(n)) }

	var req []string
	reqSet := map[string]bool{}
	for _, n := range spec.NodeList {
		if reqSet[n] {
			continue
		}
		if _, ok := alloc[n]; !ok || !usable(n) {
			return nil, stepErr(msgStepNodeConfig)
		}
		reqSet[n] = true
		req = append(req, n)
	}
	var others []string
	for _, a := range j.Alloc {
		if n := a.Node; usable(n) && !reqSet[n] && !slices.Contains(others, n) {
			others = append(others, n)
		}
	}

	minN, maxN, err := stepNodeCount(spec, len(req)+len(others), len(req))
	if err != nil {
		return nil, err
	}
	c := max(1, spec.CPUsPerTask)
	used := j.StepCPUsInUse()
	limit := func(n string) int {
		l := alloc[n] / c
		if spec.TasksPerNode > 0 {
			l = min(l, spec.TasksPerNode)
		}
		return l
	}

	// Two orders of the optional nodes: those that could start a task now
	// first (so that a step avoids busy nodes when it can), and the largest
	// first (so that "never fits" is only said when no choice fits).
	ready := func(n string) bool {
		switch {
		case spec.Overlap:
			return true
		case spec.Exact:
			return alloc[n]-used[n] >= c
		}
		return used[n] == 0
	}
	byReady := slices.Clone(others)
	slices.SortStableFunc(byReady, func(a, b string) int {
		switch ra, rb := ready(a), ready(b); {
		case ra && !rb:
			return -1
		case rb && !ra:
			return 1
		}
		return 0
	})
	byCap := slices.Clone(others)
	slices.SortStableFunc(byCap, func(a, b string) int { return alloc[b] - alloc[a] })

	for n := minN; n <= maxN; n++ {
		tasks := stepTaskCount(spec, n)
		for _, pool := range [][]string{byReady, byCap} {
			pick := append(slices.Clone(req), pool[:n-len(req)]...)
			slices.SortFunc(pick, func(a, b string) int { return index[a] - index[b] })
			limits := make([]int, len(pick))
			for i, name := range pick {
				limits[i] = limit(name)
			}
			counts, ok := spreadTasks(tasks, limits)
			if !ok {
				continue
			}
			layout := assignRanks(pick, counts, cyclic)
			for i := range layout {
				name := layout[i].Node
				layout[i].CPUs = alloc[name]
				if spec.Exact && !spec.Overlap {
					layout[i].CPUs = counts[i] * c
				}
				if !spec.Overlap && layout[i].CPUs+used[name] > alloc[name] {
					return nil, ErrStepBusy
				}
			}
			if err := stepGPUs(j, spec, layout); err != nil {
				return nil, err
			}
			stepCPUs(j, spec, layout)
			return layout, nil
		}
	}
	if tpn := spec.TasksPerNode; tpn > 0 && stepTaskCount(spec, maxN) > maxN*tpn {
		return nil, stepErr(msgStepNodeConfig)
	}
	return nil, stepErr(msgStepTooMany)
}

// stepCyclic reads the node level of a distribution ("block:cyclic,Pack"
// counts as block): false for block, true for cyclic.
func stepCyclic(d model.Distribution) (bool, error) {
	s := strings.ToLower(string(d))
	if i := strings.IndexAny(s, ":,"); i >= 0 {
		s = s[:i]
	}
	switch s {
	case "", "*", string(model.DistBlock):
		return false, nil
	case string(model.DistCyclic):
		return true, nil
	}
	return false, stepErr(msgStepDist)
}

// stepNodeCount is the range of node counts the step may use, given cands
// usable nodes of which req were named with --nodelist.
func stepNodeCount(spec *model.StepSpec, cands, req int) (lo, hi int, err error) {
	switch {
	case spec.MinNodes > 0:
		lo, hi = spec.MinNodes, max(spec.MaxNodes, spec.MinNodes)
		if req > hi {
			return 0, 0, stepErr(msgStepNodeConfig)
		}
		lo = max(lo, req)
	case spec.TasksPerNode > 0 && spec.NTasks > 0:
		lo = (spec.NTasks + spec.TasksPerNode - 1) / spec.TasksPerNode
		lo = max(lo, req)
		hi = lo
	case req > 0:
		lo, hi = req, req
	case spec.NTasks > 0:
		lo = min(cands, spec.NTasks)
		hi = lo
	default:
		lo, hi = cands, cands
	}
	if spec.NTasks > 0 {
		// srun warns and lowers the node count; so does the step.
		lo, hi = min(lo, spec.NTasks), min(hi, spec.NTasks)
	}
	if lo < 1 || lo < req || lo > cands {
		return 0, 0, stepErr(msgStepNodeConfig)
	}
	return lo, min(hi, cands), nil
}

// stepTaskCount is the step's task count on n nodes.
func stepTaskCount(spec *model.StepSpec, n int) int {
	switch {
	case spec.NTasks > 0:
		return spec.NTasks
	case spec.TasksPerNode > 0:
		return n * spec.TasksPerNode
	}
	return n
}

// spreadTasks balances tasks over nodes holding at most limits[i] each:
// an even share, the first nodes one more, a node's excess moved on to the
// following nodes with room (then back to the first ones). It fails when
// the tasks do not fit or a node would be left without a task.
func spreadTasks(tasks int, limits []int) ([]int, bool) {
	n := len(limits)
	if n == 0 || tasks < n {
		return nil, false
	}
	counts := make([]int, n)
	carry := 0
	for i := range counts {
		counts[i] = tasks/n + carry
		if i < tasks%n {
			counts[i]++
		}
		carry = max(counts[i]-limits[i], 0)
		counts[i] -= carry
	}
	for i := range counts {
		d := min(limits[i]-counts[i], carry)
		counts[i] += d
		carry -= d
	}
	if carry > 0 || slices.Contains(counts, 0) {
		return nil, false
	}
	return counts, true
}

// assignRanks gives each node its global ranks: consecutive blocks, or
// dealt round-robin over the nodes that still have room.
func assignRanks(nodes []string, counts []int, cyclic bool) []model.StepNode {
	out := make([]model.StepNode, len(nodes))
	total := 0
	for i, name := range nodes {
		out[i] = model.StepNode{Node: name, Tasks: make([]int, 0, counts[i])}
		total += counts[i]
	}
	if !cyclic {
		r := 0
		for i := range out {
			for range counts[i] {
				out[i].Tasks = append(out[i].Tasks, r)
				r++
			}
		}
		return out
	}
	for r := 0; r < total; {
		for i := range out {
			if len(out[i].Tasks) < counts[i] {
				out[i].Tasks = append(out[i].Tasks, r)
				r++
			}
		}
	}
	return out
}

// stepGPUs gives each node of the step its GPUs: all the job has there
// when the step asks for none (as a step without --gpus sees every GPU
// of its allocation), otherwise the lowest-numbered ones of the job's
// that other running steps with GPU requests do not hold (--overlap
// shares). ErrStepBusy when they are held; msgStepGres when the job
// does not have enough.
func stepGPUs(j *model.Job, spec *model.StepSpec, layout []model.StepNode) error {
	g := spec.GPUs
	for i := range layout {
		var jobGPUs model.Bitmap
		for _, a := range j.Alloc {
			if a.Node == layout[i].Node {
				jobGPUs = a.GPUs
			}
		}
		if !g.Any() {
			layout[i].GPUs = jobGPUs
			continue
		}
		need := g.PerNode
		switch {
		case g.PerTask > 0:
			need = g.PerTask * len(layout[i].Tasks)
		case g.Total > 0:
			need = (g.Total + len(layout) - 1) / len(layout)
		}
		if need > jobGPUs.Count() {
			return stepErr(msgStepGres)
		}
		var held model.Bitmap
		if !spec.Overlap {
			for _, st := range j.Steps {
				if st == nil || st.Finished() || st.Spec == nil || !st.Spec.GPUs.Any() || st.Spec.Overlap {
					continue
				}
				if sn, _, ok := st.LayoutOn(layout[i].Node); ok {
					held = held.Or(sn.GPUs)
				}
			}
		}
		ids := jobGPUs.AndNot(held).IDs()
		if len(ids) < need {
			return ErrStepBusy
		}
		layout[i].GPUs = model.BitmapOf(ids[:need]...)
	}
	return nil
}

// stepCPUs binds each node of the step to CPU ids of the job there: all
// of them for a step that takes the job's CPUs (the default) or shares
// them (--overlap), otherwise (--exact) the lowest ones other running
// steps are not bound to. The count was checked by the layout; should ids
// run short (a job from before ids were kept) the step gets the job's.
func stepCPUs(j *model.Job, spec *model.StepSpec, layout []model.StepNode) {
	for i := range layout {
		var jobIDs model.Bitmap
		for _, a := range j.Alloc {
			if a.Node == layout[i].Node {
				jobIDs = a.CPUIDs
			}
		}
		if spec.Overlap || layout[i].CPUs >= jobIDs.Count() {
			layout[i].CPUIDs = jobIDs
			continue
		}
		var held model.Bitmap
		for _, st := range j.Steps {
			if st == nil || st.Finished() || (st.Spec != nil && st.Spec.Overlap) {
				continue
			}
			if sn, _, ok := st.LayoutOn(layout[i].Node); ok {
				held = held.Or(sn.CPUIDs)
			}
		}
		free := jobIDs.AndNot(held).IDs()
		if len(free) < layout[i].CPUs {
			layout[i].CPUIDs = jobIDs
			continue
		}
		layout[i].CPUIDs = model.BitmapOf(free[:layout[i].CPUs]...)
	}
}
