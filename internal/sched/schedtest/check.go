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
//   - every pending job that does not start has a reason, and started
//     jobs have none; jobs in DepFailed wait for DependencyNeverSatisfied.
//
// It returns every violation found, joined.
func CheckPlan(in *sched.Input, p *sched.Plan) error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }

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
