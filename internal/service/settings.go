package service

import (
	"github.com/drover-hpc/drover/internal/model"
)

// Settings is the part of slurm.conf the controller acts on.
type Settings struct {
	ClusterName    string
	ControllerHost string
	SlurmUID       uint32
	SlurmdTimeout  int64 // seconds
	KillWait       int64 // seconds
	MinJobAge      int64 // seconds
	MaxArraySize   int
	FirstJobID     model.JobID
	DefMemPerCPU   int64
	DefMemPerNode  int64
	Nodes          []*model.Node
	Partitions     []*model.Partition
	// AccountingStorageEnforce: jobs need an association (EnforceAssoc),
	// a QOS their association allows (EnforceQOS), and wait on or are
	// refused by the limits (EnforceLimits).
	EnforceAssoc, EnforceQOS, EnforceLimits bool
	// KillInvalidDepend is DependencyParameters=kill_invalid_depend: jobs
	// whose dependency can never be satisfied are cancelled, unless they
	// asked otherwise with --kill-on-invalid-dep=no.
	KillInvalidDepend bool
	// EnforcePartLimits is NO (queue jobs over partition limits), ALL or
	// ANY (refuse them at submission).
	EnforcePartLimits string
	// Config is every key for scontrol show config, in order.
	Config [][2]string
}
