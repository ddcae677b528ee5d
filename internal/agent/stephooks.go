package agent

import (
	"context"
	"errors"
	"net"
	"strconv"
	"time"

	"github.com/drover-hpc/drover/internal/cgroups"
	"github.com/drover-hpc/drover/internal/executor"
	"github.com/drover-hpc/drover/internal/gres"
	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/stepenv"
	"github.com/drover-hpc/drover/internal/stepio"
)

// A step's launch on this node is an ordered list of hooks over an
// executor, the shape of Nomad's task runner: each hook does one concern
// (environment, cgroup, Prolog, the tasks' specs, srun's I/O connection,
// the step's time limit) and is testable alone on a stepCtx. What comes
// next (containers, PMI, per-task binding) is a new hook, not a branch in
// a long function. The runner (stepRun.exec) runs the Prestart hooks in
// order; the first error fails the step on this node. Then it launches
// the tasks through the executor, runs the Poststart hooks, waits for the
// tasks and runs the Poststop hooks in reverse order.

// stepHook is one concern of a step's launch. It implements one or more
// of stepPrestarter, stepPoststarter and stepPoststopper.
type stepHook interface{ Name() string }

// stepPrestarter prepares the step before its tasks start; an error fails
// the step here (the hook logs or records why).
type stepPrestarter interface {
	Prestart(ctx context.Context, sc *stepCtx) error
}

// stepPoststarter acts once the tasks were launched.
type stepPoststarter interface{ Poststart(sc *stepCtx) }

// stepPoststopper cleans up after the tasks ended (or the launch failed
// after the hook's Prestart ran).
type stepPoststopper interface{ Poststop(sc *stepCtx) }

// taskHook prepares one task's launch spec; the tasks hook runs the task
// hooks in order for every local task.
type taskHook interface {
	Name() string
	PrepareTask(sc *stepCtx, t *taskCtx) error
}

// stepCtx is what the hooks of one step share.
type stepCtx struct {
	s  *stepRun
	a  *Agent
	jm model.Job     // the job as the step sees it: Spec is js
	js model.JobSpec // the job's spec with the step's environment

	base     []string      // environment common to the step's tasks
	dir      string        // working directory of the tasks
	srunHost string        // SLURM_SRUN_COMM_HOST
	srunPort int           // SLURM_SRUN_COMM_PORT
	group    cgroups.Group // the step's cgroup (nil before the cgroup hook)
	tasks    []*taskCtx    // by local task id, once the tasks hook ran
}

// taskCtx is one local task being prepared.
type taskCtx struct {
	localID, rank int
	spec          *executor.Spec
	// onExit runs after the task ended, before its exit is reported
	// (TaskEpilog).
	onExit []func(executor.Result)
}

// newStepCtx takes the job's model as it stands, with the step's
// environment in place of the job's.
func newStepCtx(s *stepRun) *stepCtx {
	s.j.mu.Lock()
	jm := *s.j.model
	s.j.mu.Unlock()
	sc := &stepCtx{s: s, a: s.a, jm: jm}
	if jm.Spec != nil {
		sc.js = *jm.Spec
	}
	sc.js.Env = s.st.Spec.Env
	sc.jm.Spec = &sc.js
	return sc
}

// stepHooks is the launch pipeline of every step, in order.
func stepHooks() []stepHook {
	return []stepHook{
		stepEnvHook{},
		stepCgroupHook{},
		stepPrologHook{},
		tasksHook{hooks: []taskHook{
			taskCommandHook{}, taskEnvHook{}, taskGPUHook{}, taskPrologHook{}, taskStdioHook{}, taskCgroupHook{},
		}},
		srunIOHook{},
		stepTimeLimitHook{},
	}
}

// errHookFailed fails a step whose hook already logged or recorded why.
var errHookFailed = errors.New("step launch failed")

// stepEnvHook builds the environment common to the step's tasks (the
// job's Slurm variables, SLURM_CONF, CPU binding and GPU variables, HOME),
// the working directory and srun's address.
type stepEnvHook struct{}

func (stepEnvHook) Name() string { return "env" }

