// Package clitest helps test commands without a controller: Unimplemented
// is a cli.Client whose every call fails, for fakes to embed and override
// just the calls a command makes.
package clitest

import (
	"context"
	"errors"
	"github.com/drover-hpc/drover/internal/acct"
	"github.com/drover-hpc/drover/internal/acctmgr"

	"github.com/drover-hpc/drover/internal/cli"
	"github.com/drover-hpc/drover/internal/model"
)

// ErrUnimplemented is what the calls a fake did not override return.
var ErrUnimplemented = errors.New("clitest: call not implemented by this fake")

// Unimplemented implements cli.Client with failing calls.
type Unimplemented struct{}

var _ cli.Client = Unimplemented{}

func (Unimplemented) SubmitJob(context.Context, *model.JobSpec) (model.JobID, error) {
	return 0, ErrUnimplemented
}
func (Unimplemented) ListJobs(context.Context, cli.JobQuery) (*cli.JobList, error) {
	return nil, ErrUnimplemented
}
func (Unimplemented) WatchJobs(context.Context, []model.JobID, func([]*model.Job) bool) error {
	return ErrUnimplemented
}
func (Unimplemented) ListNodes(context.Context) ([]*model.Node, error) { return nil, ErrUnimplemented }
func (Unimplemented) ListPartitions(context.Context) ([]*model.Partition, error) {
	return nil, ErrUnimplemented
}
func (Unimplemented) Signal(context.Context, cli.JobSelection, cli.SignalRequest) ([]cli.JobResult, error) {
	return nil, ErrUnimplemented
}
func (Unimplemented) Control(context.Context, cli.JobSelection, string) ([]cli.JobResult, error) {
	return nil, ErrUnimplemented
}
func (Unimplemented) UpdateJob(context.Context, cli.JobSelection, map[string]string) ([]cli.JobResult, error) {
	return nil, ErrUnimplemented
}
func (Unimplemented) UpdateNodes(context.Context, []string, map[string]string) error {
	return ErrUnimplemented
}
func (Unimplemented) Ping(context.Context) (*cli.PingResult, error) { return nil, ErrUnimplemented }
func (Unimplemented) Config(context.Context) ([]cli.KV, error)      { return nil, ErrUnimplemented }
func (Unimplemented) Reconfigure(context.Context) error             { return ErrUnimplemented }
func (Unimplemented) StepStats(context.Context, model.JobID, model.StepID, bool) ([]cli.StepStat, []string, error) {
	return nil, nil, ErrUnimplemented
}
func (Unimplemented) Close() error                                      { return nil }
func (Unimplemented) Diag(context.Context, bool) (*cli.DiagInfo, error) { return nil, ErrUnimplemented }
func (Unimplemented) Priorities(context.Context) (*cli.PriorityInfo, error) {
	return nil, ErrUnimplemented
}
func (Unimplemented) AcctDB(context.Context) (*model.AcctDB, error) { return nil, ErrUnimplemented }
func (Unimplemented) AcctModify(context.Context, *acctmgr.Request, bool) (string, error) {
	return "", ErrUnimplemented
}
func (Unimplemented) AcctJobs(context.Context, acct.Query, func([]*acct.Job) error) error {
	return ErrUnimplemented
}
func (Unimplemented) CreateStep(context.Context, model.JobID, *model.StepSpec) (*model.Job, *model.Step, error) {
	return nil, nil, ErrUnimplemented
}
func (Unimplemented) CompleteJob(context.Context, model.JobID, int, int) error {
	return ErrUnimplemented
}
func (Unimplemented) AttachStep(context.Context, model.JobID, model.StepID, string, string) (*model.Step, error) {
	return nil, ErrUnimplemented
}
func (Unimplemented) Broadcast(context.Context, cli.BroadcastRequest) ([]string, error) {
	return nil, ErrUnimplemented
}
func (Unimplemented) ReservationCommand(context.Context, *model.ResvRequest) (string, error) {
	return "", ErrUnimplemented
}
func (Unimplemented) ListReservations(context.Context) ([]*model.Reservation, int64, error) {
	return nil, 0, ErrUnimplemented
}
