package agent

import (
	"context"
	"fmt"
	"os/user"
	"strconv"
	"strings"

	"github.com/drover-hpc/drover/internal/executor"
	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/stepenv"
)

// A job's launch on its first node (the batch script, or the allocation
// salloc and srun hold) has the shape of a step's: ordered hooks prepare
// the launch, then the runner (Agent.start) starts the script through the
// supervisor or the executor and waits for it. An allocation has no
// program: the runner holds it instead once the hooks ran.

// batchHook is one concern of a job's launch.
type batchHook interface {
	Name() string
	Prestart(ctx context.Context, bc *batchCtx) error
}

// batchCtx is what the hooks of one job launch share.
type batchCtx struct {
	a  *Agent
	j  *job
	mj *model.Job
	es *executor.Spec
	// reusedDir: j's spool directory was kept from an earlier job of the
	// user's; its script is rewritten in place (jobdirs.go).
	reusedDir bool
	// onExit runs after the script ended (TaskEpilog).
	onExit []func(executor.Result)
}

func (bc *batchCtx) interactive() bool { return bc.mj.Spec.Interactive }

// batchHooks is the launch pipeline of a job's batch script or
// allocation, in order.
func batchHooks() []batchHook {
	return []batchHook{jobDirHook{}, batchEnvHook{}, jobPrologHook{}, batchCgroupHook{}, batchScriptHook{}, batchStdioHook{}}
}

// jobDirHook makes the job's spool directory, the user's own, or takes
// one kept from the user's last job here (jobdirs.go).
type jobDirHook struct{}

func (jobDirHook) Name() string { return "spool-dir" }

func (jobDirHook) Prestart(_ context.Context, bc *batchCtx) error {
	dir, reused, err := bc.a.jobDir(bc.j.id, bc.mj.UserID, bc.mj.GroupID)
	if err != nil {
		return err
	}
	bc.j.dir, bc.reusedDir = dir, reused
	return nil
}

// batchEnvHook builds the script's environment (Slurm's variables,
// SLURM_CONF, CPU and GPU variables, TaskProlog's exports, HOME), user
// and file rules; TaskEpilog runs after the script.
type batchEnvHook struct{}

func (batchEnvHook) Name() string { return "env" }

func (batchEnvHook) Prestart(_ context.Context, bc *batchCtx) error {
	a, mj, spec := bc.a, bc.mj, bc.mj.Spec
	env := stepenv.BatchEnv(mj, stepenv.NodeInfo{Name: a.node, CPUs: cpusOn(mj, a.node)}, a.clusterName(), mj.StartTime)
	// One pass over the user's environment for what the node sets.
	env = stepenv.Override(env, append([]string{"SLURM_CONF=" + a.absConf()},
		a.isolationEnv(mj, nil, nodeAlloc(mj, a.node).GPUs, false)...)...)
	env, _ = a.taskProlog(mj, env)
	env = homeAndShell(env, mj.UserID)
	bc.es = &executor.Spec{
		Env: env, PidEnv: []string{"SLURM_TASK_PID"}, Dir: spec.WorkDir, UID: mj.UserID, GID: mj.GroupID, Groups: mj.Groups,
		Append: spec.OpenMode == "append", Umask: umaskOf(spec),
	}
	bc.onExit = append(bc.onExit, func(executor.Result) { a.taskEpilog(mj, env) })
	return nil
}

// jobPrologHook runs Prolog (once per job on this node); a failure is
// recorded: the job goes back to the queue and the node drains.
type jobPrologHook struct{}

func (jobPrologHook) Name() string { return "prolog" }

func (jobPrologHook) Prestart(_ context.Context, bc *batchCtx) error {
	if err := bc.a.prolog(bc.j); err != nil {
		bc.j.mu.Lock()
		bc.j.prologErr = err
		bc.j.mu.Unlock()
		return err
	}
	return nil
}

// batchCgroupHook creates the job's cgroup and, for a script, its batch
// step's inside it, which the script starts in and whose use is followed.
type batchCgroupHook struct{}

func (batchCgroupHook) Name() string { return "cgroup" }

