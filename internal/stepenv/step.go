package stepenv

import (
	"strconv"
	"strings"

	"github.com/drover-hpc/drover/internal/hostlist"
	"github.com/drover-hpc/drover/internal/model"
)

// CompressCounts writes per-node counts as SLURM_TASKS_PER_NODE does:
// [2 2 2 1] gives "2(x3),1", [3 1 1] gives "3,1(x2)".
func CompressCounts(counts []int) string { return RunLengthCounts(counts) }

// StepEnv is the environment of one task of step s of job j: base (the
// job's environment, BatchEnv with the step's exported variables) with the
// step's variables set on top. The task has global rank rank and local id
// localID on node, the nodeIndex-th node of the step's layout; srunHost and
// srunPort are where the launching srun listens ("" and 0 leave their
// variables out, dropping any inherited from an enclosing step).
//
// Inside a step SLURM_NTASKS/SLURM_NPROCS, SLURM_NNODES and
// SLURM_TASKS_PER_NODE describe the step, as in Slurm; SLURM_JOB_NODELIST,
// SLURM_NODELIST and SLURM_JOB_NUM_NODES stay the job's. The step's node
// list is sorted like every generated list, and the per-node counts follow
// its order. SLURM_CPUS_ON_NODE is the CPUs the step holds on node.
// SLURM_CPUS_PER_TASK is replaced only when the step asked for -c. There
// being no switch topology, SLURM_TOPOLOGY_ADDR is the node name and its
// pattern "node".
func StepEnv(base []string, j *model.Job, s *model.Step, node string, nodeIndex, localID, rank int, srunHost string, srunPort int) []string {
	e := newEnv(base)
	set := e.set
	itoa := strconv.Itoa

	id := s.ID.String()
	set("SLURM_STEP_ID", id)
	set("SLURM_STEPID", id)

	names, counts := stepOrder(s)
	ntasks := 0
	for _, c := range counts {
		ntasks += c
	}
	set("SLURM_STEP_NODELIST", hostlist.Compress(names))
	set("SLURM_STEP_NUM_NODES", itoa(len(names)))
	set("SLURM_STEP_NUM_TASKS", itoa(ntasks))
	perNode := CompressCounts(counts)
	set("SLURM_STEP_TASKS_PER_NODE", perNode)
	set("SLURM_TASKS_PER_NODE", perNode)
	set("SLURM_NTASKS", itoa(ntasks))
	set("SLURM_NPROCS", itoa(ntasks))
	set("SLURM_NNODES", itoa(len(names)))

	set("SLURM_PROCID", itoa(rank))
	set("SLURM_LOCALID", itoa(localID))
	set("SLURM_NODEID", itoa(nodeIndex))
	here, _, _ := s.LayoutOn(node)
	gtids := make([]string, len(here.Tasks))
	for i, r := range here.Tasks {
		gtids[i] = itoa(r)
	}
	if len(gtids) == 0 {
		gtids = []string{itoa(rank)}
	}
	set("SLURM_GTIDS", strings.Join(gtids, ","))
	set("SLURM_CPUS_ON_NODE", itoa(here.CPUs))

	// An outer step's values must not leak into a task whose srun is
	// unknown.
	for _, name := range []string{"SLURM_LAUNCH_NODE_IPADDR", "SLURM_SRUN_COMM_HOST", "SLURM_SRUN_COMM_PORT", "SLURM_STEP_LAUNCHER_PORT"} {
		e.unset(name)
	}
	if srunHost != "" {
		set("SLURM_LAUNCH_NODE_IPADDR", srunHost)
		set("SLURM_SRUN_COMM_HOST", srunHost)
	}
	if srunPort > 0 {
		set("SLURM_SRUN_COMM_PORT", itoa(srunPort))
		set("SLURM_STEP_LAUNCHER_PORT", itoa(srunPort))
	}

	dist := model.DistBlock
	if spec := s.Spec; spec != nil {
		if spec.CPUsPerTask > 0 {
			set("SLURM_CPUS_PER_TASK", itoa(spec.CPUsPerTask))
		}
		d := strings.ToLower(string(spec.Distribution))
		if i := strings.IndexAny(d, ":,"); i >= 0 {
			d = d[:i]
		}
		if d == string(model.DistCyclic) {
			dist = model.DistCyclic
		}
	}
	set("SLURM_DISTRIBUTION", string(dist))

	set("SLURMD_NODENAME", node)
	set("SLURM_TOPOLOGY_ADDR", node)
	set("SLURM_TOPOLOGY_ADDR_PATTERN", "node")
	return e.list()
}

// stepOrder returns the step's nodes in SLURM_STEP_NODELIST order (sorted,
// as Compress prints them) with the task count of each. Should the names
// not survive a round trip through the hostlist form, the layout order is
// kept rather than guessed.
func stepOrder(s *model.Step) (names []string, counts []int) {
	names, counts = s.NodeNames(), s.TasksPerNode()
	sorted, err := hostlist.Expand(hostlist.Compress(names))
	if err != nil || len(sorted) != len(names) {
		return names, counts
	}
	byName := make(map[string]int, len(names))
	for i, n := range names {
		byName[n] = counts[i]
	}
	out := make([]int, len(sorted))
	for i, n := range sorted {
		c, ok := byName[n]
		if !ok {
			return names, counts
		}
		out[i] = c
	}
	return sorted, out
}

// StepFields are the pattern values for the task of global rank rank of
// step s, running on node, the nodeIndex-th node of the step.
func StepFields(j *model.Job, s *model.Step, node string, nodeIndex, rank int) Fields {
	f := BatchFields(j, node)
	f.NodeRank, f.TaskRank = nodeIndex, rank
	f.StepID, f.StepName = int(s.ID), s.ID.String()
	if s.ID < 0 {
		f.StepID = -1
	}
	return f
}

// ExpandStepPattern expands an srun -o/-e/-i filename pattern for one task:
// ExpandPattern over StepFields, so %t is the task's rank, %n the node's
// index in the step, %N the node, %s the step id and %J "jobid.stepid".
func ExpandStepPattern(pattern string, j *model.Job, s *model.Step, node string, nodeIndex, rank int) string {
	return ExpandPattern(pattern, StepFields(j, s, node, nodeIndex, rank))
}
