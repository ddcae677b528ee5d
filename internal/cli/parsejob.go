package cli

import (
	"errors"
	"fmt"
	"os"
	"strings"

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
