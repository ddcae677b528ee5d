// Package salloc is the salloc command: it asks for a job allocation,
// runs a command (or the user's shell) here with the allocation's
// variables set, and gives the allocation back when the command exits,
// with the command's exit status. srun inside the command creates steps
// of the allocation.
package salloc

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/term"

	"github.com/drover-hpc/drover/internal/cli"
	"github.com/drover-hpc/drover/internal/jobspec"
	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/stepenv"
)

// Run is the salloc entry point.
func Run(ctx context.Context, env *cli.Env, args []string) int {
	opts, code, done := cli.ParseJob(env, jobspec.Salloc, args)
	if done {
		return code
	}
	spec := opts.Spec
	spec.Argv = opts.Command
	_, noShell := opts.Extra["no-shell"]
	argv := opts.Command
	if len(argv) == 0 && !noShell {
		sh := env.Getenv("SHELL")
		if sh == "" {
			sh = "/bin/sh"
		}
		argv = []string{sh}
	}
	c, err := env.Client()
	if err != nil {
		env.Errorf("Job submit/allocate failed: %v", err)
		return 1
	}
	id, err := c.SubmitJob(ctx, spec)
	if err != nil {
		env.Errorf("Job submit/allocate failed: %v", err)
		return 1
	}
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	job, err := cli.WaitForAllocation(ctx, env, c, id, sigs, "Pending job allocation "+strconv.FormatUint(uint64(id), 10))
	signal.Stop(sigs)
	if err != nil {
		env.Errorf("%v", err)
		return 1
	}
	env.Infof("Granted job allocation %d", id)
	if noShell {
		return 0
	}

	cluster := ""
	if kvs, err := c.Config(ctx); err == nil {
		for _, kv := range kvs {
			if kv.Key == "ClusterName" {
				cluster = kv.Value
			}
		}
	}
	jenv := allocEnv(job, env.Environ, cluster)

	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = env.Stdin, env.Stdout, env.Stderr
	cmd.Env = jenv
	// The command shares our terminal: Ctrl-C is its to handle. Caught
	// and dropped here, not ignored: an ignored signal would stay ignored
	// in the command.
	tty := make(chan os.Signal, 4)
	signal.Notify(tty, syscall.SIGINT, syscall.SIGQUIT)
	defer signal.Stop(tty)
	go func() {
		for range tty {
		}
	}()
	fwd := make(chan os.Signal, 2)
	signal.Notify(fwd, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGUSR1, syscall.SIGUSR2)
	defer signal.Stop(fwd)
	if err := cmd.Start(); err != nil {
		env.Errorf("%s: %v", argv[0], execError(err))
		release(env, c, id, 1)
		return 1
	}
	wctx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	go watchRevoke(wctx, env, c, id, cmd)
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var werr error
loop:
	for {
		select {
		case werr = <-exited:
			break loop
		case s := <-fwd:
			_ = cmd.Process.Signal(s)
		}
	}
	stopWatch()
	status := exitStatus(werr)
	release(env, c, id, status)
	return status
}

func release(env *cli.Env, c cli.Client, id model.JobID, status int) {
	env.Infof("Relinquishing job allocation %d", id)
	if err := c.CompleteJob(context.Background(), id, status, 0); err != nil {
		env.Errorf("Unable to release job allocation %d: %v", id, err)
	}
}

// watchRevoke tells the command when the allocation ends under it
// (scancel, time limit).
func watchRevoke(ctx context.Context, env *cli.Env, c cli.Client, id model.JobID, cmd *exec.Cmd) {
	_ = c.WatchJobs(ctx, []model.JobID{id}, func(jobs []*model.Job) bool {
		if len(jobs) > 0 && jobs[0].State == model.JobRunning && !jobs[0].Completing {
			return true
		}
		if ctx.Err() != nil {
			return false
		}
		env.Infof("Job allocation %d has been revoked.", id)
		sig := syscall.SIGTERM
		if f, ok := env.Stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
			sig = syscall.SIGHUP
		}
		_ = cmd.Process.Signal(sig)
		return false
	})
}

// allocEnv is the command's environment: ours, with the allocation's
// SLURM_* variables (those of a batch job, less the node-local ones).
func allocEnv(job *model.Job, environ []string, cluster string) []string {
	j := *job
	spec := model.JobSpec{}
	if job.Spec != nil {
		spec = *job.Spec
	}
	spec.Env = environ
	j.Spec = &spec
	first := job.BatchHost()
	out := stepenv.BatchEnv(&j, stepenv.NodeInfo{Name: first}, cluster, job.StartTime)
	kept := out[:0]
	for _, kv := range out {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "SLURMD_NODENAME", "SLURM_NODEID", "SLURM_PROCID", "SLURM_LOCALID", "SLURM_GTIDS", "ENVIRONMENT", "HOSTNAME", "SLURM_CPUS_ON_NODE", "SLURM_TOPOLOGY_ADDR", "SLURM_TOPOLOGY_ADDR_PATTERN":
			continue
		}
		kept = append(kept, kv)
	}
	return kept
}

// exitStatus is salloc's status: the command's, 0 when it died of
// SIGHUP, SIGINT, SIGKILL or SIGQUIT (the allocation's end), 128+signal
// otherwise.
func exitStatus(err error) int {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		if err != nil {
			return 1
		}
		return 0
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	if !ok {
		return ee.ExitCode()
	}
	if ws.Signaled() {
		switch ws.Signal() {
		case syscall.SIGHUP, syscall.SIGINT, syscall.SIGKILL, syscall.SIGQUIT:
			return 0
		}
		return 128 + int(ws.Signal())
	}
	return ws.ExitStatus()
}

func execError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
