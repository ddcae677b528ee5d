package fsm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/drover-hpc/drover/internal/model"
)

// Type tags one command kind in the log. Values are persisted: never reuse.
type Type uint8

const (
	TypeSubmit Type = iota + 1
	TypeSchedule
	TypeJobEnded
	TypeCancel
	TypeControl
	TypeUpdateJob
	TypeNodeRegister
	TypeNodeDown
	TypeUpdateNodes
	TypePurge
	TypeSetConfig
	TypeCreateStep
	TypeStepEnded
	TypeCancelStep
	TypeRelease
	TypeJoinToken
	TypeAcctAck
	TypeSetAcctDB
	TypeResetStats
	TypePriorities
	TypeReservation
)

// Submit creates a job, or one record per task of an array.
type Submit struct {
	Spec      *model.JobSpec `json:"spec"`
	UID       uint32         `json:"uid"`
	GID       uint32         `json:"gid"`
	Groups    []uint32       `json:"groups,omitempty"`
	User      string         `json:"user"`
	Partition string         `json:"partition"`
	TimeLimit int64          `json:"time_limit"`
	Priority  uint32         `json:"priority"`
	Now       int64          `json:"now"`
	// MaxJobID bounds the id space; ids wrap to FirstJobID past it.
	FirstJobID model.JobID `json:"first_job_id"`
}

// SubmitResult is Apply's answer to a Submit.
type SubmitResult struct {
	JobID model.JobID
}

// StartEntry is one planned job start.
type StartEntry struct {
	Job   model.JobID       `json:"job"`
	Alloc []model.NodeAlloc `json:"alloc"`
}

// Schedule commits one scheduling cycle: starts (re-verified against the
// state at apply time), pending-reason changes and failed dependencies.
type Schedule struct {
	Starts    []StartEntry           `json:"starts,omitempty"`
	Reasons   map[model.JobID]string `json:"reasons,omitempty"`
	DepFailed []model.JobID          `json:"dep_failed,omitempty"`
	// KillDep are the DepFailed jobs to cancel (--kill-on-invalid-dep or
	// DependencyParameters=kill_invalid_depend).
	KillDep []model.JobID `json:"kill_dep,omitempty"`
	// Preempt are running jobs to end for higher-tier ones, decided in
	// the same pass as the starts.
	Preempt []PreemptEntry `json:"preempt,omitempty"`
	Now     int64          `json:"now"`
	// Planned sets pending jobs' planned start times (0 clears one).
	Planned map[model.JobID]int64 `json:"planned,omitempty"`
	// PlannedNodes are the nodes of those planned starts (a hostlist).
	PlannedNodes map[model.JobID]string `json:"planned_nodes,omitempty"`
}

// PreemptEntry is one victim: REQUEUE puts it back in the queue when it
// ends, CANCEL ends it PREEMPTED.
type PreemptEntry struct {
	Job  model.JobID `json:"job"`
	Mode string      `json:"mode"` // CANCEL, REQUEUE, SUSPEND or GANG
	For  model.JobID `json:"for,omitempty"`
}

// ScheduleResult lists the jobs that did start, and the victims whose
// preemption was committed (to be signalled on their nodes).
type ScheduleResult struct {
	Started   []model.JobID
	Preempted []model.JobID
	// Suspended are SUSPEND and GANG victims, to be frozen.
	Suspended []model.JobID
}

// JobEnded records a job's end as reported by its node.
type JobEnded struct {
	Job      model.JobID    `json:"job"`
	ExitCode int32          `json:"exit_code"`
	Signal   int32          `json:"signal"`
	State    model.JobState `json:"state,omitempty"` // override (TIMEOUT, FAILED); 0 = derive
	Reason   string         `json:"reason,omitempty"`
	Now      int64          `json:"now"`
	// StartTime is the run the report is about (0: any); an end of an
	// earlier run of a requeued job is ignored.
	StartTime int64 `json:"start_time,omitempty"`
	// Run is the run that ended (model.Job.Run; 0: any): a node that
	// comes back with an earlier run of a requeued job reports that run's
	// end, which must not end the new one.
	Run uint32 `json:"run,omitempty"`
	// Usage is the batch step's.
	Usage *model.Usage `json:"usage,omitempty"`
	// Requeue: the node could not run the job (Prolog failed); back to
	// the queue, held when Reason is ReasonLaunchFailedHeld.
	Requeue bool `json:"requeue,omitempty"`
}

// Cancel ends pending jobs at once and moves running ones to COMPLETING.
type Cancel struct {
	Jobs []model.JobID `json:"jobs"`
	By   uint32        `json:"by"`
	Now  int64         `json:"now"`
}

