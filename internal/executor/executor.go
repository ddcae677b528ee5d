package executor

import (
	"io"
	"os"
	"runtime"
	"syscall"
	"time"
)

// StepExecArg is argv[1] of the privileged step helper; see StepExecMain.
const StepExecArg = "__stepexec"

// SelfPath is the binary Start re-executes as the step helper. On Linux the
// default names the running binary even if it was replaced or deleted on
// disk since (an agent upgrade in place); tests point it at the test binary.
var SelfPath = defaultSelfPath()

func defaultSelfPath() string {
	if runtime.GOOS == "linux" {
		return "/proc/self/exe"
	}
	if p, err := os.Executable(); err == nil {
		return p
	}
	return os.Args[0]
}

// Tunables of Wait. Variables rather than constants so tests (and the agent,
// from configuration) can adjust them.
var (
	// GroupKillTimeout bounds how long Wait keeps SIGKILLing the step's
	// process group until no live member remains.
	GroupKillTimeout = 5 * time.Second
	// IODrainTimeout bounds how long Wait, once the group is gone, waits for
	// the streams to StdoutW/StderrW to reach EOF. Only a process that left
	// the group (setsid) can hold them open that long; its output is dropped.
	IODrainTimeout = 2 * time.Second
)

// Spec describes one program to run as a user.
type Spec struct {
	Path string   // program; without a '/', it is searched in the PATH of Env
	Args []string // argv[1:]; argv[0] is Path as given
	Env  []string // the program's whole environment
	// PidEnv names variables set to the program's own pid (SLURM_TASK_PID).
	// Only the helper knows it before the program starts: it is the
	// helper's pid, kept across execve. Honoured only with Helper; the
	// direct path leaves Env as it is.
	PidEnv []string
	Dir    string // working directory; "" = the agent's cwd

	UID, GID uint32   // run as this user; root only when UID == 0
	Groups   []uint32 // supplementary groups; empty = none

	// File paths, opened with the user's rights (the privilege drop, or
	// the direct path's per-thread filesystem identity, comes first). A
	// relative path is relative to Dir. "" means /dev/null. Stdout ==
	// Stderr, or two names of one file, opens the file once, so both
	// streams share one offset and interleave correctly.
	Stdin, Stdout, Stderr string
	Append                bool // O_APPEND instead of O_TRUNC for Stdout/Stderr

	// Streaming alternative to the paths (srun): when set, the stream goes
	// through a pipe to/from the caller and the matching path is ignored.
	// StdoutW == StderrW shares one pipe, keeping the streams' relative order.
	StdoutW, StderrW io.Writer
	StdinR           io.Reader

	// Terminal starts the program in a session of its own with Stdin (a
	// terminal's path) as its controlling terminal: srun --pty. The direct
	// path only.
	Terminal bool

	// Umask for the program; -1 = inherit the agent's umask. The umask is
	// per process, so the direct path cannot set one for the child without
	// changing it for the whole agent: a umask other than the agent's
	// sends the launch through the helper (not with Terminal). Output
	// files are then created 0666 less the umask, as Slurm does.
	Umask int

	// CgroupV1Dirs and CgroupV2Dir place the program in a cgroup before
	// its first instruction: the launching thread joins the v1 groups
	// (their tasks files) for the fork and leaves them after, and on v2
	// the child is cloned straight into the group (CLONE_INTO_CGROUP).
	// The helper path joins them in the helper, still root. Empty: the
	// program stays in the launcher's cgroups.
	CgroupV1Dirs []string
	CgroupV2Dir  string

	// Helper launches through the step helper (StepExecMain, a re-exec of
	// SelfPath) instead of directly from the agent. It costs a Go runtime
	// start-up per step, but runs code as root in the new process before
	// the program: joining cgroup v1 hierarchies (joinCgroups), the umask,
	// PidEnv. See the package documentation.
	Helper bool
}

// Result is how a step's program ended.
type Result struct {
	// ExitCode is the exit status (0-255) when the program exited; 0 when
	// it was killed by a signal (Slurm reports that as "0:<sig>"). After a
	// launch failure it is 127, the helper's status (the direct path
	// reports the same).
	ExitCode int
	// Signal is the signal that killed the program, 0 if none.
	Signal int
	// Err is non-nil when the program never ran: the working directory, a
	// stdio file or the privilege drop failed, or execve did. The message is
	// meant for users (it also went to the step's stderr where possible).
	Err error
}

// Process is a running step program and its process group.
type Process interface {
	// Pid is the program's pid, also its process group id. It is 0 when
	// the direct path found the launch impossible before forking (then
	// Wait returns the launch error at once).
	Pid() int
	// Signal sends sig to the whole process group. After Wait has reaped
	// the program it returns os.ErrProcessDone.
	Signal(sig syscall.Signal) error
	// Terminate sends SIGCONT and SIGTERM to the group and, if the program
	// is still running killWait later, SIGKILL. It does not block.
	Terminate(killWait time.Duration)
	// Wait waits for the program to exit, then SIGKILLs whatever remains in
	// its process group (a process that called setsid is out of reach until
	// steps run in cgroups), and returns the result. Safe to call
	// repeatedly and concurrently; every call returns the same Result.
	Wait() Result
}

// Executor launches programs as users. Local runs them from this process;
// the agent's step runner takes one so that tests drive the runner with
// executor/fake, and other launchers (containers) can slot in later.
type Executor interface {
	Start(spec *Spec) (Process, error)
}

// Local starts programs with Start.
type Local struct{}

// Start launches spec; see Start.
func (Local) Start(spec *Spec) (Process, error) { return Start(spec) }
