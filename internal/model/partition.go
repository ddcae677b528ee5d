package model

import (
	"strconv"
	"strings"
)

// PartitionState is UP, DOWN, DRAIN or INACTIVE.
type PartitionState uint8

const (
	PartUp PartitionState = iota
	PartDown
	PartDrain
	PartInactive
)

func (s PartitionState) String() string {
	switch s {
	case PartDown:
		return "DOWN"
	case PartDrain:
		return "DRAIN"
	case PartInactive:
		return "INACTIVE"
	}
	return "UP"
}

// Partition is a named set of nodes with limits.
type Partition struct {
	Name              string         `json:"name"`
	Nodes             []string       `json:"nodes"` // expanded, in config order
	NodesExpr         string         `json:"nodes_expr"`
	Default           bool           `json:"default,omitempty"`
	MaxTime           int64          `json:"max_time"`     // seconds or Unlimited
	DefaultTime       int64          `json:"default_time"` // seconds, Unset for MaxTime
	State             PartitionState `json:"state"`
	PriorityTier      int            `json:"priority_tier"`
	PriorityJobFactor int            `json:"priority_job_factor"`
	MaxNodes          int            `json:"max_nodes"` // Unlimited or >0
	MinNodes          int            `json:"min_nodes"`
	AllowAccounts     []string       `json:"allow_accounts,omitempty"` // nil = ALL
	AllowGroups       []string       `json:"allow_groups,omitempty"`   // nil = ALL
	DenyAccounts      []string       `json:"deny_accounts,omitempty"`
	AllowQOS          []string       `json:"allow_qos,omitempty"` // nil = ALL
	DenyQOS           []string       `json:"deny_qos,omitempty"`
	QOS               string         `json:"qos,omitempty"` // the partition's QOS: its limits apply too
	OverSubscribe     string         `json:"oversubscribe,omitempty"`
	// PreemptMode is how this partition's jobs are preempted (OFF, CANCEL,
	// REQUEUE, SUSPEND); "" = the cluster's PreemptMode. GraceTime is the
	// seconds between SIGTERM and SIGKILL for a preempted job.
	PreemptMode string `json:"preempt_mode,omitempty"`
	GraceTime   int64  `json:"grace_time,omitempty"`
}

// HasNode reports whether name belongs to the partition.
func (p *Partition) HasNode(name string) bool {
	for _, n := range p.Nodes {
		if n == name {
			return true
		}
	}
	return false
}

// GangShare is how many jobs may share each CPU of the partition by time
// slices (OverSubscribe=FORCE[:N]; FORCE alone is 4, as in Slurm), or 0
// when its CPUs are not shared.
func (p *Partition) GangShare() int {
	mode, count, ok := strings.Cut(strings.ToUpper(p.OverSubscribe), ":")
	if mode != "FORCE" {
		return 0
	}
	if !ok {
		return 4
	}
	n, err := strconv.Atoi(count)
	if err != nil || n < 1 {
		return 0
	}
	return n
}
