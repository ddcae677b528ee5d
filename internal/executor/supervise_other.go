//go:build unix && !linux

package executor

import "errors"

// SuperviseArg is argv[1] of a supervisor; see SuperviseMain.
const SuperviseArg = "__supervise"

// StartSupervised falls back to Start where pidfds are missing: the
// program does not outlive the agent there.
func StartSupervised(dir string, spec *Spec) (Process, error) { return Start(spec) }

// Reattach is unsupported without pidfds.
func Reattach(dir string) (Process, error) {
	return nil, errors.New("executor: reattaching needs Linux")
}

// SuperviseMain is unsupported without pidfds.
func SuperviseMain(args []string) int { return 127 }
