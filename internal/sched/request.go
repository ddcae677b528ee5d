package sched

import "github.com/drover-hpc/drover/internal/model"

// memKind says how a job's memory grows with what it gets on a node.
type memKind uint8

const (
	memNone      memKind = iota // untracked: the job asks for no memory
	memFixed                    // the same amount on every node (--mem=N, DefMemPerNode)
	memWholeNode                // all of each node's memory (--mem=0)
	memPerCPU                   // amount × CPUs on that node (--mem-per-cpu, DefMemPerCPU)
	memPerGPU                   // amount × GPUs on that node (--mem-per-gpu)
)

// request is a JobSpec reduced to what placement needs. It is comparable so
// that per-shape results (feasibility on empty nodes) can be memoised: in a
// real queue thousands of jobs share a handful of shapes.
//
// Two layouts exist because Slurm distinguishes them:
//   - pack (only -n given): as few nodes as possible, each node taking as
//     many whole tasks as fit; a task never spans nodes.
//   - fixed (-N given, or --ntasks-per-node, or no -n at all): exactly
//     nodes nodes; nBig of them run big tasks, the rest big-1 tasks.
type request struct {
	pack      bool
	tasks     int // total tasks
	cpt       int // CPUs per task, >= 1
	nodes     int // fixed layout: exact node count
	big       int // fixed layout: tasks on each of the first nBig nodes
	nBig      int // fixed layout: how many nodes get big tasks (others big-1)
	maxNodes  int // pack layout: most nodes allowed; 0 = no bound
	exclusive bool
	mem       memKind
	memVal    int64 // MiB; per node (memFixed), per CPU (memPerCPU) or per GPU (memPerGPU)
	// GPUs: gpuNode on every node, or gpuTask per task; gpuType "" = any
	// type; cpg CPUs per GPU (--cpus-per-gpu) raise the CPUs a node gives.
	gpuType string
	gpuNode int
	gpuTask int
	cpg     int
	minCPN  int // --mincpus: CPUs a node gives at least
	// resv is the job's reservation (index+1, 0 none) when backfill plans
	// around reservations: the bounds of bfbounds.go are per reservation.
	resv int32
}

// newRequest derives the request. reqNodes is how many nodes -w names: a
// job naming more nodes than -N asks for grows to cover them, as in Slurm.
func newRequest(spec *model.JobSpec, cfg Config, reqNodes int) request {
	r := request{cpt: max(1, spec.CPUsPerTask), exclusive: spec.Exclusive, minCPN: max(0, spec.MinCPUsNode)}
	g := spec.GPUs
	if g.Any() {
		r.gpuType, r.cpg = g.Type, max(0, g.CPUsPerGPU)
		switch {
		case g.PerTask > 0:
			r.gpuTask = g.PerTask
		case g.PerNode > 0:
			r.gpuNode = g.PerNode
		default:
			// -G N spreads evenly over the job's -N nodes (one node when -N
			// is not given), rounding up.
			r.gpuNode = ceilDiv(g.Total, max(1, spec.MinNodes))
		}
	}
	switch {
	case g.Any() && g.MemPerGPU > 0:
		r.mem, r.memVal = memPerGPU, g.MemPerGPU
	case spec.MemPerNode > 0:
		r.mem, r.memVal = memFixed, spec.MemPerNode
	case spec.MemPerNode == 0:
		r.mem = memWholeNode
	case spec.MemPerCPU > 0:
		r.mem, r.memVal = memPerCPU, spec.MemPerCPU
	case cfg.DefMemPerCPU > 0:
		r.mem, r.memVal = memPerCPU, cfg.DefMemPerCPU
	case cfg.DefMemPerNode > 0:
		r.mem, r.memVal = memFixed, cfg.DefMemPerNode
	}

	tasksGiven, nodesGiven, tpnGiven := spec.NTasks > 0, spec.MinNodes > 0, spec.TasksPerNode > 0
	if tasksGiven && !nodesGiven && !tpnGiven {
		r.pack, r.tasks = true, spec.NTasks
		if spec.MaxNodes > 0 {
			r.maxNodes = spec.MaxNodes
		}
		return r
	}
	n, tasks := max(1, spec.MinNodes), 0
	switch {
	case tpnGiven && tasksGiven:
		n = max(n, ceilDiv(spec.NTasks, spec.TasksPerNode))
		tasks = spec.NTasks
	case tpnGiven:
		tasks = n * spec.TasksPerNode
	case tasksGiven:
		tasks = spec.NTasks
	}
	n = max(n, reqNodes)
	// Every allocated node runs at least one task; sbatch lowers -N to -n
	// when fewer tasks than nodes are asked for, here we raise tasks instead
	// so a spec that slipped through still gets a consistent layout.
	tasks = max(tasks, n)
	r.nodes, r.tasks = n, tasks
	r.big, r.nBig = ceilDiv(tasks, n), tasks%n
	if r.nBig == 0 {
		r.nBig = n // even split: every node is "big"
	}
	return r
}

// hasGPU reports whether the job asks for GPUs.
func (r *request) hasGPU() bool { return r.gpuNode > 0 || r.gpuTask > 0 }

// gpusOn is how many GPUs t tasks take on a node.
func (r *request) gpusOn(t int) int {
	if r.gpuTask > 0 {
		return t * r.gpuTask
	}
	return r.gpuNode
}

// cpusOn is what t tasks take on a node with nodeCPUs CPUs.
func (r *request) cpusOn(t, nodeCPUs int) int {
	if r.exclusive {
		return nodeCPUs
	}
	return max(t*r.cpt, r.gpusOn(t)*r.cpg, r.minCPN)
}

