package model

import "strings"

// JobState is a job's base state.
type JobState uint8

const (
	JobPending JobState = iota
	JobRunning
	JobSuspended
	JobCompleted
	JobCancelled
	JobFailed
	JobTimeout
	JobNodeFail
	JobPreempted
	JobBootFail
	JobDeadline
	JobOOM
)

var jobStateNames = [...]struct{ long, short string }{
	JobPending:   {"PENDING", "PD"},
	JobRunning:   {"RUNNING", "R"},
	JobSuspended: {"SUSPENDED", "S"},
	JobCompleted: {"COMPLETED", "CD"},
	JobCancelled: {"CANCELLED", "CA"},
	JobFailed:    {"FAILED", "F"},
	JobTimeout:   {"TIMEOUT", "TO"},
	JobNodeFail:  {"NODE_FAIL", "NF"},
	JobPreempted: {"PREEMPTED", "PR"},
	JobBootFail:  {"BOOT_FAIL", "BF"},
	JobDeadline:  {"DEADLINE", "DL"},
	JobOOM:       {"OUT_OF_MEMORY", "OOM"},
}

// String is the long name, e.g. "PENDING".
func (s JobState) String() string {
	if int(s) < len(jobStateNames) {
		return jobStateNames[s].long
	}
	return "UNKNOWN"
}

// Short is the compact code, e.g. "PD".
func (s JobState) Short() string {
	if int(s) < len(jobStateNames) {
		return jobStateNames[s].short
	}
	return "?"
}

// Final reports whether the state is an end state.
func (s JobState) Final() bool { return s >= JobCompleted }

// ParseJobState accepts a long or compact name, case-insensitively.
func ParseJobState(v string) (JobState, bool) {
	v = strings.ToUpper(strings.TrimSpace(v))
	for i, n := range jobStateNames {
		if v == n.long || v == n.short {
			return JobState(i), true
		}
	}
	return 0, false
}

// JobStateNames lists every long state name, in order.
func JobStateNames() []string {
	out := make([]string, len(jobStateNames))
	for i, n := range jobStateNames {
		out[i] = n.long
	}
	return out
}

// DisplayState is the state a user sees: COMPLETING while a job's nodes are
// being cleaned up, otherwise the base state.
func (j *Job) DisplayState() (long, short string) {
	if j.Completing {
		return "COMPLETING", "CG"
	}
	return j.State.String(), j.State.Short()
}

// Pending reasons, as Slurm names them.
const (
	ReasonNone              = "None"
	ReasonPriority          = "Priority"
	ReasonResources         = "Resources"
	ReasonDependency        = "Dependency"
	ReasonDepNeverSatisfied = "DependencyNeverSatisfied"
	ReasonBeginTime         = "BeginTime"
	ReasonHeldUser          = "JobHeldUser"
	ReasonHeldAdmin         = "JobHeldAdmin"
	ReasonPartitionTime     = "PartitionTimeLimit"
	ReasonPartitionNodes    = "PartitionNodeLimit"
	ReasonPartitionDown     = "PartitionDown"
	ReasonPartitionInactive = "PartitionInactive"
	ReasonReqNodeNotAvail   = "ReqNodeNotAvail"
	ReasonNodeDown          = "NodeDown"
	ReasonArrayTaskLimit    = "JobArrayTaskLimit"
	ReasonNonZeroExit       = "NonZeroExitCode"
	ReasonTimeLimit         = "TimeLimit"
	ReasonRaisedSignal      = "RaisedSignal"
	ReasonSystemFailure     = "SystemFailure"
	ReasonBadConstraints    = "BadConstraints"
	ReasonLaunchFailed      = "JobLaunchFailure"
	ReasonOutOfMemory       = "OutOfMemory"
	ReasonLaunchFailedHeld  = "launch failed requeued held"
	ReasonRequeuedHeld      = "job requeued in held state"
)
