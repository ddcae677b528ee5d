package cli

import (
	"errors"
	"fmt"
	"os"
	"strconv"
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

// processUmask reads this process's umask from /proc without changing it
// (umask(2) can only be read by setting it, which races with any thread
// creating a file). Plain system calls: os.ReadFile would start the
// runtime's poller for it.
func processUmask() (uint32, bool) {
	b, err := readProcFile("/proc/self/status")
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

// readProcFile reads a /proc file whole (its size is not known ahead).
func readProcFile(path string) ([]byte, error) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer syscall.Close(fd)
	b := make([]byte, 0, 4096)
	for {
		n, err := syscall.Read(fd, b[len(b):cap(b)])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		if n <= 0 {
			return b, nil
		}
		b = b[:len(b)+n]
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
	}
}
