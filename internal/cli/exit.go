package cli

import (
	"errors"
	"strconv"
)

// ExitCode is an error that ends a command with that status, its message
// having been printed already.
type ExitCode int

func (e ExitCode) Error() string { return "exit " + strconv.Itoa(int(e)) }

// Status turns a command's error into its exit status: 0 for nil, the
// code of an ExitCode, else SLURM_EXIT_ERROR (default 1).
func (e *Env) Status(err error) int {
	var code ExitCode
	switch {
	case err == nil:
		return 0
	case errors.As(err, &code):
		return int(code)
	}
	return e.ExitError()
}
