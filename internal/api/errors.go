package api

import "errors"

// Error is a refusal in Slurm's words; transports map its Code to their
// status and back.
type Error struct {
	Code Code
	Msg  string
}

func (e *Error) Error() string { return e.Msg }

// Code classifies errors for transports.
type Code int

const (
	CodeInvalid Code = iota
	CodeDenied
	CodeNotFound
	CodeUnavailable
	// CodeBusy: the request is sound but must wait (a step for its job's CPUs).
	CodeBusy
)

// IsError reports whether err is a refusal and returns it.
func IsError(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

// Slurm's words for the refusals that callers test for with errors.Is:
// the service returns these very values, and the client turns their
// status back into them, so the test holds in process and over the wire.
var (
	// ErrAcctDisabled is AcctJobs' answer on a cluster without accounting
	// (AccountingStorageType=accounting_storage/none).
	ErrAcctDisabled error = &Error{Code: CodeBusy, Msg: "Slurm accounting storage is disabled"}
	// ErrStepBusy is CreateStep's answer when the step must wait for the
	// job's other steps.
	ErrStepBusy error = &Error{Code: CodeBusy, Msg: "Requested nodes are busy"}
	// ErrTryAgain is a submission refused for now (MaxJobCount reached):
	// the submitting commands wait and retry, as Slurm's do. Its text is
	// EAGAIN's.
	ErrTryAgain error = &Error{Code: CodeUnavailable, Msg: "Resource temporarily unavailable"}
	// ErrNoController is returned when no controller can be reached.
	ErrNoController = errors.New("Unable to contact slurm controller (connect failure)")
)
