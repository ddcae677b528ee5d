// Package srun is the srun command. Inside an allocation (SLURM_JOB_ID or
// --jobid) it creates a step of that job; outside one it first asks for an
// allocation, runs the step in it, and gives the allocation back. The
// nodes dial srun (as slurmstepd does) and stream every task's stdout and
// stderr back live; srun forwards stdin and signals, and exits with the
// highest task status.
package srun

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path"
	"strings"
	"syscall"

	"golang.org/x/term"

	"github.com/drover-hpc/drover/internal/cli"
	"github.com/drover-hpc/drover/internal/jobspec"
	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/stepio"
)

// Run is the srun entry point.
func Run(ctx context.Context, env *cli.Env, args []string) int {
	opts, code, done := cli.ParseJob(env, jobspec.Srun, args)
	if done {
		return code
	}
	if len(opts.Spec.Argv) == 0 {
		env.Errorf("No command given to execute.")
		return env.ExitError()
	}
	c, err := env.Client()
	if err != nil {
		env.Errorf("Unable to allocate resources: %v", err)
		return env.ExitError()
	}
	if opts.JobID != "" {
		id, err := parseJobID(opts.JobID)
		if err != nil {
			env.Errorf("Invalid job id %s", opts.JobID)
			return env.ExitError()
		}
		return runStep(ctx, env, c, opts, args, id)
	}
	return runAllocated(ctx, env, c, opts, args)
}

func parseJobID(v string) (model.JobID, error) {
	var n uint32
	_, err := fmt.Sscanf(v, "%d", &n)
	return model.JobID(n), err
}

// runStep runs one step inside job id.
func runStep(ctx context.Context, env *cli.Env, c cli.Client, opts *jobspec.Options, args []string, id model.JobID) int {
	s, err := newSession(env, c, opts, id)
	if err != nil {
		env.Errorf("%v", err)
		return env.ExitError()
	}
	defer s.ln.Close()
	spec, err := s.stepSpec(args)
	if err != nil {
		env.Errorf("%v", err)
		return env.ExitError()
	}
	if opts.BcastSet {
		// The step keeps the program's name; its tasks run the copy.
		dest, ok := bcastExecutable(ctx, env, c, opts, id)
		if !ok {
			return env.ExitError()
		}
		spec.Argv = append([]string{dest}, spec.Argv[1:]...)
	}
	if spec.NTasks > 0 && spec.MinNodes > spec.NTasks {
		env.Infof("warning: can't run %d processes on %d nodes, setting nnodes to %d", spec.NTasks, spec.MinNodes, spec.NTasks)
		spec.MinNodes, spec.MaxNodes = spec.NTasks, spec.NTasks
	}
	if err := s.create(ctx, spec); err != nil {
		env.Errorf("Unable to create step for job %d: %v", id, err)
		return env.ExitError()
	}
	return s.run(ctx)
}

// runAllocated asks for a job allocation, runs the step in it, and gives
// the allocation back with the step's status.
func runAllocated(ctx context.Context, env *cli.Env, c cli.Client, opts *jobspec.Options, args []string) int {
	spec := opts.Spec
	id, err := c.SubmitJob(ctx, spec)
	if err != nil {
		env.Errorf("Unable to allocate resources: %v", err)
		return env.ExitError()
	}
	// Until the allocation is granted, Ctrl-C or a kill gives it back.
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	job, err := cli.WaitForAllocation(ctx, env, c, id, sigs, "")
	signal.Stop(sigs)
	if err != nil {
		env.Errorf("%v", err)
		_ = c.CompleteJob(context.Background(), id, 1, 0)
		return env.ExitError()
	}
	// The step runs the allocation's whole shape unless srun said otherwise.
	opts.JobID = fmt.Sprint(id)
	if opts.Spec.MinNodes <= 0 {
		opts.Spec.MinNodes = len(job.Alloc)
	}
	status := runStep(ctx, env, c, opts, args, id)
	if err := c.CompleteJob(context.Background(), id, status, 0); err != nil {
		env.Errorf("Unable to release job allocation %d: %v", id, err)
	}
	return status
}

// setupTerminal puts a --pty srun's terminal in raw mode and forwards its
// size; the returned function restores it.
func (s *session) setupTerminal() func() {
	if !s.opts.Pty {
		return func() {}
	}
	f, ok := s.env.Stdin.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return func() {}
	}
	old, err := term.MakeRaw(int(f.Fd()))
	if err != nil {
		return func() {}
	}
	winch := make(chan os.Signal, 1)
	signal.Notify(winch, syscall.SIGWINCH)
	stop := make(chan struct{})
	s.ttyFd = int(f.Fd())
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-winch:
				s.sendSize()
			}
		}
	}()
	return func() {
		close(stop)
		signal.Stop(winch)
		_ = term.Restore(int(f.Fd()), old)
	}
}

// sendSize tells the nodes the terminal's size (--pty).
func (s *session) sendSize() {
	if s.ttyFd < 0 {
		return
	}
	w, h, err := term.GetSize(s.ttyFd)
	if err != nil {
		return
	}
	for _, c := range s.connList() {
		_ = c.Send(stepio.Winch, 0, []byte(fmt.Sprintf("%d %d", h, w)))
	}
}

// nameGiven reports whether -J/--job-name was on the command line: only
// then is it the step's name (a job name inherited through SLURM_JOB_NAME
// is not).
func nameGiven(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if a == "-J" || strings.HasPrefix(a, "--job-name") || (strings.HasPrefix(a, "-J") && len(a) > 2) {
			return true
		}
		if !strings.HasPrefix(a, "-") {
			return false
		}
	}
	return false
}

func baseName(p string) string { return path.Base(p) }

func cut(s, sep string) (string, string, bool) { return strings.Cut(s, sep) }

func signalName(sig int) string {
	switch syscall.Signal(sig) {
	case syscall.SIGKILL:
		return "Killed"
	case syscall.SIGTERM:
		return "Terminated"
	case syscall.SIGSEGV:
		return "Segmentation fault"
	case syscall.SIGINT:
		return "Interrupt"
	}
	return syscall.Signal(sig).String()
}
