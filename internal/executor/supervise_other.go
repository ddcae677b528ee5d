//go:build unix && !linux

package executor

import (
	"errors"
	"os"
	"time"
)

// SuperviseArg is argv[1] of the supervisor; see SuperviseMain.
const SuperviseArg = "__supervise"

// Supervisor is unavailable outside Linux: programs start directly and
// end with the agent.
type Supervisor struct{}

// ConnectSupervisor fails outside Linux.
func ConnectSupervisor(sock string) (*Supervisor, error) {
	return nil, errors.New("executor: no supervisor on this system")
}

func (*Supervisor) Start(dir string, spec *Spec) (Process, error)     { return Start(spec) }
func (*Supervisor) StartHeld(dir string, spec *Spec) (Process, error) { return Start(spec) }
func (*Supervisor) Forget(dir string)                                 {}
func (*Supervisor) Reattach(dir string) (Process, error) {
	return nil, errors.New("executor: no supervisor on this system")
}
func (*Supervisor) Close() error { return nil }

// Lost never closes: there is no connection to lose.
func (*Supervisor) Lost() <-chan struct{} { return nil }

// SupervisorAnswerTimeout: see the Linux version.
var SupervisorAnswerTimeout = 10 * time.Second

// Pipes are a supervised program's streams (see the Linux version).
type Pipes struct {
	Stdin          *os.File
	Stdout, Stderr *os.File
}

func (*Supervisor) StartPiped(dir string, spec *Spec, pipes [3]bool) (Process, *Pipes, error) {
	return nil, nil, errors.New("executor: no supervisor on this system")
}
func (*Supervisor) ReattachPiped(dir string, pipes [3]bool) (Process, *Pipes, error) {
	return nil, nil, errors.New("executor: no supervisor on this system")
}
func (*Supervisor) CloseStdin(dir string) {}

// SuperviseMain is unsupported outside Linux.
func SuperviseMain(args []string) int { return 127 }