// CancelResult lists the running jobs whose nodes must now kill them.
type CancelResult struct {
	Terminate []model.JobID
	// Suspend and Resume: jobs whose processes are to be frozen or thawed.
	Suspend, Resume []model.JobID
}

// Control is hold, uhold, release, requeue, requeuehold, suspend or
// resume.
type Control struct {
	Jobs   []model.JobID `json:"jobs"`
	Action string        `json:"action"`
	Now    int64         `json:"now"`
	// Priorities are the priorities released jobs take (computed by the
	// service, so a release does not wait for the next PriorityCalcPeriod
	// to rank the job); a released job missing here gets 1.
	Priorities map[model.JobID]uint32 `json:"priorities,omitempty"`
}

// UpdateJob changes validated fields of pending or running jobs.
type UpdateJob struct {
	Jobs      []model.JobID `json:"jobs"`
	TimeLimit *int64        `json:"time_limit,omitempty"`
	Partition *string       `json:"partition,omitempty"`
	Name      *string       `json:"name,omitempty"`
	Comment   *string       `json:"comment,omitempty"`
	Nice      *int          `json:"nice,omitempty"`
	Priority  *uint32       `json:"priority,omitempty"`
	// BeginTime is scontrol update StartTime= (unix seconds).
	BeginTime *int64      `json:"begin_time,omitempty"`
	Spec      *SpecChange `json:"spec,omitempty"`
	Now       int64       `json:"now"`
}

// NodeRegister marks a node up with the resources its agent found.
type NodeRegister struct {
	Node     string        `json:"node"`
	CPUs     int           `json:"cpus"`
	Sockets  int           `json:"sockets"`
	Cores    int           `json:"cores"`
	Threads  int           `json:"threads"`
	Memory   int64         `json:"memory"`
	Hostname string        `json:"hostname"`
	Addr     string        `json:"addr"`
	Version  string        `json:"version"`
	BootTime int64         `json:"boot_time"`
	Running  []model.JobID `json:"running"`
	// Lost are jobs the node no longer runs; they end NODE_FAIL.
	Lost []model.JobID `json:"lost,omitempty"`
	// Requeue are jobs the node never started (or stopped with its agent):
	// they go back to PENDING and are scheduled afresh.
	Requeue []model.JobID `json:"requeue,omitempty"`
	Now     int64         `json:"now"`
	// GPUs the agent found, when HasGPUs (a heartbeat's re-registration
	// reports none and changes none).
	GPUs    []model.GPU `json:"gpus,omitempty"`
	HasGPUs bool        `json:"has_gpus,omitempty"`
}

// NodeDown marks a node down (not responding, or set by an admin); its
// jobs end NODE_FAIL.
type NodeDown struct {
	Node   string `json:"node"`
	Reason string `json:"reason"`
	Now    int64  `json:"now"`
}

// UpdateNodes is scontrol update NodeName=... State=...
type UpdateNodes struct {
	Nodes  []string `json:"nodes"`
	State  string   `json:"state"` // DRAIN, RESUME, DOWN, UNDRAIN, IDLE
	Reason string   `json:"reason,omitempty"`
	UID    uint32   `json:"uid"`
	Now    int64    `json:"now"`
	// Health: the node's health check drains it (and may lift that drain);
	// any other DRAIN is an administrator's, kept until one resumes it.
	Health bool `json:"health,omitempty"`
}

// Purge drops finished jobs older than MinJobAge.
type Purge struct {
	Jobs []model.JobID `json:"jobs"`
}

// AcctAck records that the accounting database holds every job record
// queued up to Seq (see state.OutboxEntry).
type AcctAck struct {
	Seq uint64 `json:"seq"`
}

// SetAcctDB replaces the accounting configuration (sacctmgr) if it is
// still at version Base: the service computes the new one from a
// snapshot, and a concurrent change makes it compute again.
type SetAcctDB struct {
	DB   *model.AcctDB `json:"db"`
	Base uint64        `json:"base"`
}

// ErrAcctDBChanged is SetAcctDB's answer when another change came first.
var ErrAcctDBChanged = errors.New("accounting configuration changed meanwhile")

// ResetStats zeroes the job counters (sdiag -r).
type ResetStats struct {
	Now int64 `json:"now"`
}

// SetConfig installs nodes and partitions from slurm.conf, keeping the
// runtime state of nodes that already exist.
type SetConfig struct {
	Nodes      []*model.Node      `json:"nodes"`
	Partitions []*model.Partition `json:"partitions"`
	FirstJobID model.JobID        `json:"first_job_id"`
}

