package model

import "strings"

// Sentinel values shared by specs and jobs.
const (
	// Unset marks an integer request the user did not give.
	Unset = -1
	// Unlimited is a time limit without end (Slurm's INFINITE / UNLIMITED).
	Unlimited = -2
	// NoArrayTask is ArrayTaskID for a job that is not an array element.
	NoArrayTask = -1
)

// JobID is a job's numeric identifier; never reused within a cluster.
type JobID uint32

// JobSpec is everything a user asks for when submitting a job. It is built
// by package jobspec from options, #SBATCH directives and SBATCH_* variables,
// and is immutable once submitted: array tasks share one *JobSpec.
type JobSpec struct {
	Name      string   `json:"name,omitempty"`
	Partition string   `json:"partition,omitempty"` // may be a comma list
	Account   string   `json:"account,omitempty"`
	QOS       string   `json:"qos,omitempty"`
	Comment   string   `json:"comment,omitempty"`
	Script    string   `json:"script,omitempty"` // batch script text; empty for srun jobs
	Argv      []string `json:"argv,omitempty"`   // script arguments, or the srun command
	WorkDir   string   `json:"work_dir,omitempty"`
	StdOut    string   `json:"stdout,omitempty"` // filename patterns; "" = default
	StdErr    string   `json:"stderr,omitempty"`
	StdIn     string   `json:"stdin,omitempty"`
	Env       []string `json:"env,omitempty"`    // environment after --export was applied
	Export    string   `json:"export,omitempty"` // the --export value, reported as SLURM_EXPORT_ENV

	TimeLimit    int64    `json:"time_limit"`          // seconds; Unset, Unlimited or >0
	TimeMin      int64    `json:"time_min"`            // seconds; Unset or >0
	MinNodes     int      `json:"min_nodes"`           // Unset or >=1
	MaxNodes     int      `json:"max_nodes"`           // Unset or >=MinNodes
	NTasks       int      `json:"ntasks"`              // Unset or >=1
	CPUsPerTask  int      `json:"cpus_per_task"`       // Unset or >=1
	TasksPerNode int      `json:"ntasks_per_node"`     // Unset or >=1
	MemPerNode   int64    `json:"mem_per_node"`        // MiB; Unset; 0 means all of the node
	MemPerCPU    int64    `json:"mem_per_cpu"`         // MiB; Unset or >0
	ReqNodes     []string `json:"req_nodes,omitempty"` // -w, expanded
	ExcNodes     []string `json:"exc_nodes,omitempty"` // -x, expanded
	// Features is the --constraint expression (package features), as given.
	Features string `json:"features,omitempty"`
	// MinCPUsNode is --mincpus: each node gives the job at least this many CPUs.
	MinCPUsNode int     `json:"min_cpus_node,omitempty"`
	Exclusive   bool    `json:"exclusive,omitempty"`
	GPUs        *GPUReq `json:"gpus,omitempty"` // --gres=gpu, -G, --gpus-per-*
	// Reservation is --reservation: the job runs only on that
	// reservation's nodes, during its window.
	Reservation string `json:"reservation,omitempty"`

	Array      *ArraySpec  `json:"array,omitempty"`
	Dependency *Dependency `json:"dependency,omitempty"`
	BeginTime  int64       `json:"begin_time,omitempty"` // unix seconds; 0 = now
	Hold       bool        `json:"hold,omitempty"`
	Nice       int         `json:"nice,omitempty"`
	Requeue    bool        `json:"requeue,omitempty"`
	OpenMode   string      `json:"open_mode,omitempty"` // "append" or "truncate"
	// KillInvalidDep is --kill-on-invalid-dep: KillDepYes cancels the job
	// once its dependency can never be satisfied, KillDepNo keeps it
	// pending, the zero value follows DependencyParameters.
	KillInvalidDep int8 `json:"kill_invalid_dep,omitempty"`

	// Interactive is set by srun/salloc: the job runs Argv directly (srun) and
	// streams its I/O to IOAddr, proving itself with IOKey.
	Interactive bool   `json:"interactive,omitempty"`
	IOAddr      string `json:"io_addr,omitempty"`
	IOKey       string `json:"io_key,omitempty"`
	SubmitHost  string `json:"submit_host,omitempty"`
	SubmitLine  string `json:"submit_line,omitempty"`

	// Root only (--uid, --gid, --priority): run as another user or group,
	// start with a set priority. Nil: not given.
	UID      *uint32 `json:"uid,omitempty"`
	GID      *uint32 `json:"gid,omitempty"`
	Priority *uint32 `json:"priority,omitempty"`
	// Umask is the submitter's umask (SLURM_UMASK): tasks run with it and
	// their output files are created with it. Nil: the node's default.
	Umask *uint32 `json:"umask,omitempty"`
}

