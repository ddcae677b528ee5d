package stepenv

import (
	"strconv"
	"strings"

	"github.com/drover-hpc/drover/internal/hostlist"
	"github.com/drover-hpc/drover/internal/model"
)

// NodeInfo is what the agent knows about the node running the batch step.
type NodeInfo struct {
	Name string // node name: SLURMD_NODENAME, HOSTNAME
	// CPUs is the CPUs the job holds on this node (SLURM_CPUS_ON_NODE);
	// 0 takes the value from job.Alloc.
	CPUs int
}

// managed lists every variable BatchEnv decides on, set or not. Values of
// these names inherited through the exported environment are dropped first:
// an sbatch run inside another job must not pass the outer job's
// SLURM_NTASKS or SLURM_ARRAY_TASK_ID to the inner one, where srun would
// obey them.
var managed = []string{
	"SLURM_JOB_ID", "SLURM_JOBID", "SLURM_JOB_NAME", "SLURM_JOB_PARTITION",
	"SLURM_JOB_NODELIST", "SLURM_NODELIST", "SLURM_JOB_NUM_NODES", "SLURM_NNODES",
	"SLURM_NTASKS", "SLURM_NPROCS", "SLURM_NTASKS_PER_NODE", "SLURM_TASKS_PER_NODE",
	"SLURM_CPUS_ON_NODE", "SLURM_CPUS_PER_TASK", "SLURM_JOB_CPUS_PER_NODE",
	"SLURM_MEM_PER_NODE", "SLURM_MEM_PER_CPU",
	"SLURM_SUBMIT_DIR", "SLURM_SUBMIT_HOST", "SLURM_CLUSTER_NAME", "SLURMD_NODENAME",
	"SLURM_NODEID", "SLURM_PROCID", "SLURM_LOCALID", "SLURM_GTIDS", "SLURM_TASK_PID",
	"SLURM_JOB_UID", "SLURM_JOB_USER", "SLURM_JOB_GID", "SLURM_JOB_ACCOUNT", "SLURM_JOB_QOS",
	"SLURM_JOB_RESERVATION",
	"SLURM_ARRAY_JOB_ID", "SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_COUNT",
	"SLURM_ARRAY_TASK_MIN", "SLURM_ARRAY_TASK_MAX", "SLURM_ARRAY_TASK_STEP",
	"SLURM_JOB_START_TIME", "SLURM_JOB_END_TIME", "SLURM_EXPORT_ENV",
	"SLURM_RESTART_COUNT", "SLURM_JOB_DEPENDENCY", "ENVIRONMENT", "HOSTNAME",
}

