package cli

import (
	"context"

	"github.com/drover-hpc/drover/internal/acct"
	"github.com/drover-hpc/drover/internal/api"
)

// Client is the controller API as commands see it: api.Service, which the
// real implementation (package client) speaks over gRPC and tests fake.
// Errors carry Slurm's wording in their message (e.g. MsgInvalidJobID).
type Client interface {
	api.Service
	Close() error
}

// The request and answer types are api's; these names keep the commands'
// spelling.
type (
	PriorityInfo     = api.PriorityInfo
	JobPriority      = api.JobPriority
	TRESFactor       = api.TRESFactor
	ShareRow         = api.ShareRow
	DiagInfo         = api.DiagInfo
	RPCStat          = api.RPCStat
	StepStat         = api.StepStat
	BroadcastRequest = api.BroadcastRequest
	JobQuery         = api.JobQuery
	JobList          = api.JobList
	JobTarget        = api.JobTarget
	JobSelection     = api.JobSelection
	SignalRequest    = api.SignalRequest
	JobResult        = api.JobResult
	PingResult       = api.PingResult
	ControllerStatus = api.ControllerStatus
	KV               = api.KV
)

// Errors callers test for by identity (the api's).
var (
	ErrAcctDisabled = api.ErrAcctDisabled
	ErrStepBusy     = api.ErrStepBusy
	ErrTryAgain     = api.ErrTryAgain
)

// AcctJobs collects every record of an accounting query (sacct, sreport
// print from the whole set).
func AcctJobs(ctx context.Context, c Client, q acct.Query) ([]*acct.Job, error) {
	var out []*acct.Job
	err := c.AcctJobs(ctx, q, func(jobs []*acct.Job) error {
		out = append(out, jobs...)
		return nil
	})
	return out, err
}
