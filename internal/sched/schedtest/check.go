package schedtest

import (
	"errors"
	"fmt"
	"slices"

	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/sched"
)

// CheckPlan verifies the invariants every plan must keep against the input
// it was made from:
//   - only pending jobs of the input start, each at most once;
//   - an allocation uses usable nodes of the job's partition, each node
//     once, none the job excludes, every node it requires, and at least
//     the CPUs the spec asks for;
//   - no node ends up with more CPUs or memory allocated than it has;
//   - each allocation names exactly as many CPU ids as CPUs, all below the
//     node's count, and as many GPU indices as the spec implies; no CPU id
//     or GPU index is given twice on a node, nor one already allocated;
//     GPUs have the requested type;
//   - every pending job that does not start has a reason, and started
//     jobs have none; jobs in DepFailed wait for DependencyNeverSatisfied.
//
// It returns every violation found, joined.
func CheckPlan(in *sched.Input, p *sched.Plan) error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }

	coreUsed := map[string]model.Bitmap{}
	gpuUsed := map[string]model.Bitmap{}
	for _, n := range in.Nodes {
		coreUsed[n.Name], gpuUsed[n.Name] = n.AllocCores, n.AllocGPUs
	}
	nodes := make(map[string]*model.Node, len(in.Nodes))
	cpus := make(map[string]int, len(in.Nodes))
	mem := make(map[string]int64, len(in.Nodes))
	for _, n := range in.Nodes {
		nodes[n.Name] = n
		cpus[n.Name], mem[n.Name] = n.AllocCPUs, n.AllocMem
	}
	partNodes := make(map[string]map[string]bool, len(in.Partitions))
	for name, part := range in.Partitions {
		set := make(map[string]bool, len(part.Nodes))
		for _, n := range part.Nodes {
			set[n] = true
		}
		partNodes[name] = set
	}
	pending := make(map[model.JobID]*model.Job, len(in.Pending))
	for _, j := range in.Pending {
		if j.State == model.JobPending {
			pending[j.ID] = j
		}
	}

	started := map[model.JobID]bool{}
	for _, s := range p.Starts {
		j := pending[s.Job]
		switch {
		case j == nil:
			bad("job %d started but is not pending in the input", s.Job)
			continue
		case started[s.Job]:
			bad("job %d started twice", s.Job)
			continue
		}
		started[s.Job] = true
		if len(s.Alloc) == 0 {
			bad("job %d started on no node", s.Job)
		}
		inPart := partNodes[j.Partition] // nil for an unknown partition
		seen := map[string]bool{}
		total := 0
		for _, a := range s.Alloc {
			n := nodes[a.Node]
			switch {
			case n == nil:
				bad("job %d on unknown node %q", s.Job, a.Node)
				continue
			case seen[a.Node]:
				bad("job %d lists node %s twice", s.Job, a.Node)
			case !n.Usable():
				bad("job %d on unusable node %s", s.Job, a.Node)
			case !inPart[a.Node]:
				bad("job %d on node %s outside partition %q", s.Job, a.Node, j.Partition)
			case a.CPUs < 1:
				bad("job %d gets %d CPUs on %s", s.Job, a.CPUs, a.Node)
			case slices.Contains(j.Spec.ExcNodes, a.Node):
				bad("job %d on excluded node %s", s.Job, a.Node)
			}
			if n != nil {
				switch {
				case a.CPUIDs.Count() != a.CPUs:
					bad("job %d on %s: %d CPU ids %q for %d CPUs", s.Job, a.Node, a.CPUIDs.Count(), a.CPUIDs, a.CPUs)
				case a.CPUIDs.Intersects(coreUsed[a.Node]):
					bad("job %d on %s: CPU ids %q already taken (%q)", s.Job, a.Node, a.CPUIDs, coreUsed[a.Node])
				}
				for _, id := range a.CPUIDs.IDs() {
					if id >= n.CPUs {
						bad("job %d on %s: CPU id %d beyond %d CPUs", s.Job, a.Node, id, n.CPUs)
					}
				}
				coreUsed[a.Node] = coreUsed[a.Node].Or(a.CPUIDs)
				if a.GPUs.Intersects(gpuUsed[a.Node]) {
					bad("job %d on %s: GPUs %q already taken", s.Job, a.Node, a.GPUs)
				}
				for _, id := range a.GPUs.IDs() {
					switch {
					case id >= len(n.GPUs):
						bad("job %d on %s: GPU %d beyond %d GPUs", s.Job, a.Node, id, len(n.GPUs))
					case j.Spec.GPUs != nil && j.Spec.GPUs.Type != "" && n.GPUs[id].Type != j.Spec.GPUs.Type:
						bad("job %d on %s: GPU %d is %q, not %q", s.Job, a.Node, id, n.GPUs[id].Type, j.Spec.GPUs.Type)
					}
				}
				if g := j.Spec.GPUs; g.Any() && a.GPUs.Count() == 0 {
					bad("job %d on %s: asked for GPUs, got none", s.Job, a.Node)
				}
				gpuUsed[a.Node] = gpuUsed[a.Node].Or(a.GPUs)
			}
			seen[a.Node] = true
			total += a.CPUs
			cpus[a.Node] += a.CPUs
			mem[a.Node] += a.Mem
		}
		for _, r := range j.Spec.ReqNodes {
			if !seen[r] {
				bad("job %d misses required node %s", s.Job, r)
			}
		}
		if want := j.Spec.ReqCPUs(); total < want {
			bad("job %d got %d CPUs, asked for %d", s.Job, total, want)
		}
		if _, ok := p.Reasons[s.Job]; ok {
			bad("job %d both starts and waits", s.Job)
		}
	}
	for _, n := range in.Nodes {
		if cpus[n.Name] > n.CPUs {
			bad("node %s oversubscribed: %d of %d CPUs", n.Name, cpus[n.Name], n.CPUs)
		}
		if mem[n.Name] > n.Memory {
			bad("node %s oversubscribed: %d of %d MiB", n.Name, mem[n.Name], n.Memory)
		}
	}
	for id, j := range pending {
		if !started[id] && p.Reasons[id] == "" {
			bad("job %d neither starts nor has a reason", j.ID)
		}
	}
	for _, id := range p.DepFailed {
		if p.Reasons[id] != model.ReasonDepNeverSatisfied {
			bad("job %d in DepFailed with reason %q", id, p.Reasons[id])
		}
	}
	return errors.Join(errs...)
}