// BatchEnv is the environment of job's batch script on node: the user's
// exported environment (job.Spec.Env) with Slurm's output variables set on
// top. Names are unique in the result; a later value replaces an earlier
// one in place; entries without '=' are dropped. now (unix seconds) stands
// in for the start time when the job record has none yet.
//
// Rules worth knowing:
//   - SLURM_NTASKS/SLURM_NPROCS appear only when -n or --ntasks-per-node was
//     given (the latter counts per allocated node); SLURM_CPUS_PER_TASK only
//     with -c; SLURM_MEM_PER_NODE/SLURM_MEM_PER_CPU echo --mem/--mem-per-cpu
//     (--mem=0 echoes the memory allocated on this node).
//   - SLURM_TASKS_PER_NODE lays the tasks out in blocks over the nodes in
//     node-list order: one per node first, then filling each node's CPUs
//     (CPUs / cpus-per-task, at most --ntasks-per-node), then round-robin
//     (overcommit). Without -n the task count is the allocated CPUs divided
//     by cpus-per-task, as in Slurm.
//   - Per-node lists (SLURM_JOB_CPUS_PER_NODE, SLURM_TASKS_PER_NODE) follow
//     the sorted order of SLURM_JOB_NODELIST, so they line up with it.
//   - SLURM_JOB_END_TIME only with a time limit; SLURM_RESTART_COUNT only
//     after a restart; SLURM_ARRAY_* only for array tasks.
//   - SLURM_PRIO_PROCESS is the submitting process's nice value: sbatch
//     puts it in the exported environment; BatchEnv only defaults it to 0.
//   - USER and LOGNAME default to job.UserName when not exported. HOME and
//     SHELL need the node's passwd entry: the agent adds them with Default.
//   - Left to the caller (Override): SLURM_CONF, and SLURM_TASK_PID, which
//     only the step helper knows (executor.Spec.PidEnv).
func BatchEnv(job *model.Job, node NodeInfo, cluster string, now int64) []string {
	spec := job.Spec
	if spec == nil {
		spec = &model.JobSpec{TimeLimit: model.Unset, NTasks: model.Unset, CPUsPerTask: model.Unset,
			TasksPerNode: model.Unset, MemPerNode: model.Unset, MemPerCPU: model.Unset}
	}
	e := newEnv(spec.Env)
	for _, name := range managed {
		e.unset(name)
	}
	set := e.set
	itoa := strconv.Itoa

	id := strconv.FormatUint(uint64(job.ID), 10)
	name := job.Name
	if name == "" {
		name = spec.Name
	}
	set("SLURM_JOB_ID", id)
	set("SLURM_JOBID", id)
	set("SLURM_JOB_NAME", name)
	set("SLURM_JOB_PARTITION", job.Partition)

	names, cpus, mems := allocOrder(job, node)
	nodelist := hostlist.Compress(names)
	set("SLURM_JOB_NODELIST", nodelist)
	set("SLURM_NODELIST", nodelist)
	set("SLURM_JOB_NUM_NODES", itoa(len(names)))
	set("SLURM_NNODES", itoa(len(names)))

	cpt := max(spec.CPUsPerTask, 1)
	ntasks := 0
	switch {
	case spec.NTasks > 0:
		ntasks = spec.NTasks
	case spec.TasksPerNode > 0:
		ntasks = spec.TasksPerNode * len(names)
	}
	if ntasks > 0 {
		set("SLURM_NTASKS", itoa(ntasks))
		set("SLURM_NPROCS", itoa(ntasks))
	} else {
		total := 0
		for _, c := range cpus {
			total += c
		}
		ntasks = max(total/cpt, 1)
	}
	if spec.TasksPerNode > 0 {
		set("SLURM_NTASKS_PER_NODE", itoa(spec.TasksPerNode))
	}
	set("SLURM_TASKS_PER_NODE", RunLengthCounts(taskLayout(ntasks, cpus, cpt, spec.TasksPerNode)))

	here := node.CPUs
	for i, n := range names {
		if here <= 0 && n == node.Name {
			here = cpus[i]
		}
	}
	set("SLURM_CPUS_ON_NODE", itoa(here))
	if spec.CPUsPerTask > 0 {
		set("SLURM_CPUS_PER_TASK", itoa(spec.CPUsPerTask))
	}
	set("SLURM_JOB_CPUS_PER_NODE", RunLengthCounts(cpus))

	switch {
	case spec.MemPerNode > 0:
		set("SLURM_MEM_PER_NODE", strconv.FormatInt(spec.MemPerNode, 10))
	case spec.MemPerNode == 0:
		// --mem=0: "all the memory of the node", known after allocation.
		for i, n := range names {
			if n == node.Name && mems[i] > 0 {
				set("SLURM_MEM_PER_NODE", strconv.FormatInt(mems[i], 10))
			}
		}
	}
	if spec.MemPerCPU > 0 {
		set("SLURM_MEM_PER_CPU", strconv.FormatInt(spec.MemPerCPU, 10))
	}

	set("SLURM_SUBMIT_DIR", spec.WorkDir)
	set("SLURM_SUBMIT_HOST", spec.SubmitHost)
	set("SLURM_CLUSTER_NAME", cluster)
	set("SLURMD_NODENAME", node.Name)
	set("HOSTNAME", node.Name)
	// The batch script is task 0 on node 0 of its step.
	set("SLURM_NODEID", "0")
	set("SLURM_PROCID", "0")
	set("SLURM_LOCALID", "0")
	set("SLURM_GTIDS", "0")

	set("SLURM_JOB_UID", strconv.FormatUint(uint64(job.UserID), 10))
	set("SLURM_JOB_USER", job.UserName)
	set("SLURM_JOB_GID", strconv.FormatUint(uint64(job.GroupID), 10))
	if spec.Account != "" {
		set("SLURM_JOB_ACCOUNT", spec.Account)
	}
	if spec.QOS != "" {
		set("SLURM_JOB_QOS", spec.QOS)
	}
	if spec.Reservation != "" {
		set("SLURM_JOB_RESERVATION", spec.Reservation)
	}

	if job.IsArrayTask() {
		set("SLURM_ARRAY_JOB_ID", strconv.FormatUint(uint64(job.ArrayJobID), 10))
		set("SLURM_ARRAY_TASK_ID", itoa(job.ArrayTaskID))
		ids := []int{job.ArrayTaskID}
		if spec.Array != nil && len(spec.Array.TaskIDs) > 0 {
			ids = spec.Array.TaskIDs
		}
		set("SLURM_ARRAY_TASK_COUNT", itoa(len(ids)))
		set("SLURM_ARRAY_TASK_MIN", itoa(ids[0]))
		set("SLURM_ARRAY_TASK_MAX", itoa(ids[len(ids)-1]))
		set("SLURM_ARRAY_TASK_STEP", itoa(arrayStep(ids)))
	}

	start := job.StartTime
	if start <= 0 {
		start = now
	}
	set("SLURM_JOB_START_TIME", strconv.FormatInt(start, 10))
	if limit := job.TimeLimit; limit > 0 {
		set("SLURM_JOB_END_TIME", strconv.FormatInt(start+limit, 10))
	}
	if spec.Export != "" {
		set("SLURM_EXPORT_ENV", spec.Export)
	}
	if job.Restarts > 0 {
		set("SLURM_RESTART_COUNT", itoa(job.Restarts))
	}
	if spec.Dependency != nil && spec.Dependency.Raw != "" {
		set("SLURM_JOB_DEPENDENCY", spec.Dependency.Raw)
	}
	e.setDefault("SLURM_PRIO_PROCESS", "0")
	set("ENVIRONMENT", "BATCH")
	if job.UserName != "" {
		e.setDefault("USER", job.UserName)
		e.setDefault("LOGNAME", job.UserName)
	}
	return e.list()
}