// memOn is the memory the job takes on a node given the CPUs it got there
// (and the GPUs, for --mem-per-gpu).
func (r *request) memOn(cpus int, nodeMem int64) int64 { return r.memOnG(cpus, 0, nodeMem) }

func (r *request) memOnG(cpus, gpus int, nodeMem int64) int64 {
	switch r.mem {
	case memPerGPU:
		return r.memVal * int64(gpus)
	case memFixed:
		return r.memVal
	case memWholeNode:
		return nodeMem
	case memPerCPU:
		if r.exclusive {
			// A whole-node job pays per CPU for every CPU, but never more
			// than the node has.
			return min(r.memVal*int64(cpus), nodeMem)
		}
		return r.memVal * int64(cpus)
	}
	return 0
}

// minCPUs is a lower bound on the CPUs the whole job needs, for cheap
// "cannot possibly fit now" tests before any node is looked at.
func (r *request) minCPUs() int64 { return int64(r.tasks) * int64(r.cpt) }

// minNodes is the fewest nodes the job can run on.
func (r *request) minNodes(reqNodes int) int {
	if r.pack {
		return max(1, reqNodes)
	}
	return r.nodes
}

// fits reports whether t tasks fit on a node of nodeCPUs CPUs and
// nodeMem MiB with the given free CPUs, memory and GPUs (freeCPU < 0
// marks a node that cannot be used at all), and what they take there.
func (r *request) fits(t, freeCPU int, freeMem int64, freeGPU, nodeCPUs int, nodeMem int64) (cpus int, mem int64, ok bool) {
	if freeCPU < 0 || t < 1 || r.gpusOn(t) > freeGPU {
		return 0, 0, false
	}
	if r.exclusive && freeCPU < nodeCPUs {
		return 0, 0, false // someone else is on it
	}
	cpus = r.cpusOn(t, nodeCPUs)
	if cpus < t*r.cpt || freeCPU < cpus {
		return 0, 0, false
	}
	mem = r.memOnG(cpus, r.gpusOn(t), nodeMem)
	if freeMem < mem {
		return 0, 0, false
	}
	return cpus, mem, true
}

// capTasks is how many of the remaining tasks (pack layout) a node takes.
func (r *request) capTasks(remaining, freeCPU int, freeMem int64, freeGPU int, n *model.Node) int {
	return r.capTasksOn(remaining, freeCPU, freeMem, freeGPU, n.CPUs, n.Memory)
}

// capTasksOn is capTasks on a node of nodeCPUs CPUs and nodeMem MiB.
func (r *request) capTasksOn(remaining, freeCPU int, freeMem int64, freeGPU, nodeCPUs int, nodeMem int64) int {
	if freeCPU < 0 || (r.gpuNode > 0 && freeGPU < r.gpuNode) {
		return 0
	}
	avail := freeCPU
	if r.exclusive {
		if freeCPU < nodeCPUs {
			return 0
		}
		avail = nodeCPUs
	}
	t := min(remaining, avail/r.cpt)
	if r.gpuTask > 0 {
		t = min(t, freeGPU/r.gpuTask)
	}
	for t > 0 && !r.exclusive && r.cpusOn(t, nodeCPUs) > avail { // --cpus-per-gpu, --mincpus
		t--
	}
	if t < 1 {
		return 0
	}
	switch r.mem {
	case memPerGPU:
		for t > 0 && r.memOnG(0, r.gpusOn(t), nodeMem) > freeMem {
			t--
		}
	case memPerCPU:
		if r.exclusive { // the job holds every CPU, so it pays for every CPU
			if freeMem < min(r.memVal*int64(nodeCPUs), nodeMem) {
				return 0
			}
		} else if per := r.memVal * int64(r.cpt); per > 0 {
			t = min(t, int(min(freeMem/per, int64(t))))
		}
	case memFixed, memWholeNode:
		if freeMem < r.memOn(0, nodeMem) {
			return 0
		}
	}
	return max(0, t) // never negative, whatever the free memory says
}

// JobResources is the per-node request of spec on nodes with nodeCPUs CPUs
// and nodeMem MiB: the CPUs and memory the job takes on each node and how
// many such nodes it needs. With only -n given the job packs tasks, so the
// answer depends on the node size; a node too small for one task yields
// cpusPerNode > nodeCPUs (or memPerNode > nodeMem), which callers can test.
func JobResources(spec *model.JobSpec, cfg Config, nodeCPUs int, nodeMem int64) (cpusPerNode int, memPerNode int64, nodes int) {
	r := newRequest(spec, cfg, len(spec.ReqNodes))
	probe := &model.Node{CPUs: nodeCPUs, Memory: nodeMem}
	if r.pack {
		t := r.capTasks(r.tasks, nodeCPUs, nodeMem, 1<<30, probe)
		if t < 1 {
			t = 1
		}
		nodes = ceilDiv(r.tasks, t)
		cpusPerNode = r.cpusOn(t, nodeCPUs)
		return cpusPerNode, r.memOnG(cpusPerNode, r.gpusOn(t), nodeMem), nodes
	}
	cpusPerNode = r.cpusOn(r.big, nodeCPUs)
	if r.exclusive && cpusPerNode < r.big*r.cpt {
		cpusPerNode = r.big * r.cpt // report the need, not the node
	}
	return cpusPerNode, r.memOnG(cpusPerNode, r.gpusOn(r.big), nodeMem), r.nodes
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }
