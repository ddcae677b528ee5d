package cli

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"

	"github.com/drover-hpc/drover/internal/jobspec"
)

// ParseJob runs the job-spec parser shared by sbatch, srun and salloc and
// handles --help, --usage, --version and errors. done reports that the
// command should exit with code.
func ParseJob(env *Env, kind jobspec.Kind, args []string) (opts *jobspec.Options, code int, done bool) {
	cwd, err := os.Getwd()
	if err != nil {
		cwd = env.Getenv("PWD")
	}
	host, _ := os.Hostname()
	if i := strings.IndexByte(host, '.'); i > 0 {
		host = host[:i]
	}
	opts, err = jobspec.Parse(kind, args, jobspec.Context{
		Environ: env.Environ, Cwd: cwd, Hostname: host, Now: env.Now(), ReadFile: os.ReadFile, Stdin: env.Stdin,
		Umask: processUmask, Root: os.Getuid() == 0,
	})
	if err != nil {
		var je *jobspec.Error
		if errors.As(err, &je) {
			je.Print(env.Stderr, env.Prog)
			if je.Exit != 0 {
				return nil, je.Exit, true
			}
		} else {
			env.Errorf("%v", err)
		}
		return nil, env.ExitError(), true
	}
	switch {
	case opts.Version:
		fmt.Fprintf(env.Stdout, "slurm %s\n", env.Version)
		return nil, 0, true
	case opts.Help || opts.Usage:
		jobspec.PrintUsage(env.Stdout, kind, opts.Help)
		return nil, 0, true
	}
	return opts, 0, false
}

// processUmask reads this process's umask. umask(2) reads it only by
// setting it: for the instant between the two calls it is 0o777, so that
// a file another thread created meanwhile would get no permissions
// rather than more. None does: the commands parse their options before
// they start anything of their own (the runtime's threads create no
// files). /proc/self/status, which shows it without changing it, cost
// each sbatch ~50 µs (the kernel formats the whole status text).
func processUmask() (uint32, bool) {
	old := syscall.Umask(0o777)
	syscall.Umask(old)
	return uint32(old), true
}