func (stepEnvHook) Prestart(_ context.Context, sc *stepCtx) error {
	spec, a, s := sc.s.st.Spec, sc.a, sc.s
	if spec.IOAddr != "" {
		h, p, _ := net.SplitHostPort(spec.IOAddr)
		sc.srunHost, sc.srunPort = h, atoi(p)
	}
	if spec.SrunHost != "" {
		sc.srunHost = spec.SrunHost
	}
	base := stepenv.BatchEnv(&sc.jm, stepenv.NodeInfo{Name: a.node, CPUs: s.local.CPUs}, a.clusterName(), sc.jm.StartTime)
	base = stepenv.Override(base, append([]string{"SLURM_CONF=" + a.absConf()},
		a.isolationEnv(&sc.jm, s.local.CPUIDs, s.local.GPUs, true)...)...)
	base = homeAndShell(base, sc.jm.UserID)
	sc.base = base
	sc.dir = spec.WorkDir
	if sc.dir == "" {
		sc.dir = sc.js.WorkDir
	}
	return nil
}

// stepCgroupHook creates the step's cgroup (its CPUs and GPUs) and starts
// following its usage; the cgroup is removed when the end is reported.
type stepCgroupHook struct{}

func (stepCgroupHook) Name() string { return "cgroup" }

func (stepCgroupHook) Prestart(_ context.Context, sc *stepCtx) error {
	s, a := sc.s, sc.a
	g, err := a.stepGroup(s.j, strconv.Itoa(int(s.st.ID)), s.local.CPUIDs, s.local.GPUs)
	if err != nil {
		a.log.Warn("cannot create the step's cgroup", "job", s.j.id, "step", s.st.ID, "err", err)
		return errHookFailed
	}
	sc.group = g
	s.mu.Lock()
	s.usage = newSampler(g, a.iso.every)
	s.mu.Unlock()
	return nil
}

// stepPrologHook runs Prolog on a node that holds no batch script of the
// job (there the job's launch ran it), once per job.
type stepPrologHook struct{}

func (stepPrologHook) Name() string { return "prolog" }

func (stepPrologHook) Prestart(_ context.Context, sc *stepCtx) error {
	j := sc.s.j
	j.mu.Lock()
	primary := j.primary
	j.mu.Unlock()
	if primary {
		return nil
	}
	if err := sc.a.prolog(j); err != nil {
		j.mu.Lock()
		j.prologErr = err
		j.mu.Unlock()
		return errHookFailed
	}
	return nil
}

// tasksHook prepares every local task's spec with the task hooks. Every
// task's stdio is wired (its stdin pipe registered) here, before srun
// hears from this node (srunIOHook), so no input arrives ahead of its
// reader.
type tasksHook struct{ hooks []taskHook }

func (tasksHook) Name() string { return "tasks" }

func (h tasksHook) Prestart(_ context.Context, sc *stepCtx) error {
	sc.tasks = make([]*taskCtx, len(sc.s.local.Tasks))
	for localID, rank := range sc.s.local.Tasks {
		t := &taskCtx{localID: localID, rank: rank, spec: &executor.Spec{}}
		for _, th := range h.hooks {
			if err := th.PrepareTask(sc, t); err != nil {
				return err
			}
		}
		sc.tasks[localID] = t
	}
	return nil
}

// taskCommandHook sets the program (the step's argv, or the rank's own
// with --multi-prog), the user and the file creation rules.
type taskCommandHook struct{}

func (taskCommandHook) Name() string { return "command" }

func (taskCommandHook) PrepareTask(sc *stepCtx, t *taskCtx) error {
	spec := sc.s.st.Spec
	argv := spec.Argv
	if t.rank < len(spec.TaskArgv) && len(spec.TaskArgv[t.rank]) > 0 {
		argv = spec.TaskArgv[t.rank]
	}
	if len(argv) == 0 {
		argv = []string{"/bin/false"} // refused by the controller; never a panic here
	}
	es := t.spec
	es.Path, es.Args, es.Dir = argv[0], argv[1:], sc.dir
	es.UID, es.GID, es.Groups = sc.jm.UserID, sc.jm.GroupID, sc.jm.Groups
	es.Umask, es.Append = umaskOf(&sc.js), sc.js.OpenMode == "append"
	return nil
}

// taskEnvHook adds the task's own variables (SLURM_PROCID, SLURM_LOCALID,
// SLURM_STEP_*, ...) to the step's.
type taskEnvHook struct{}

func (taskEnvHook) Name() string { return "task-env" }