// allocOrder returns the job's nodes in SLURM_JOB_NODELIST order with the
// CPUs and memory held on each. A job without allocation (a local test run)
// is taken to hold node alone.
func allocOrder(job *model.Job, node NodeInfo) (names []string, cpus []int, mems []int64) {
	alloc := job.Alloc
	if len(alloc) == 0 {
		alloc = []model.NodeAlloc{{Node: node.Name, CPUs: node.CPUs}}
	}
	names = make([]string, len(alloc))
	byName := make(map[string]model.NodeAlloc, len(alloc))
	for i, a := range alloc {
		names[i] = a.Node
		byName[a.Node] = a
	}
	// The compressed list is sorted; expanding it again gives that order.
	// Should the names not survive the round trip (duplicates, odd
	// characters), keep the allocation order rather than guess.
	if sorted, err := hostlist.Expand(hostlist.Compress(names)); err == nil && len(sorted) == len(names) {
		ok := true
		for _, n := range sorted {
			if _, found := byName[n]; !found {
				ok = false
				break
			}
		}
		if ok {
			names = sorted
		}
	}
	cpus = make([]int, len(names))
	mems = make([]int64, len(names))
	for i, n := range names {
		cpus[i], mems[i] = byName[n].CPUs, byName[n].Mem
	}
	return names, cpus, mems
}

// taskLayout spreads ntasks over nodes with the given CPUs in blocks: one
// task per node that has room, then each node filled in order up to its
// capacity, then any excess dealt round-robin (overcommit).
func taskLayout(ntasks int, cpus []int, cpusPerTask, maxPerNode int) []int {
	tasks := make([]int, len(cpus))
	if len(cpus) == 0 {
		return tasks
	}
	capacity := make([]int, len(cpus))
	for i, c := range cpus {
		capacity[i] = c / cpusPerTask
		if maxPerNode > 0 {
			capacity[i] = min(capacity[i], maxPerNode)
		}
	}
	left := ntasks
	for i := range tasks {
		if left > 0 && capacity[i] > 0 {
			tasks[i]++
			left--
		}
	}
	for i := range tasks {
		n := min(capacity[i]-tasks[i], left)
		if n > 0 {
			tasks[i] += n
			left -= n
		}
	}
	if left > 0 {
		each, extra := left/len(tasks), left%len(tasks)
		for i := range tasks {
			tasks[i] += each
			if i < extra {
				tasks[i]++
			}
		}
	}
	return tasks
}

// arrayStep is the common difference of sorted task ids, or 1 when they do
// not form one arithmetic progression (or there is a single task).
func arrayStep(ids []int) int {
	if len(ids) < 2 {
		return 1
	}
	step := ids[1] - ids[0]
	for i := 2; i < len(ids); i++ {
		if ids[i]-ids[i-1] != step {
			return 1
		}
	}
	return max(step, 1)
}

// RunLengthCounts writes a per-node list in Slurm's compressed form: equal
// neighbours become "value(xN)", so [2 2 2 1] gives "2(x3),1".
func RunLengthCounts(vals []int) string {
	var b strings.Builder
	for i := 0; i < len(vals); {
		j := i + 1
		for j < len(vals) && vals[j] == vals[i] {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(vals[i]))
		if n := j - i; n > 1 {
			b.WriteString("(x")
			b.WriteString(strconv.Itoa(n))
			b.WriteByte(')')
		}
		i = j
	}
	return b.String()
}