// NoCanceller is CancelledBy of a job the controller itself cancelled (a
// dependency that can never be satisfied): sacct shows plain CANCELLED.
const NoCanceller uint32 = 1<<32 - 1

// KillInvalidDep values; the zero value means "as slurm.conf says".
const (
	KillDepYes int8 = 1
	KillDepNo  int8 = 2
)

// ArraySpec is a parsed --array value: the task ids and the throttle.
type ArraySpec struct {
	Raw      string `json:"raw"`
	TaskIDs  []int  `json:"task_ids"` // sorted ascending, unique
	Throttle int    `json:"throttle"` // 0 = unlimited
}

// DepType is one dependency kind (after, afterany, afterok, ...).
type DepType string

const (
	DepAfter      DepType = "after"
	DepAfterAny   DepType = "afterany"
	DepAfterOK    DepType = "afterok"
	DepAfterNotOK DepType = "afternotok"
	DepAfterCorr  DepType = "aftercorr"
	DepSingleton  DepType = "singleton"
)

// DepTerm is one condition: Type on Job (an array task when Task >= 0).
type DepTerm struct {
	Type  DepType `json:"type"`
	Job   JobID   `json:"job,omitempty"`
	Task  int     `json:"task"`            // NoArrayTask for the whole job/array
	Delay int64   `json:"delay,omitempty"` // seconds, for after:id+min
}

// Dependency is a parsed --dependency: all terms must hold (AND) unless Any.
type Dependency struct {
	Raw   string    `json:"raw"`
	Terms []DepTerm `json:"terms"`
	Any   bool      `json:"any,omitempty"` // terms joined by '?'
}