func (taskEnvHook) PrepareTask(sc *stepCtx, t *taskCtx) error {
	s := sc.s
	t.spec.Env = stepenv.StepEnv(sc.base, &sc.jm, s.st, sc.a.node, s.index, t.localID, t.rank, sc.srunHost, sc.srunPort)
	return nil
}

// taskGPUHook binds a task to its own GPUs under --gpus-per-task.
type taskGPUHook struct{}

func (taskGPUHook) Name() string { return "task-gpus" }

func (taskGPUHook) PrepareTask(sc *stepCtx, t *taskCtx) error {
	s, iso := sc.s, sc.a.iso
	if g := taskGPUs(s.st.Spec.GPUs, s.local.GPUs, t.localID); g != nil && len(iso.GPUs()) > 0 {
		t.spec.Env = stepenv.Override(t.spec.Env, gres.EnvIn(iso.GPUs(), s.local.GPUs, g, true, iso.cc().ConstrainDevices)...)
	}
	return nil
}

// taskPrologHook runs TaskProlog before the task (what it exports joins
// the task's environment) and TaskEpilog after it.
type taskPrologHook struct{}

func (taskPrologHook) Name() string { return "task-prolog" }

func (taskPrologHook) PrepareTask(sc *stepCtx, t *taskCtx) error {
	t.spec.Env, _ = sc.a.taskProlog(&sc.jm, t.spec.Env)
	jm, env := &sc.jm, t.spec.Env
	t.onExit = append(t.onExit, func(executor.Result) { sc.a.taskEpilog(jm, env) })
	return nil
}

// taskStdioHook points the task's stdio at files or at srun's streams.
type taskStdioHook struct{}

func (taskStdioHook) Name() string { return "task-stdio" }

func (taskStdioHook) PrepareTask(sc *stepCtx, t *taskCtx) error {
	sc.s.wireIO(t.spec, &sc.jm, t.rank)
	return nil
}

// taskCgroupHook places the task in the step's cgroup from its first
// instruction.
type taskCgroupHook struct{}

func (taskCgroupHook) Name() string { return "task-cgroup" }

func (taskCgroupHook) PrepareTask(sc *stepCtx, t *taskCtx) error {
	place(t.spec, sc.group)
	return nil
}

// srunIOHook connects to srun's I/O port (when the step streams its I/O)
// and serves what srun sends. If srun cannot be reached the step fails;
// if the connection is lost later and no client comes back in time, the
// step is killed (see stepRun.watchClients).
type srunIOHook struct{}

func (srunIOHook) Name() string { return "srun-io" }

func (srunIOHook) Prestart(_ context.Context, sc *stepCtx) error {
	s, a, spec := sc.s, sc.a, sc.s.st.Spec
	if spec.IOAddr == "" {
		return nil
	}
	conn, err := stepio.Dial(spec.IOAddr, spec.IOKey, stepio.Hello{Job: s.j.id, Step: int32(s.st.ID), Node: s.index})
	if err != nil {
		a.log.Warn("cannot reach srun", "job", s.j.id, "step", s.st.ID, "addr", spec.IOAddr, "err", err)
		for _, rank := range s.local.Tasks {
			s.closeInput(rank)
		}
		return errHookFailed
	}
	s.addClient(conn, true)
	return nil
}

// stepTimeLimitHook enforces the step's own --time: TIMEOUT with
// slurmstepd's line, as the job's limit does for the whole job.
type stepTimeLimitHook struct{}

func (stepTimeLimitHook) Name() string { return "time-limit" }

func (stepTimeLimitHook) Poststart(sc *stepCtx) {
	s := sc.s
	limit := s.st.TimeLimit
	if limit <= 0 {
		return
	}
	deadline := time.Unix(s.st.StartTime, 0).Add(time.Duration(limit) * time.Second)
	t := time.AfterFunc(time.Until(deadline), func() { s.terminate(sc.a.getKillWait(), model.JobTimeout) })
	s.mu.Lock()
	s.limit = t
	s.mu.Unlock()
}

func (stepTimeLimitHook) Poststop(sc *stepCtx) {
	s := sc.s
	s.mu.Lock()
	t := s.limit
	s.limit = nil
	s.mu.Unlock()
	if t != nil {
		t.Stop()
	}
}
