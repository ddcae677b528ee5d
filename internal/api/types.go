package api

import (
	"strings"

	"github.com/drover-hpc/drover/internal/model"
)

// JobQuery filters a job listing.
type JobQuery struct {
	IDs        []model.JobID // empty = all
	IncludeAll bool          // include finished jobs still held in memory
	// Summary asks for jobs without their long spec strings (WorkDir,
	// StdOut/StdErr/StdIn, Argv, SubmitLine, Comment, Dependency, node
	// lists): the listing formats that do not print them are much faster.
	Summary bool
	// WithSteps keeps the jobs' steps in a Summary listing.
	WithSteps bool
	// WithSpec asks for the batch script and environment too; the service
	// clears them in the jobs the caller may not read (another user's,
	// for a user who is no operator). Without it, listings leave them out:
	// transports do not encode them, and in-process callers must not show
	// them.
	WithSpec bool
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

// StepName is the step a target names ("batch", "extern", "interactive", "0"),
// or "" when it names a whole job or array task.
func (t JobTarget) StepName() string {
	i := strings.LastIndexByte(t.Raw, '.')
	if i < 0 || strings.IndexByte(t.Raw[i:], ']') >= 0 {
		return ""
	}
	return t.Raw[i+1:]
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

// BroadcastRequest is what sbcast asks for: the job's nodes dial Addr
// with Key and write Dest.
type BroadcastRequest struct {
	Job         model.JobID
	Addr, Key   string
	Dest        string
	Mode        uint32
	Force       bool
	MTime, Size int64
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
// account. FairShare is only meaningful for users.
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
	// The RPC tables are the transport's: its adapter counts calls and
	// fills them in.
	RPCByType, RPCByUser []RPCStat
}

// RPCStat is one line of sdiag's RPC tables.
type RPCStat struct {
	Name    string
	UID     uint32
	Count   uint64
	TotalUs int64
}
