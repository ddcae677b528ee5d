package acct

import (
	"context"
	"errors"
)

// Job is one job (or array task) as the accounting database keeps it.
// Times are unix seconds, 0 when not (yet) reached. Records are written
// whole and replace the previous version of the same (Cluster, JobID).
type Job struct {
	Cluster     string `json:"cluster"`
	JobID       uint32 `json:"job_id"`
	ArrayJobID  uint32 `json:"array_job_id,omitempty"` // 0 when not an array task
	ArrayTaskID int32  `json:"array_task_id"`          // -1 when not an array task

	Name      string `json:"name"`
	User      string `json:"user"`
	UID       uint32 `json:"uid"`
	Group     string `json:"group"`
	GID       uint32 `json:"gid"`
	Account   string `json:"account,omitempty"`
	Partition string `json:"partition,omitempty"`
	QOS       string `json:"qos,omitempty"`

	// State is the long state name ("COMPLETED", "CANCELLED", "PENDING").
	State       string `json:"state"`
	Reason      string `json:"reason,omitempty"`
	ExitStatus  int32  `json:"exit_status"` // 0-255
	ExitSignal  int32  `json:"exit_signal"` // terminating signal, 0 if none
	CancelledBy uint32 `json:"cancelled_by,omitempty"`
	// DerivedExitStatus/Signal: the highest exit status of any step
	// (Slurm's DerivedExitCode).
	DerivedExitStatus int32  `json:"derived_exit_status"`
	DerivedExitSignal int32  `json:"derived_exit_signal"`
	Restarts          int32  `json:"restarts,omitempty"`
	Priority          uint32 `json:"priority"`

	Submit    int64 `json:"submit"`
	Eligible  int64 `json:"eligible"`
	Start     int64 `json:"start"`
	End       int64 `json:"end"`
	Suspended int64 `json:"suspended,omitempty"` // seconds spent suspended
	// TimeLimit in seconds; -1 = the partition's, -2 = UNLIMITED.
	TimeLimit int64 `json:"time_limit"`

	NNodes       int32 `json:"nnodes"` // allocated (requested while pending)
	NCPUs        int32 `json:"ncpus"`  // allocated (requested while pending)
	ReqCPUs      int32 `json:"req_cpus"`
	ReqNodes     int32 `json:"req_nodes"`
	ReqMem       int64 `json:"req_mem"` // MiB; per CPU when ReqMemPerCPU
	ReqMemPerCPU bool  `json:"req_mem_per_cpu,omitempty"`
	// ReqTRES and AllocTRES are Slurm's TRES strings:
	// "billing=2,cpu=2,gres/gpu=1,mem=400M,node=1".
	ReqTRES   string `json:"req_tres,omitempty"`
	AllocTRES string `json:"alloc_tres,omitempty"`
	NodeList  string `json:"node_list,omitempty"` // compressed hostlist; "None assigned" is the printer's business

	WorkDir     string `json:"work_dir,omitempty"`
	Comment     string `json:"comment,omitempty"`
	SubmitLine  string `json:"submit_line,omitempty"`
	StdOut      string `json:"stdout,omitempty"`
	StdErr      string `json:"stderr,omitempty"`
	StdIn       string `json:"stdin,omitempty"`
	Constraints string `json:"constraints,omitempty"`

	// Runs are the earlier runs of a requeued job, oldest first: sacct -D
	// shows each as a REQUEUED row.
	Runs []Run `json:"runs,omitempty"`

	// Steps are the job's steps (batch, extern, 0, 1, ...), by StepID.
	// Query fills them unless Query.NoSteps.
	Steps []*Step `json:"steps,omitempty"`
}