// Job is the controller's record of one job (or one array task).
type Job struct {
	ID          JobID    `json:"id"`
	ArrayJobID  JobID    `json:"array_job_id,omitempty"` // 0 when not an array
	ArrayTaskID int      `json:"array_task_id"`          // NoArrayTask when not an array
	Spec        *JobSpec `json:"-"`                      // shared by all tasks of an array
	SpecID      JobID    `json:"spec_id"`                // key of Spec in the store

	UserID    uint32   `json:"uid"`
	GroupID   uint32   `json:"gid"`
	Groups    []uint32 `json:"groups,omitempty"`
	UserName  string   `json:"user"`
	Partition string   `json:"partition"` // the partition chosen (first valid of the list)

	State      JobState `json:"state"`
	Completing bool     `json:"completing,omitempty"` // ending; resources still held
	EndState   JobState `json:"end_state,omitempty"`  // state to take once completing ends
	Reason     string   `json:"reason,omitempty"`
	HoldUser   bool     `json:"hold_user,omitempty"`
	HoldAdmin  bool     `json:"hold_admin,omitempty"`
	Priority   uint32   `json:"priority"`
	// PrioritySet: an operator gave the priority (--priority, scontrol
	// update priority=); the multifactor plugin leaves it alone.
	PrioritySet bool   `json:"priority_set,omitempty"`
	Nice        int    `json:"nice,omitempty"`
	TimeLimit   int64  `json:"time_limit"` // seconds after defaults; Unlimited possible
	Name        string `json:"name"`
	Comment     string `json:"comment,omitempty"`
	Restarts    int    `json:"restarts,omitempty"`
	DepFailed   bool   `json:"dep_failed,omitempty"`
	// BeginTime, when set, replaces Spec.BeginTime for this job alone:
	// scontrol update StartTime=, or the wait Slurm imposes on a requeued
	// job before it may start again.
	BeginTime int64 `json:"begin_time,omitempty"`
	// Runs are the earlier runs of a requeued job, oldest first, each
	// recorded in accounting as a REQUEUED row (sacct -D).
	Runs []Run `json:"runs,omitempty"`

	SubmitTime   int64 `json:"submit_time"`
	EligibleTime int64 `json:"eligible_time,omitempty"`
	StartTime    int64 `json:"start_time,omitempty"`
	EndTime      int64 `json:"end_time,omitempty"`
	// PlannedStart is, while the job is pending, when the backfill
	// scheduler expects to start it (0: unknown); clients see it as the
	// pending job's StartTime, as in Slurm.
	PlannedStart int64 `json:"planned_start,omitempty"`
	// SchedNodes are, with PlannedStart, the nodes that start is planned
	// on (a hostlist; squeue --start SCHEDNODES, Slurm's sched_nodes).
	SchedNodes string `json:"sched_nodes,omitempty"`

	Alloc       []NodeAlloc `json:"alloc,omitempty"`
	ExitCode    int32       `json:"exit_code"`              // exit status (0-255)
	Signal      int32       `json:"signal"`                 // terminating signal, 0 if none
	CancelledBy uint32      `json:"cancelled_by,omitempty"` // NoCanceller: the controller
	// Preempted: this run is being ended for a higher-tier job; its end
	// requeues it at once (REQUEUE) or ends it PREEMPTED (CANCEL).
	Preempted bool `json:"preempted,omitempty"`
	// Suspended (scontrol suspend): State stays RUNNING inside the
	// controller, the processes are frozen and users see SUSPENDED.
	// SuspendTime is when this suspension began; SuspendedSecs the time
	// spent suspended before it. Run time and the time limit leave both
	// out.
	Suspended     bool  `json:"suspended,omitempty"`
	SuspendTime   int64 `json:"suspend_time,omitempty"`
	SuspendedSecs int64 `json:"suspended_secs,omitempty"`
	// SecsPreSuspend is the run time when the last suspension began.
	SecsPreSuspend int64 `json:"secs_pre_suspend,omitempty"`
	// SchedSuspended: suspended by the scheduler (PreemptMode=SUSPEND,
	// gang time slices) rather than by an operator. Its CPUs are given
	// back to its nodes while it is frozen (memory and GPUs stay, as in
	// Slurm) and the scheduler resumes it when they are free again.
	// PreemptedFor is the preemptor it made room for (0 for a gang
	// slice); SliceTime is when the scheduler last suspended or resumed
	// it.
	SchedSuspended bool  `json:"sched_suspended,omitempty"`
	PreemptedFor   JobID `json:"preempted_for,omitempty"`
	SliceTime      int64 `json:"slice_time,omitempty"`
	// SuspendsVictims: this job suspended others to start; they resume
	// when it ends.
	SuspendsVictims bool `json:"suspends_victims,omitempty"`
	// Released: the holder of an allocation (salloc, srun) gave it back
	// with ExitCode/Signal, which the node's end report must not replace.
	Released bool `json:"released,omitempty"`

	// Steps are the job's srun steps (running and finished); NextStep is
	// the id the next one gets.
	Steps    []*Step `json:"steps,omitempty"`
	NextStep StepID  `json:"next_step,omitempty"`

	// BatchUsage is what the batch script's step used, reported with the
	// job's end (the batch step has no record of its own in Steps).
	BatchUsage *Usage `json:"batch_usage,omitempty"`
}

