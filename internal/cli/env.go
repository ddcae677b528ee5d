package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/drover-hpc/drover/internal/api"
	"github.com/drover-hpc/drover/internal/model"
)

// Env is the world a command runs in. Tests build one with fakes.
type Env struct {
	Prog    string // command name as invoked, e.g. "sbatch"
	Stdin   io.Reader
	Stdout  io.Writer
	Stderr  io.Writer
	Environ []string // KEY=VALUE, like os.Environ()
	Now     func() time.Time
	Dial    func() (Client, error) // connects to the controller on first use
	Version string
	Host    *Host // the operating system's answers; nil: the real ones

	client Client
}

// Getenv looks a variable up in Environ.
func (e *Env) Getenv(key string) string {
	v, _ := e.LookupEnv(key)
	return v
}

// LookupEnv reports whether key is set in Environ, and its value.
func (e *Env) LookupEnv(key string) (string, bool) {
	prefix := key + "="
	for i := len(e.Environ) - 1; i >= 0; i-- {
		if strings.HasPrefix(e.Environ[i], prefix) {
			return e.Environ[i][len(prefix):], true
		}
	}
	return "", false
}

// Client dials the controller once and reuses the connection.
func (e *Env) Client() (Client, error) {
	if e.client != nil {
		return e.client, nil
	}
	if e.Dial == nil {
		return nil, ErrNoController
	}
	c, err := e.Dial()
	if err != nil {
		return nil, err
	}
	e.client = c
	return c, nil
}

// Errorf prints "<prog>: error: <msg>" on stderr, as every Slurm client does.
func (e *Env) Errorf(format string, args ...any) {
	fmt.Fprintf(e.Stderr, "%s: error: %s\n", e.Prog, fmt.Sprintf(format, args...))
}

// Infof prints "<prog>: <msg>" on stderr.
func (e *Env) Infof(format string, args ...any) {
	fmt.Fprintf(e.Stderr, "%s: %s\n", e.Prog, fmt.Sprintf(format, args...))
}

// ExitError is the status for a failed command: SLURM_EXIT_ERROR or 1.
func (e *Env) ExitError() int {
	if v := e.Getenv("SLURM_EXIT_ERROR"); v != "" {
		var n int
		if _, err := fmt.Sscan(v, &n); err == nil {
			return n
		}
	}
	return 1
}

// NewOSEnv builds an Env over the process's real stdio and environment.
func NewOSEnv(prog, version string, dial func() (Client, error)) *Env {
	return &Env{
		Prog: prog, Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr,
		Environ: os.Environ(), Now: time.Now, Dial: dial, Version: version, Host: OSHost(),
	}
}

// Command is one Slurm command's entry point.
type Command func(ctx context.Context, env *Env, args []string) int

// ErrNoController is returned when no controller can be reached.
var ErrNoController = api.ErrNoController

// Error strings Slurm clients print and scripts grep for.
const (
	MsgInvalidJobID     = "Invalid job id specified"
	MsgAlreadyDone      = "Job/step already completing or completed"
	MsgInvalidPartition = "Invalid partition name specified"
	MsgNodeConfig       = "Requested node configuration is not available"
	MsgTimeLimit        = "Requested time limit is invalid (missing or exceeds some limit)"
	MsgArraySpec        = "Invalid job array specification"
	MsgAccessDenied     = "Access/permission denied"
	MsgDependency       = "Job dependency problem"
	MsgPendingHeld      = "Job is pending execution"
	MsgNotPending       = "Job is no longer pending execution"
	MsgInvalidNode      = "Invalid node name specified"
	MsgMemory           = "Memory required by task is not available"
)

// ModelJob is what commands see of a job: the record plus the spec it was
// submitted with (Spec may be nil for clients that asked for states only).
type ModelJob = model.Job