// Run is one earlier run of a requeued job.
type Run struct {
	Submit     int64  `json:"submit"`
	Eligible   int64  `json:"eligible,omitempty"`
	Start      int64  `json:"start"`
	End        int64  `json:"end"`
	NodeList   string `json:"node_list,omitempty"`
	NCPUs      int32  `json:"ncpus,omitempty"`
	ExitStatus int32  `json:"exit_status,omitempty"`
	ExitSignal int32  `json:"exit_signal,omitempty"`
	// Preempted: the run ended by preemption (sacct: PREEMPTED).
	Preempted bool `json:"preempted,omitempty"`
}

// Step ids of Slurm's special steps (the same values as model.StepID).
const (
	StepBatch       int32 = -5
	StepExtern      int32 = -4
	StepInteractive int32 = -6
)

// Step is one job step's record.
type Step struct {
	StepID      int32  `json:"step_id"` // 0, 1, ... or StepBatch/StepExtern/StepInteractive
	Name        string `json:"name"`
	State       string `json:"state"`
	ExitStatus  int32  `json:"exit_status"`
	ExitSignal  int32  `json:"exit_signal"`
	CancelledBy uint32 `json:"cancelled_by,omitempty"`
	Start       int64  `json:"start"`
	End         int64  `json:"end"`
	NNodes      int32  `json:"nnodes"`
	NTasks      int32  `json:"ntasks"`
	NCPUs       int32  `json:"ncpus"`
	NodeList    string `json:"node_list,omitempty"`
	AllocTRES   string `json:"alloc_tres,omitempty"`
	// Usage, from the nodes: memory in bytes, CPU times in microseconds.
	MaxRSS     int64  `json:"max_rss"`
	MaxRSSNode string `json:"max_rss_node,omitempty"`
	MaxRSSTask int32  `json:"max_rss_task"`
	AveRSS     int64  `json:"ave_rss"`
	UserCPU    int64  `json:"user_cpu"`
	SystemCPU  int64  `json:"system_cpu"`
	// Suspended: seconds the job was suspended while the step ran (left
	// out of the step's Elapsed).
	Suspended int64 `json:"suspended,omitempty"`
}

// JobSel selects one job id as sacct -j writes it: "123" (the job, or
// every task of array 123), "123_4" (one task).
type JobSel struct {
	JobID     uint32
	ArrayTask int32 // -1: any
}

// Query selects records. Empty lists match everything; a job matches when
// it matches every non-empty criterion.
type Query struct {
	// Clusters: empty is every cluster (the controller's query service
	// reads it as its own cluster, and "all" as every one, as sacct -M).
	Clusters   []string
	Jobs       []JobSel
	UIDs       []uint32
	Accounts   []string
	Partitions []string
	QOS        []string
	Names      []string
	States     []string // long names
	// Window: jobs that existed at some time in [Start, End]: submitted
	// at or before End (0: no bound) and not ended before Start (0: no
	// bound).
	Start, End int64
	// NoSteps leaves Job.Steps empty (sacct -X), which is much cheaper.
	NoSteps bool
	// Fields names the Job fields the caller reads, by their JSON names
	// ("state", "exit_status"); a store may leave the others zero, which
	// makes reading many records several times cheaper. Empty: all. The
	// key fields (cluster, job_id, array_job_id, array_task_id) always
	// come.
	Fields []string
}

// Store is an accounting database.
type Store interface {
	// PutJobs writes records in one transaction, each replacing the
	// stored version of the same (Cluster, JobID) and its steps; a step
	// no longer in the record but started during the job's current run
	// is kept (the controller trims long step lists), steps of earlier
	// runs (before Start of a requeued job) are removed.
	PutJobs(ctx context.Context, jobs []*Job) error
	// Jobs returns the matching records ordered by (Cluster, JobID).
	Jobs(ctx context.Context, q Query) ([]*Job, error)
	// Ping reports whether the database answers.
	Ping(ctx context.Context) error
	Close() error
}

// ErrUnavailable wraps errors that mean the database cannot be reached
// now (the outbox retries; nothing is lost).
var ErrUnavailable = errors.New("accounting storage unavailable")
