package cli

import (
	"context"
	"errors"

	"github.com/drover-hpc/drover/internal/acct"
	"github.com/drover-hpc/drover/internal/acctmgr"
	"github.com/drover-hpc/drover/internal/model"
)

// Client is the controller API as commands see it. The real implementation
// (package client) speaks gRPC; tests use fakes. Errors carry Slurm's
// wording in their message (e.g. MsgInvalidJobID).
type Client interface {
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
	// AcctJobs reads job records from the accounting database (sacct);
	// ErrAcctDisabled when the cluster keeps none.
	AcctJobs(ctx context.Context, q acct.Query) ([]*acct.Job, error)
	// AcctDB returns the accounting configuration (sacctmgr list/show).
	AcctDB(ctx context.Context) (*model.AcctDB, error)
	// AcctModify applies a sacctmgr change (only describes it unless
	// commit) and returns the description sacctmgr prints.
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
	Close() error
}

// PriorityInfo is what sprio and sshare show.
type PriorityInfo struct {
	Multifactor                             bool
	FairTree                                bool // else the classic fair-share formula
	WAge, WFairShare, WJobSize, WPart, WQOS uint32
	WTRES                                   string // PriorityWeightTRES as written
	Jobs                                    []JobPriority
	Shares                                  []ShareRow
}

// JobPriority is one pending job's normalised factors.
type JobPriority struct {
	ID                                 string
	JobID                              uint32
	Partition, User                    string
	UID                                uint32
	Priority                           uint32
	Age, FairShare, JobSize, Part, QOS float64
	Nice                               int
	TRES                               []TRESFactor // PriorityWeightTRES order, non-zero ones
}

// TRESFactor is one TRES's priority factor and what it adds.
type TRESFactor struct {
	Name             string
	Factor, Weighted float64
}

// ShareRow is one association of the fair-share tree; User "" is an
// account.
type ShareRow struct {
	Account, User                             string
	Depth, RawShares                          int
	NormShares, RawUsage, EffUsage, FairShare float64
	// NormUsage is the share of the cluster's usage; LevelFS Fair Tree's
	// S/U (+Inf without usage, NaN under the classic formula).
	NormUsage, LevelFS float64
}

// DiagInfo is what sdiag shows. Times are unix seconds, durations
// microseconds.
type DiagInfo struct {
	Now, Since                                              int64
	ServerThreads                                           int
	AcctBacklog                                             int
	AcctError                                               string
	AcctDisabled                                            bool
	JobsSubmitted, JobsStarted, JobsCompleted, JobsCanceled uint64
	JobsFailed                                              uint64
	JobsPending, JobsRunning                                int
	SchedLast, SchedMax, SchedTotal                         int64
	SchedCycles, SchedDepthSum                              uint64
	SchedLastQueue                                          int
	SchedSince                                              int64
	RPCByType, RPCByUser                                    []RPCStat
}

// RPCStat is one line of sdiag's RPC tables.
type RPCStat struct {
	Name    string
	UID     uint32
	Count   uint64
	TotalUs int64
}

// StepStat is one node's share of a running step (sstat).
type StepStat struct {
	Job    model.JobID
	Step   model.StepID
	Node   string
	NTasks int
	Pids   []int
	Usage  model.Usage
}

// ErrAcctDisabled is AcctJobs' answer on a cluster without accounting
// (AccountingStorageType=accounting_storage/none); its text is Slurm's.
var ErrAcctDisabled = errors.New("Slurm accounting storage is disabled")

// ErrStepBusy is CreateStep's answer when the step must wait for the
// job's other steps; its text is Slurm's.
var ErrStepBusy = errors.New("Requested nodes are busy")

// ErrTryAgain is a submission refused for now (MaxJobCount reached): the
// submitting commands wait and retry, as Slurm's do. Its text is EAGAIN's.
var ErrTryAgain = errors.New("Resource temporarily unavailable")

// BroadcastRequest is what sbcast asks for.
type BroadcastRequest struct {
	Job         model.JobID
	Addr, Key   string
	Dest        string
	Mode        uint32
	Force       bool
	MTime, Size int64
}

// JobQuery filters a job listing on the controller.
type JobQuery struct {
	IDs        []model.JobID // empty = all
	IncludeAll bool          // include finished jobs still held in memory
	// Summary asks for jobs without their long spec strings (WorkDir,
	// StdOut/StdErr/StdIn, Argv, SubmitLine, Comment, Dependency, node
	// lists): the listing formats that do not print them are much faster.
	Summary bool
	// WithSteps keeps the jobs' steps in a Summary listing.
	WithSteps bool
}

// JobList is a listing taken at one moment.
type JobList struct {
	Jobs []*model.Job
	Now  int64 // controller's clock, unix seconds
}

// JobTarget names a job as a user wrote it: "123", "123_4", "123_[1-3]".
type JobTarget struct {
	ID    model.JobID
	Tasks []int // array task ids; nil = whole job (or whole array)
	Raw   string
	// HasStep: the target is one step of the job ("123.4", "123.batch").
	HasStep bool
	Step    model.StepID
}

// JobSelection picks jobs by id and/or filters (all given filters AND).
type JobSelection struct {
	Targets   []JobTarget
	User      string
	UID       int64 // -1 = any
	Name      string
	Partition string
	States    []model.JobState
	Nodes     []string
	Account   string
	QOS       string
}

// SignalRequest is what scancel sends: a cancel, or a signal.
type SignalRequest struct {
	Signal    int  // 0 = cancel (terminate) the job
	BatchOnly bool // -b: only the batch shell
	Full      bool // -f
}

// JobResult tells how one targeted job fared.
type JobResult struct {
	Job   string // display id
	Error string // "" on success, else Slurm's message
}

// PingResult answers scontrol ping.
type PingResult struct {
	Controllers []ControllerStatus
}

// ControllerStatus is one controller's role and reachability.
type ControllerStatus struct {
	Host    string
	Primary bool
	Up      bool
	Leader  bool
}

// KV is one configuration line.
type KV struct{ Key, Value string }
