package jobspec

import (
	"strconv"
	"strings"
)

// envOpt maps an input environment variable to the option it sets.
type envOpt struct{ env, long string }

// Input environment variables per command, in the order they are applied
// (a later entry for the same option wins). Only variables for options this
// package knows are listed.
var envTables = [3][]envOpt{
	Sbatch: {
		{"SBATCH_ACCOUNT", "account"}, {"SBATCH_ARRAY_INX", "array"},
		{"SBATCH_CLUSTERS", "clusters"}, {"SLURM_CLUSTERS", "clusters"},
		{"SBATCH_CONSTRAINT", "constraint"}, {"SBATCH_CONTAINER", "container"},
		{"SBATCH_CORE_SPEC", "core-spec"}, {"SBATCH_CPUS_PER_GPU", "cpus-per-gpu"},
		{"SBATCH_DISTRIBUTION", "distribution"}, {"SBATCH_EXCLUSIVE", "exclusive"},
		{"SBATCH_EXPORT", "export"}, {"SBATCH_GET_USER_ENV", "get-user-env"},
		{"SBATCH_GRES", "gres"}, {"SBATCH_GRES_FLAGS", "gres-flags"}, {"SBATCH_GPUS", "gpus"},
		{"SBATCH_GPUS_PER_NODE", "gpus-per-node"}, {"SBATCH_GPUS_PER_TASK", "gpus-per-task"},
		{"SLURM_HINT", "hint"}, {"SBATCH_HINT", "hint"}, {"SBATCH_JOB_NAME", "job-name"},
		{"SBATCH_MEM_PER_CPU", "mem-per-cpu"}, {"SBATCH_MEM_PER_GPU", "mem-per-gpu"},
		{"SBATCH_MEM_PER_NODE", "mem"}, {"SBATCH_NETWORK", "network"},
		{"SBATCH_NO_KILL", "no-kill"}, {"SBATCH_NO_REQUEUE", "no-requeue"},
		{"SBATCH_OPEN_MODE", "open-mode"}, {"SBATCH_OVERCOMMIT", "overcommit"},
		{"SBATCH_PARTITION", "partition"}, {"SBATCH_PROFILE", "profile"}, {"SBATCH_QOS", "qos"},
		{"SBATCH_REQUEUE", "requeue"}, {"SBATCH_RESERVATION", "reservation"},
		{"SBATCH_SIGNAL", "signal"}, {"SBATCH_SPREAD_JOB", "spread-job"},
		{"SBATCH_THREAD_SPEC", "thread-spec"}, {"SBATCH_THREADS_PER_CORE", "threads-per-core"},
		{"SBATCH_TIMELIMIT", "time"}, {"SBATCH_USE_MIN_NODES", "use-min-nodes"},
		{"SBATCH_WAIT", "wait"}, {"SBATCH_WAIT_ALL_NODES", "wait-all-nodes"},
		{"SBATCH_WCKEY", "wckey"}, {"SBATCH_ERROR", "error"}, {"SBATCH_INPUT", "input"},
		{"SBATCH_OUTPUT", "output"},
	},
	// srun reads the SLURM_* variables a batch job or salloc shell exports,
	// which is how a step inherits its allocation's shape.
	Srun: {
		{"SLURM_ACCOUNT", "account"}, {"SLURM_CLUSTERS", "clusters"},
		{"SLURM_CONSTRAINT", "constraint"}, {"SLURM_CORE_SPEC", "core-spec"},
		{"SRUN_CPUS_PER_TASK", "cpus-per-task"}, {"SLURM_CPU_BIND", "cpu-bind"},
		{"SLURM_CPUS_PER_GPU", "cpus-per-gpu"}, {"SLURM_DEPENDENCY", "dependency"},
		{"SLURM_DISABLE_STATUS", "disable-status"}, {"SLURM_DISTRIBUTION", "distribution"},
		{"SLURM_EXACT", "exact"}, {"SLURM_EXCLUSIVE", "exclusive"},
		{"SLURM_EXPORT_ENV", "export"}, {"SRUN_EXPORT_ENV", "export"},
		{"SLURM_GPUS", "gpus"}, {"SLURM_GPUS_PER_NODE", "gpus-per-node"},
		{"SLURM_GPUS_PER_TASK", "gpus-per-task"}, {"SLURM_GRES", "gres"},
		{"SLURM_GRES_FLAGS", "gres-flags"}, {"SLURM_HINT", "hint"}, {"SLURM_JOB_ID", "jobid"},
		{"SLURM_JOB_NAME", "job-name"}, {"SLURM_JOB_NUM_NODES", "nodes"},
		{"SLURM_KILL_BAD_EXIT", "kill-on-bad-exit"}, {"SLURM_LABELIO", "label"},
		{"SLURM_MEM_BIND", "mem-bind"}, {"SLURM_MEM_PER_CPU", "mem-per-cpu"},
		{"SLURM_MEM_PER_GPU", "mem-per-gpu"}, {"SLURM_MEM_PER_NODE", "mem"},
		{"SLURM_MPI_TYPE", "mpi"}, {"SLURM_NETWORK", "network"}, {"SLURM_NO_KILL", "no-kill"},
		{"SLURM_NPROCS", "ntasks"}, {"SLURM_NTASKS", "ntasks"},
		{"SLURM_NTASKS_PER_NODE", "ntasks-per-node"}, {"SLURM_OPEN_MODE", "open-mode"},
		{"SLURM_OVERCOMMIT", "overcommit"}, {"SLURM_OVERLAP", "overlap"},
		{"SLURM_PARTITION", "partition"}, {"SLURM_PROFILE", "profile"}, {"SLURM_QOS", "qos"},
		{"SLURM_RESERVATION", "reservation"}, {"SLURM_SIGNAL", "signal"},
		{"SLURM_SPREAD_JOB", "spread-job"}, {"SLURM_THREAD_SPEC", "thread-spec"},
		{"SLURM_THREADS_PER_CORE", "threads-per-core"}, {"SLURM_TIMELIMIT", "time"},
		{"SLURM_UNBUFFEREDIO", "unbuffered"}, {"SLURM_USE_MIN_NODES", "use-min-nodes"},
		{"SLURM_WAIT", "wait"}, {"SLURM_WCKEY", "wckey"}, {"SLURM_WORKING_DIR", "chdir"},
		{"SRUN_CONTAINER", "container"}, {"SLURM_BCAST", "bcast"},
		{"SRUN_INPUT", "input"}, {"SRUN_OUTPUT", "output"}, {"SRUN_ERROR", "error"},
	},
	Salloc: {
		{"SALLOC_ACCOUNT", "account"}, {"SALLOC_BELL", "bell"},
		{"SALLOC_CLUSTERS", "clusters"}, {"SLURM_CLUSTERS", "clusters"},
		{"SALLOC_CONSTRAINT", "constraint"}, {"SALLOC_CONTAINER", "container"},
		{"SALLOC_CORE_SPEC", "core-spec"}, {"SALLOC_CPUS_PER_GPU", "cpus-per-gpu"},
		{"SALLOC_EXCLUSIVE", "exclusive"}, {"SALLOC_GPUS", "gpus"},
		{"SALLOC_GPUS_PER_NODE", "gpus-per-node"}, {"SALLOC_GPUS_PER_TASK", "gpus-per-task"},
		{"SALLOC_GRES", "gres"}, {"SALLOC_GRES_FLAGS", "gres-flags"},
		{"SALLOC_IMMEDIATE", "immediate"}, {"SALLOC_HINT", "hint"}, {"SLURM_HINT", "hint"},
		{"SALLOC_KILL_CMD", "kill-command"}, {"SALLOC_MEM_BIND", "mem-bind"},
		{"SALLOC_MEM_PER_CPU", "mem-per-cpu"}, {"SALLOC_MEM_PER_GPU", "mem-per-gpu"},
		{"SALLOC_MEM_PER_NODE", "mem"}, {"SALLOC_NETWORK", "network"},
		{"SALLOC_NO_BELL", "no-bell"}, {"SALLOC_NO_KILL", "no-kill"},
		{"SALLOC_OVERCOMMIT", "overcommit"}, {"SALLOC_PARTITION", "partition"},
		{"SALLOC_PROFILE", "profile"}, {"SALLOC_QOS", "qos"},
		{"SALLOC_RESERVATION", "reservation"}, {"SALLOC_SIGNAL", "signal"},
		{"SALLOC_SPREAD_JOB", "spread-job"}, {"SALLOC_THREAD_SPEC", "thread-spec"},
		{"SALLOC_THREADS_PER_CORE", "threads-per-core"}, {"SALLOC_TIMELIMIT", "time"},
		{"SALLOC_USE_MIN_NODES", "use-min-nodes"}, {"SALLOC_WAIT_ALL_NODES", "wait-all-nodes"},
		{"SALLOC_WCKEY", "wckey"},
	},
}

