//go:build !unix

package executor

import "errors"

// errUnsupported: steps need process groups, setuid and file descriptor
// passing; the client commands built for other systems never start steps.
var errUnsupported = errors.New("executor: running job steps needs a Unix system")

// Start fails: see errUnsupported.
func Start(spec *Spec) (Process, error) { return nil, errUnsupported }

// StepExecMain fails: see errUnsupported.
func StepExecMain(args []string) int { return 127 }
