package service

import (
	"strings"

	"github.com/drover-hpc/drover/internal/model"
)

// Size caps on what a user sends. Slurm refuses the same fields past the
// same lengths (strings 1024 characters, paths PATH_MAX, the batch script
// max_script_size) with one message, which scripts match on. Without them
// one user's megabyte job names make every squeue answer too large for
// everybody.
const (
	MaxStringLen = 1024
	MaxPathLen   = 4096 // PATH_MAX
	// MaxExecBytes bounds a task's arguments plus environment: past the
	// kernel's ARG_MAX (2 MiB with the default 8 MiB stack) exec fails
	// anyway, so the controller need not store more.
	MaxExecBytes = 2 << 20
	// MaxStepExecBytes bounds the argv and environment bytes all running
	// steps of one job hold in the controller (eight full-size steps);
	// a job with many CPUs gets stepExecPerCPU each instead, so a wide
	// job running a step per core with a large environment still fits.
	MaxStepExecBytes = 16 << 20
	stepExecPerCPU   = 128 << 10
	// MaxRunningSteps bounds the steps of one job running at once (or
	// runningStepsPerCPU per allocated CPU if more), and the same figures
	// the tasks of its running steps on one node (per CPU it holds
	// there): each running task holds pipes, a connection and goroutines
	// of the node's shared agent, and --overlap steps are bound by nothing
	// else but MaxStepCount (40,000). A step per core, and a few
	// overlapping ones beside each, still fit. The tasks of the running
	// --overlap steps of all one user's jobs on a node are bound by the
	// same figures (per CPU those jobs hold there): each job's own bound
	// alone let many small jobs of one user bring 256 each.
	MaxRunningSteps    = 256
	runningStepsPerCPU = 4
	// maxListLen bounds hostlist expressions and dependency lists, which
	// Slurm caps at 64 KiB and 128 KiB.
	maxListLen = 64 << 10
	// defaultMaxScriptSize is max_script_size's default, for settings
	// built without slurm.conf.
	defaultMaxScriptSize = 4 << 20
)

const msgTooLong = "Pathname of a file, directory or other parameter too long"

// sizeCheck accumulates the first over-long field.
type sizeCheck struct{ bad string }

func (c *sizeCheck) str(name, v string, max int) {
	if c.bad == "" && len(v) > max {
		c.bad = name
	}
}

// list checks the joined size of one or more lists (argv and the
// environment count together, as for exec, without building one list).
func (c *sizeCheck) list(name string, max int, lists ...[]string) {
	n := 0
	for _, vs := range lists {
		for _, v := range vs {
			n += len(v) + 1
		}
	}
	if c.bad == "" && n > max {
		c.bad = name
	}
}

func (c *sizeCheck) err() error {
	if c.bad == "" {
		return nil
	}
	return invalid(msgTooLong)
}

// checkJobSizes refuses a job whose strings, paths, script or task
// environment exceed the caps above.
func checkJobSizes(spec *model.JobSpec, maxScript int) error {
	var c sizeCheck
	for _, f := range [...]struct {
		name, v string
	}{
		{"name", spec.Name}, {"partition", spec.Partition}, {"account", spec.Account}, {"qos", spec.QOS},
		{"comment", spec.Comment}, {"open_mode", spec.OpenMode}, {"io_addr", spec.IOAddr}, {"io_key", spec.IOKey},
		{"submit_host", spec.SubmitHost}, {"export", spec.Export},
		{"features", spec.Features}, {"reservation", spec.Reservation},
	} {
		c.str(f.name, f.v, MaxStringLen)
	}
	for _, f := range [...]struct {
		name, v string
	}{{"work_dir", spec.WorkDir}, {"stdout", spec.StdOut}, {"stderr", spec.StdErr}, {"stdin", spec.StdIn}} {
		c.str(f.name, f.v, MaxPathLen)
	}
	if g := spec.GPUs; g != nil {
		c.str("gres", g.Type, MaxStringLen)
	}
	if a := spec.Array; a != nil {
		c.str("array", a.Raw, 4*MaxStringLen)
	}
	if d := spec.Dependency; d != nil {
		c.str("dependency", d.Raw, 2*maxListLen)
	}
	c.list("req_nodes", maxListLen, spec.ReqNodes)
	c.list("exc_nodes", maxListLen, spec.ExcNodes)
	c.str("submit_line", spec.SubmitLine, MaxExecBytes)
	c.list("argv+env", MaxExecBytes, spec.Argv, spec.Env)
	c.str("script", spec.Script, maxScript)
	return c.err()
}

// checkStepSizes is checkJobSizes for a step.
func checkStepSizes(spec *model.StepSpec) error {
	var c sizeCheck
	c.str("name", spec.Name, MaxStringLen)
	for _, f := range [...]struct {
		name, v string
	}{{"work_dir", spec.WorkDir}, {"stdout", spec.StdOut}, {"stderr", spec.StdErr}, {"stdin", spec.StdIn}} {
		c.str(f.name, f.v, MaxPathLen)
	}
	for _, f := range [...]struct {
		name, v string
	}{{"io_addr", spec.IOAddr}, {"io_key", spec.IOKey}, {"input", spec.Input}, {"srun_host", spec.SrunHost}} {
		c.str(f.name, f.v, MaxStringLen)
	}
	if g := spec.GPUs; g != nil {
		c.str("gres", g.Type, MaxStringLen)
	}
	c.list("node_list", maxListLen, spec.NodeList)
	c.list("exc_nodes", maxListLen, spec.ExcNodes)
	c.str("submit_line", spec.SubmitLine, MaxExecBytes)
	c.list("argv+env", MaxExecBytes, append([][]string{spec.Argv, spec.Env}, spec.TaskArgv...)...)
	return c.err()
}

// checkUpdateSizes bounds scontrol update values the same way.
func checkUpdateSizes(fields map[string]string) error {
	var c sizeCheck
	for k, v := range fields {
		max := MaxStringLen
		switch strings.ToLower(k) {
		case "workdir", "stdout", "stderr", "stdin":
			max = MaxPathLen
		case "dependency":
			max = 2 * maxListLen
		case "reqnodelist", "nodelist", "excnodelist":
			max = maxListLen
		}
		c.str(k, v, max)
	}
	return c.err()
}

// stepExecBudget is the argv+environment bytes a job's running steps may
// hold in the controller.
func stepExecBudget(j *model.Job) int64 {
	return max(MaxStepExecBytes, int64(j.TotalCPUs())*stepExecPerCPU)
}

// maxRunningSteps is how many steps of a job may run at once.
func maxRunningSteps(j *model.Job) int {
	return max(MaxRunningSteps, j.TotalCPUs()*runningStepsPerCPU)
}