// flagEnvTrue is Slurm's reading of a variable for an option without an
// argument: empty, "yes" or a non-zero number turns it on.
func flagEnvTrue(v string) bool {
	if v == "" || strings.EqualFold(v, "yes") {
		return true
	}
	n, err := strconv.ParseInt(v, 10, 64)
	return err == nil && n != 0
}

// environ is a KEY=VALUE list looked up by key; later entries win.
type environ struct {
	keys []string
	vals map[string]string
}

func newEnviron(list []string) *environ {
	e := &environ{vals: make(map[string]string, len(list))}
	for _, kv := range list {
		k, v, _ := strings.Cut(kv, "=")
		if k == "" {
			continue
		}
		e.set(k, v)
	}
	return e
}

func (e *environ) set(k, v string) {
	if _, ok := e.vals[k]; !ok {
		e.keys = append(e.keys, k)
	}
	e.vals[k] = v
}

func (e *environ) lookup(k string) (string, bool) {
	v, ok := e.vals[k]
	return v, ok
}

func (e *environ) list() []string {
	out := make([]string, len(e.keys))
	for i, k := range e.keys {
		out[i] = k + "=" + e.vals[k]
	}
	return out
}

// exportEnv computes the job environment for an --export value:
//   - "" or ALL: the whole submission environment;
//   - NONE: only the SLURM* variables (the job starts from a clean slate);
//   - NIL: nothing at all;
//   - a list of NAME and NAME=value items, with ALL optionally among them:
//     the whole environment if ALL is listed, else the named variables that
//     are set plus the SLURM* ones, then the NAME=value assignments (which
//     win over anything inherited, wherever ALL appears in the list).
//
// Items are split on commas outside quotes; a quoted item or value loses
// its quotes.
func exportEnv(raw string, env *environ) []string {
	switch strings.ToUpper(raw) {
	case "", "ALL":
		return env.list()
	case "NIL":
		return []string{}
	}
	items := splitQuoted(raw)
	out := newEnviron(nil)
	all := false
	for _, it := range items {
		all = all || strings.EqualFold(it, "ALL")
	}
	if strings.EqualFold(raw, "NONE") {
		items = nil
	}
	for _, k := range env.keys {
		if all || strings.HasPrefix(k, "SLURM") {
			out.set(k, env.vals[k])
		}
	}
	for _, it := range items {
		if strings.EqualFold(it, "ALL") || strings.Contains(it, "=") || it == "" {
			continue
		}
		if v, ok := env.lookup(it); ok {
			out.set(it, v)
		}
	}
	for _, it := range items {
		if k, v, ok := strings.Cut(it, "="); ok && k != "" {
			out.set(k, unquote(v))
		}
	}
	return out.list()
}

// splitQuoted splits s on commas that are outside single or double quotes.
func splitQuoted(s string) []string {
	var out []string
	var quote byte
	start := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == ',':
			out = append(out, unquote(s[start:i]))
			start = i + 1
		}
	}
	return append(out, unquote(s[start:]))
}

func unquote(s string) string {
	if len(s) >= 2 && (s[0] == '"' || s[0] == '\'') && s[len(s)-1] == s[0] {
		return s[1 : len(s)-1]
	}
	return s
}