var bodies = map[Type]func() any{
	TypeSubmit:       func() any { return new(Submit) },
	TypeSchedule:     func() any { return new(Schedule) },
	TypeJobEnded:     func() any { return new(JobEnded) },
	TypeCancel:       func() any { return new(Cancel) },
	TypeControl:      func() any { return new(Control) },
	TypeUpdateJob:    func() any { return new(UpdateJob) },
	TypeNodeRegister: func() any { return new(NodeRegister) },
	TypeNodeDown:     func() any { return new(NodeDown) },
	TypeUpdateNodes:  func() any { return new(UpdateNodes) },
	TypePurge:        func() any { return new(Purge) },
	TypeSetConfig:    func() any { return new(SetConfig) },
	TypeCreateStep:   func() any { return new(CreateStep) },
	TypeStepEnded:    func() any { return new(StepEnded) },
	TypeCancelStep:   func() any { return new(CancelStep) },
	TypeRelease:      func() any { return new(Release) },
	TypeJoinToken:    func() any { return new(JoinToken) },
	TypeAcctAck:      func() any { return new(AcctAck) },
	TypeSetAcctDB:    func() any { return new(SetAcctDB) },
	TypeResetStats:   func() any { return new(ResetStats) },
	TypePriorities:   func() any { return new(Priorities) },
	TypeReservation:  func() any { return new(Reservation) },
}

// Encode serialises a command for the log: one type byte, then JSON (the
// bytes json.Marshal gives). The entry is the one allocation: Marshal's
// result copied behind the type byte was two, a submission's largest
// garbage (~5 KiB each), and the collector's work grows with the queue.
func Encode(t Type, body any) ([]byte, error) {
	buf := encodeBufs.Get().(*bytes.Buffer)
	buf.Reset()
	err := json.NewEncoder(buf).Encode(body)
	var out []byte
	if err == nil {
		b := bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}) // Encoder's, not Marshal's
		out = make([]byte, 1+len(b))
		out[0] = byte(t)
		copy(out[1:], b)
	}
	if buf.Cap() <= 1<<20 { // a big one-off (a large array's) is not kept
		encodeBufs.Put(buf)
	}
	if err != nil {
		return nil, fmt.Errorf("encode command %d: %w", t, err)
	}
	return out, nil
}

var encodeBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// EquivalentAfterDecode reports whether Decode(data) would give back a body
// equivalent to the one Encode turned into data, so that the leader may
// apply that body itself (ApplyDecoded). It holds for the commands whose
// round trip the tests check field by field (Submit, the hot path), unless
// a string was not valid UTF-8: encoding/json writes such bytes as
// U+FFFD, so the replayed job would differ from the leader's. (A string
// that contains the text \ufffd itself is sent the slow way too.)
// A Group always is: it holds only the bodies of its entries that are
// (NewGroup), and decodes the others.
func EquivalentAfterDecode(t Type, data []byte) bool {
	return t == TypeGroup || t == TypeSubmit && !bytes.Contains(data, replacementEscape)
}

var replacementEscape = []byte(`\ufffd`)

// Decode parses a log entry back into its command body.
func Decode(data []byte) (Type, any, error) {
	if len(data) < 1 {
		return 0, nil, fmt.Errorf("empty command")
	}
	t := Type(data[0])
	mk, ok := bodies[t]
	if !ok {
		return t, nil, fmt.Errorf("unknown command type %d", t)
	}
	body := mk()
	if err := json.Unmarshal(data[1:], body); err != nil {
		return t, nil, fmt.Errorf("decode command %d: %w", t, err)
	}
	return t, body, nil
}

// JoinToken adds a join token, or deletes one (Delete) and every expired
// token older than Now, or spends one join of token Use for node Node
// (refused, as a whole, when the token does not allow it: two joins
// racing for a token's last use cannot both win).
type JoinToken struct {
	Token  *model.JoinToken `json:"token,omitempty"`
	Delete string           `json:"delete,omitempty"`
	Use    string           `json:"use,omitempty"`
	Node   string           `json:"node,omitempty"`
	Now    int64            `json:"now"`
}

// Priorities is one multifactor recalculation (PriorityCalcPeriod): the
// new priorities of pending jobs, and the fair-share usage decayed and
// brought up to UsageAt (nil: unchanged).
type Priorities struct {
	Jobs    map[model.JobID]uint32 `json:"jobs,omitempty"`
	Usage   map[string]float64     `json:"usage,omitempty"`
	UsageAt int64                  `json:"usage_at,omitempty"`
}
