package fsm

import (
	"slices"

	"github.com/drover-hpc/drover/internal/model"
)

// SpecChange is what scontrol update changes in a job's request. Specs are
// shared by the tasks of an array and never modified in place: a changed
// job gets a copy of its own (see ownSpecID).
type SpecChange struct {
	Account    *string           `json:"account,omitempty"`
	QOS        *string           `json:"qos,omitempty"`
	MinNodes   *int              `json:"min_nodes,omitempty"`
	MaxNodes   *int              `json:"max_nodes,omitempty"`
	NTasks     *int              `json:"ntasks,omitempty"`
	Dependency *model.Dependency `json:"dependency,omitempty"` // empty Raw: none
	ReqNodes   *[]string         `json:"req_nodes,omitempty"`
	ExcNodes   *[]string         `json:"exc_nodes,omitempty"`
	// GPUs replaces the GPU request; a nil *GPUReq inside drops it.
	GPUs     **model.GPUReq `json:"gpus,omitempty"`
	Throttle *int           `json:"throttle,omitempty"`
	Features *string        `json:"features,omitempty"`
	MinCPUs  *int           `json:"min_cpus_node,omitempty"`
}

// Empty reports whether c changes nothing.
func (c *SpecChange) Empty() bool {
	return c == nil || (c.Account == nil && c.QOS == nil && c.MinNodes == nil && c.MaxNodes == nil &&
		c.NTasks == nil && c.Dependency == nil && c.ReqNodes == nil && c.ExcNodes == nil &&
		c.GPUs == nil && c.Throttle == nil && c.Features == nil && c.MinCPUs == nil)
}

// Apply returns a copy of s with the change made.
func (c *SpecChange) Apply(s *model.JobSpec) *model.JobSpec {
	n := *s
	if c.Account != nil {
		n.Account = *c.Account
	}
	if c.QOS != nil {
		n.QOS = *c.QOS
	}
	if c.MinNodes != nil {
		n.MinNodes = *c.MinNodes
	}
	if c.MaxNodes != nil {
		n.MaxNodes = *c.MaxNodes
	}
	if c.NTasks != nil {
		n.NTasks = *c.NTasks
	}
	if c.Dependency != nil {
		n.Dependency = nil
		if c.Dependency.Raw != "" {
			d := *c.Dependency
			n.Dependency = &d
		}
	}
	if c.ReqNodes != nil {
		n.ReqNodes = slices.Clone(*c.ReqNodes)
	}
	if c.ExcNodes != nil {
		n.ExcNodes = slices.Clone(*c.ExcNodes)
	}
	if c.GPUs != nil {
		n.GPUs = nil
		if *c.GPUs != nil {
			g := **c.GPUs
			n.GPUs = &g
		}
	}
	if c.Features != nil {
		n.Features = *c.Features
	}
	if c.MinCPUs != nil {
		n.MinCPUsNode = *c.MinCPUs
	}
	if c.Throttle != nil && s.Array != nil {
		a := *s.Array
		a.Throttle = *c.Throttle
		n.Array = &a
	}
	return &n
}

// ownSpecID is the store key of a spec that belongs to job id alone. Job
// ids stay below 2^31 (Slurm's MaxJobId is 67,043,328), so these keys
// never meet a shared spec's key (its first job's id), and each job has
// only one.
func ownSpecID(id model.JobID) model.JobID { return id | 1<<31 }