// Run is one earlier run of a requeued job.
type Run struct {
	Submit   int64    `json:"submit"`
	Eligible int64    `json:"eligible,omitempty"`
	Start    int64    `json:"start"`
	End      int64    `json:"end"`
	Nodes    []string `json:"nodes,omitempty"`
	CPUs     int      `json:"cpus,omitempty"`
	ExitCode int32    `json:"exit_code,omitempty"`
	Signal   int32    `json:"signal,omitempty"`
	// Preempted: the run ended because it was preempted (sacct shows it
	// PREEMPTED rather than REQUEUED).
	Preempted bool `json:"preempted,omitempty"`
}

// MaxRuns bounds Job.Runs: a job requeued forever keeps its latest runs.
const MaxRuns = 64

// Begin is the time before which j may not start (0: any time).
func (j *Job) Begin() int64 {
	if j.BeginTime != 0 {
		return j.BeginTime
	}
	if j.Spec != nil {
		return j.Spec.BeginTime
	}
	return 0
}

// NodeAlloc is what a job holds on one node.
type NodeAlloc struct {
	Node string `json:"node"`
	CPUs int    `json:"cpus"`
	Mem  int64  `json:"mem"` // MiB
	// CPUIDs are the node's CPU ids the job holds (Count == CPUs); GPUs
	// the GRES indices of its GPUs there.
	CPUIDs Bitmap `json:"cpu_ids,omitempty"`
	GPUs   Bitmap `json:"gpus,omitempty"`
}

// IsArrayTask reports whether j is an element of an array job.
func (j *Job) IsArrayTask() bool { return j.ArrayTaskID != NoArrayTask }

// NodeNames lists the allocated nodes in allocation order.
func (j *Job) NodeNames() []string {
	out := make([]string, len(j.Alloc))
	for i, a := range j.Alloc {
		out[i] = a.Node
	}
	return out
}

// TotalCPUs sums the CPUs allocated over all nodes.
func (j *Job) TotalCPUs() int {
	n := 0
	for _, a := range j.Alloc {
		n += a.CPUs
	}
	return n
}

// Finished reports whether j reached a final state and released its nodes.
func (j *Job) Finished() bool { return j.State.Final() && !j.Completing }

// DisplayID is the id users see: "123" or "100_7" for an array task.
func (j *Job) DisplayID() string {
	if j.IsArrayTask() {
		return itoa(int64(j.ArrayJobID)) + "_" + itoa(int64(j.ArrayTaskID))
	}
	return itoa(int64(j.ID))
}

// Run numbers the job's current run: its restart count plus one. Each
// requeue starts a new run; nodes act only on the run assigned to them, so
// a node coming back with an earlier run never touches the new one. 0 is
// kept for "unknown" in reports from older peers.
func (j *Job) Run() uint32 { return uint32(j.Restarts) + 1 }

// BatchHost is the first allocated node, where the batch script runs.
func (j *Job) BatchHost() string {
	if len(j.Alloc) == 0 {
		return ""
	}
	return j.Alloc[0].Node
}

// ReqCPUs is the minimum CPU count the spec asks for over the whole job.
func (s *JobSpec) ReqCPUs() int {
	tasks := s.NTasks
	if tasks < 1 {
		tasks = 1
		if s.TasksPerNode > 0 {
			tasks = s.TasksPerNode * max(1, s.MinNodes)
		}
	}
	return tasks * max(1, s.CPUsPerTask)
}

// Clone returns a shallow copy of j whose slices may be replaced freely.
func (j *Job) Clone() *Job {
	c := *j
	return &c
}

func itoa(v int64) string {
	var b strings.Builder
	if v < 0 {
		b.WriteByte('-')
		v = -v
	}
	var buf [20]byte
	i := len(buf)
	for {
		i--
		buf[i] = byte('0' + v%10)
		v /= 10
		if v == 0 {
			break
		}
	}
	b.Write(buf[i:])
	return b.String()
}

// SuspendedFor is how long j has been suspended in all, up to now.
func (j *Job) SuspendedFor(now int64) int64 {
	d := j.SuspendedSecs
	if j.Suspended && now > j.SuspendTime {
		d += now - j.SuspendTime
	}
	return d
}
