package service

import (
	"time"

	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/sched"
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
	// MaxJobCount bounds the jobs in memory (pending, running and ended
	// within MinJobAge), MaxStepCount the steps of one job, MaxScriptSize
	// a batch script in bytes; 0 = Slurm's default.
	MaxJobCount, MaxStepCount, MaxScriptSize int
	// MaxUserJobBytes bounds the scripts, argv, environments and submit
	// lines one user's jobs in memory hold (DroverMaxUserJobBytes; 0 =
	// none): the controller keeps them in memory, where MaxJobCount jobs
	// of up to 8 MiB each would be 80 GiB.
	MaxUserJobBytes int64
	// Preempt is PreemptType, PreemptMode and PreemptExemptTime.
	Preempt sched.Preempt
	// Priority is PriorityType=priority/multifactor and its weights.
	Priority      PriorityConfig
	FirstJobID    model.JobID
	DefMemPerCPU  int64
	DefMemPerNode int64
	Nodes         []*model.Node
	Partitions    []*model.Partition
	// AccountingStorageEnforce: jobs need an association (EnforceAssoc),
	// a QOS their association allows (EnforceQOS), and wait on or are
	// refused by the limits (EnforceLimits).
	EnforceAssoc, EnforceQOS, EnforceLimits bool
	// KillInvalidDepend is DependencyParameters=kill_invalid_depend: jobs
	// whose dependency can never be satisfied are cancelled, unless they
	// asked otherwise with --kill-on-invalid-dep=no.
	KillInvalidDepend bool
	// Scheduler is SchedulerType and SchedulerParameters (backfill bounds
	// in seconds; BfInterval and SchedMinInterval pace the controller).
	Scheduler SchedulerSettings
	// EnforcePartLimits is NO (queue jobs over partition limits), ALL or
	// ANY (refuse them at submission).
	EnforcePartLimits string
	// Config is every key for scontrol show config, in order.
	Config [][2]string
}

// SchedulerSettings is what the scheduling loop takes from SchedulerType
// and SchedulerParameters. The zero value is sched/builtin.
type SchedulerSettings struct {
	Backfill                   bool
	BfWindow, BfResolution     int64 // seconds
	BfMaxJobTest, BfMaxJobUser int
	BfMaxJobArrayResv          int
	BfInterval                 time.Duration
	SchedMinInterval           time.Duration
}