func (batchCgroupHook) Prestart(_ context.Context, bc *batchCtx) error {
	a, j := bc.a, bc.j
	if bc.interactive() {
		if _, err := a.jobGroup(j); err != nil {
			return fmt.Errorf("cannot create the job's cgroup: %w", err)
		}
		return nil
	}
	g, err := a.stepGroup(j, "batch", nil, nodeAlloc(bc.mj, a.node).GPUs)
	if err != nil {
		return fmt.Errorf("cannot create the job's cgroup: %w", err)
	}
	place(bc.es, g)
	j.mu.Lock()
	j.batch = newSampler(g, a.iso.every)
	j.mu.Unlock()
	return nil
}

// batchScriptHook writes the script into the job's directory, as the
// user, and makes it the program.
type batchScriptHook struct{}

func (batchScriptHook) Name() string { return "script" }

func (batchScriptHook) Prestart(_ context.Context, bc *batchCtx) error {
	if bc.interactive() {
		return nil
	}
	mj := bc.mj
	if bc.reusedDir {
		script, err := rewriteScript(bc.j.dir, mj.Spec.Script, mj.UserID, mj.GroupID, mj.Groups)
		if err == nil {
			bc.es.Path, bc.es.Args = script, mj.Spec.Argv
			return nil
		}
		// Not as it was kept: made afresh (newJobDir removes it).
		bc.a.log.Info("the kept spool directory was changed: made afresh", "job", bc.j.id, "err", err)
		dir, err := newJobDir(bc.a.spool, bc.j.id, mj.UserID, mj.GroupID)
		if err != nil {
			return err
		}
		bc.j.dir = dir
	}
	script, err := writeScript(bc.j.dir, mj.Spec.Script, mj.UserID, mj.GroupID, mj.Groups)
	if err != nil {
		return err
	}
	bc.es.Path, bc.es.Args = script, mj.Spec.Argv
	return nil
}

// batchStdioHook resolves the output, error and input files (slurm-%j.out
// by default) and remembers where slurmstepd-style messages go.
type batchStdioHook struct{}

func (batchStdioHook) Name() string { return "stdio" }

func (batchStdioHook) Prestart(_ context.Context, bc *batchCtx) error {
	if bc.interactive() {
		return nil
	}
	es := bc.es
	es.Stdin, es.Stdout, es.Stderr = batchStdio(bc.mj, bc.a.node)
	bc.j.mu.Lock()
	bc.j.errPath = es.Stderr
	bc.j.mu.Unlock()
	return nil
}

// batchStdio is where a batch script's input, output and error go on node
// (slurm-%j.out by default); "" for no input. A function of the job alone,
// so that an agent taking a job back finds its error file again.
func batchStdio(mj *model.Job, node string) (stdin, stdout, stderr string) {
	spec := mj.Spec
	fields := stepenv.BatchFields(mj, node)
	out := spec.StdOut
	if out == "" {
		out = stepenv.DefaultOutput(mj)
	}
	stdout = stepenv.ResolvePath(spec.WorkDir, stepenv.ExpandPattern(out, fields))
	stderr = stdout
	if spec.StdErr != "" {
		stderr = stepenv.ResolvePath(spec.WorkDir, stepenv.ExpandPattern(spec.StdErr, fields))
	}
	if spec.StdIn != "" {
		stdin = stepenv.ResolvePath(spec.WorkDir, stepenv.ExpandPattern(spec.StdIn, fields))
	}
	return stdin, stdout, stderr
}

// homeAndShell is env with HOME (the user's, from the node's passwd entry
// or directory service) and SHELL=/bin/sh added where it has none, as
// before: nothing when the user is unknown here. A job that brought both
// (sbatch and srun export the caller's environment by default) costs no
// user lookup and no pass over its environment.
func homeAndShell(env []string, uid uint32) []string {
	var home, shell bool
	for _, kv := range env {
		home = home || strings.HasPrefix(kv, "HOME=")
		shell = shell || strings.HasPrefix(kv, "SHELL=")
	}
	if home && shell {
		return env
	}
	u, err := user.LookupId(strconv.FormatUint(uint64(uid), 10))
	if err != nil {
		return env
	}
	return stepenv.Default(env, "HOME="+u.HomeDir, "SHELL=/bin/sh")
}
