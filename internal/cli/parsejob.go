package cli

import (
	"errors"
	"fmt"
	"os"
	"strconv"
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
	mask, hasMask := processUmask()
	opts, err = jobspec.Parse(kind, args, jobspec.Context{
		Environ: env.Environ, Cwd: cwd, Hostname: host, Now: env.Now(), ReadFile: os.ReadFile, Stdin: env.Stdin,
		Umask: mask, HasUmask: hasMask, Root: os.Getuid() == 0,
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

// processUmask reads this process's umask from /proc without changing it
// (umask(2) can only be read by setting it, which races with any thread
// creating a file).
func processUmask() (uint32, bool) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Umask:"); ok {
			n, err := strconv.ParseUint(strings.TrimSpace(v), 8, 32)
			return uint32(n), err == nil
		}
	}
	return 0, false
}
