package api

import (
	"context"
	"time"

	"github.com/drover-hpc/drover/internal/acct"
	"github.com/drover-hpc/drover/internal/acctmgr"
	"github.com/drover-hpc/drover/internal/model"
)

// Service is every user and admin call. internal/service implements it on
// the controller (authorising from the Identity in ctx); package client
// implements it over gRPC. Errors carry Slurm's wording in their message;
// refusals are *Error or one of the Err values of this package.
type Service interface {
	// SubmitJob commits a job and returns its id (an array's first id).
	SubmitJob(ctx context.Context, spec *model.JobSpec) (model.JobID, error)
	// ListJobs returns jobs matching the query, each with Spec filled in.
	ListJobs(ctx context.Context, q JobQuery) (*JobList, error)
	// WatchJobs streams the listed jobs each time one of them changes; fn
	// returning false stops the watch.
	WatchJobs(ctx context.Context, ids []model.JobID, fn func([]*model.Job) bool) error
	ListNodes(ctx context.Context) ([]*model.Node, error)
	ListPartitions(ctx context.Context) ([]*model.Partition, error)
	// Signal cancels or signals jobs chosen by sel; one result per target.
	Signal(ctx context.Context, sel JobSelection, sig SignalRequest) ([]JobResult, error)
	// Control applies hold/release/requeue/... to the jobs chosen by sel.
	Control(ctx context.Context, sel JobSelection, action string) ([]JobResult, error)
	// UpdateJob changes fields (TimeLimit, Partition, Name, Comment, Nice).
	UpdateJob(ctx context.Context, sel JobSelection, fields map[string]string) ([]JobResult, error)
	// UpdateNodes changes node state: State=DRAIN|RESUME|DOWN|UNDRAIN, Reason.
	UpdateNodes(ctx context.Context, nodes []string, fields map[string]string) error
	Ping(ctx context.Context) (*PingResult, error)
	// Config returns the running configuration as ordered key/value pairs.
	Config(ctx context.Context) ([]KV, error)
	Reconfigure(ctx context.Context) error
	// CreateStep starts a step in a running job; ErrStepBusy means it fits
	// the job but not while its other steps run.
	CreateStep(ctx context.Context, job model.JobID, spec *model.StepSpec) (*model.Job, *model.Step, error)
	// CompleteJob releases an allocation (salloc, srun) with an exit status.
	CompleteJob(ctx context.Context, job model.JobID, exitCode, signal int) error
	// AttachStep makes a running step's nodes dial addr with key (sattach).
	AttachStep(ctx context.Context, job model.JobID, step model.StepID, addr, key string) (*model.Step, error)
	// Broadcast makes the job's nodes fetch a file from addr (sbcast).
	Broadcast(ctx context.Context, req BroadcastRequest) ([]string, error)
	// StepStats asks the nodes of a running job for the current usage of
	// its steps (one step when hasStep): one entry per step and node;
	// failed names nodes that did not answer.
	StepStats(ctx context.Context, job model.JobID, step model.StepID, hasStep bool) (stats []StepStat, failed []string, err error)
	// AcctJobs streams job records from the accounting database (sacct)
	// to fn, a chunk at a time; ErrAcctDisabled when the cluster keeps
	// none. An error from fn ends the query with that error.
	AcctJobs(ctx context.Context, q acct.Query, fn func([]*acct.Job) error) error
	// AcctDB returns the accounting configuration (sacctmgr list/show).
	AcctDB(ctx context.Context) (*model.AcctDB, error)
	// AcctModify applies a sacctmgr change (only describes it unless
	// commit) and returns the description sacctmgr prints; a
	// *acctmgr.Warning error comes with the text.
	AcctModify(ctx context.Context, req *acctmgr.Request, commit bool) (string, error)
	// Diag returns the controller's statistics (sdiag), reset after
	// reading when reset.
	Diag(ctx context.Context, reset bool) (*DiagInfo, error)
	// Priorities returns pending jobs' priority factors and the
	// fair-share tree (sprio, sshare).
	Priorities(ctx context.Context) (*PriorityInfo, error)
	// ReservationCommand creates, updates or deletes a reservation
	// (scontrol) and returns its name.
	ReservationCommand(ctx context.Context, req *model.ResvRequest) (string, error)
	// ListReservations returns the reservations and the controller's
	// clock (unix seconds).
	ListReservations(ctx context.Context) ([]*model.Reservation, int64, error)
}

// TokenSpec is what an admin asks of a new join token.
type TokenSpec struct {
	TTL time.Duration // <= 0: the default
	// Nodes is a hostlist expression of the node names the token may
	// join as, or "ALL"; required.
	Nodes string
	// Uses bounds the joins; 0 means one per name in Nodes (one for ALL).
	Uses int
}

// JoinTokens is the admin's side of node joining (scontrol token).
type JoinTokens interface {
	// CreateJoinToken makes a token and returns it and when it expires.
	CreateJoinToken(ctx context.Context, spec TokenSpec) (token string, expires int64, err error)
	// ListJoinTokens lists the tokens that have not expired (no secrets).
	ListJoinTokens(ctx context.Context) ([]*model.JoinToken, error)
	DeleteJoinToken(ctx context.Context, id string) error
}
