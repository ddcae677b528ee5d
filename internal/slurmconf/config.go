package slurmconf

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/sched/priority"
)

// Slurm's built-in defaults for the keys Drover types.
const (
	DefaultClusterName    = "cluster"
	DefaultSlurmctldPort  = 6817
	DefaultSlurmdPort     = 6818
	DefaultStateSaveDir   = "/var/spool"
	DefaultSlurmdSpoolDir = "/var/spool/slurmd"
	DefaultSlurmdTimeout  = 300 * time.Second
	DefaultKillWait       = 30 * time.Second
	DefaultMinJobAge      = 300 * time.Second
	DefaultMaxArraySize   = 1001
	DefaultMaxJobCount    = 10000
	DefaultMaxStepCount   = 40000
	// DefaultMaxScriptSize is SchedulerParameters=max_script_size's
	// default; MaxScriptSizeCeiling keeps it under what one request may
	// carry.
	DefaultMaxScriptSize   = 4 << 20
	MaxScriptSizeCeiling   = 60 << 20
	DefaultFirstJobID      = 1
	DefaultSlurmUser       = "root"
	DefaultReturnToService = 0
	// DefaultHealthCheckNodeState runs HealthCheckProgram whatever the
	// node's state.
	DefaultHealthCheckNodeState = "ANY"
)

// Config is a parsed slurm.conf.
type Config struct {
	// File is the name of the top-level file, as given to Load or Parse.
	File string

	ClusterName     string
	ControllerHosts []ControllerHost // primary first, then backups
	SlurmctldPort   int              // first port when a range is given
	SlurmdPort      int

	StateSaveLocation string
	SlurmdSpoolDir    string
	SlurmUser         string

	SlurmdTimeout time.Duration
	KillWait      time.Duration
	MinJobAge     time.Duration
	InactiveLimit time.Duration // 0: no limit

	MaxArraySize int
	MaxJobCount  int
	// Preemption: PreemptType without "preempt/" ("none", "partition_prio",
	// "qos"), the cluster's PreemptMode (OFF, CANCEL, REQUEUE, SUSPEND; GANG
	// kept apart) and PreemptExemptTime in seconds.
	// Priority is PriorityType and its companions (multifactor).
	Priority          Priority
	PreemptType       string
	PreemptMode       string
	PreemptGang       bool
	PreemptExemptTime int64
	// PreemptParameters min_exempt_priority (0: unset) and reorder_count
	// (Slurm's default 1); SchedulerTimeSlice is the gang time slice in
	// seconds (default 30).
	PreemptMinExemptPriority int64
	PreemptReorderCount      int
	SchedulerTimeSlice       int64
	MaxStepCount             int
	MaxScriptSize            int // bytes (SchedulerParameters=max_script_size)
	FirstJobID               uint32
	ReturnToService          int // 0, 1 or 2

	// PreemptWithin: PreemptMode=WITHIN (preempt/qos: jobs of one QOS
	// preempt lower-priority jobs of the same QOS). PreemptYoungestFirst:
	// PreemptParameters=youngest_first or SchedulerParameters=
	// preempt_youngest_first (victims by start time, youngest first).
	PreemptWithin        bool
	PreemptYoungestFirst bool

	// Memory defaults and limits in MiB; 0 means unset.
	DefMemPerCPU  int64
	DefMemPerNode int64
	MaxMemPerCPU  int64
	MaxMemPerNode int64

	// Scripts run as root around jobs on the nodes, and as the user
	// around tasks (TaskProlog/TaskEpilog); PrologFlags lower-cased.
	Prolog, Epilog, TaskProlog, TaskEpilog string
	PrologFlags                            []string
	PrologEpilogTimeout                    time.Duration // 0: none set
	// HealthCheckProgram runs every HealthCheckInterval (0: never) on
	// nodes in a HealthCheckNodeState state (comma list, default ANY).
	HealthCheckProgram   string
	HealthCheckInterval  time.Duration
	HealthCheckNodeState string
	// GresTypes lists the generic resource names (gpu, mps, shard) that
	// nodes' Gres= and gres.conf may use.
	GresTypes []string

	// Scheduler is SchedulerType and SchedulerParameters.
	Scheduler Scheduler

	// Accounting selects the accounting database (AccountingStorage*).
	Accounting Accounting

	// DroverSocket is the controller's unix socket as configured; use
	// SocketPath for the effective value.
	DroverSocket string

	Nodes      []NodeConf      // one per node, in config order
	Partitions []PartitionConf // in config order

	// Raw holds every top-level key=value in the order first seen, with the
	// user's spelling. A repeated key keeps its first position and takes the
	// last value, except SlurmctldHost, whose every line matters.
	Raw []KV

	// Warnings are non-fatal findings, each "file:line: message".
	Warnings []string
}

// ControllerHost is one SlurmctldHost entry: "name" or "name(addr)".
type ControllerHost struct {
	Name string
	Addr string // empty: resolve Name
}

// KV is one raw key=value setting.
type KV struct {
	Key, Value string
}

// NodeConf is one node as configured, after DEFAULT values, hostlist
// expansion and derived values (CPUs, Sockets) are applied.
type NodeConf struct {
	Name     string
	Addr     string // defaults to Hostname
	Hostname string // defaults to Name
	Port     int    // 0: the cluster's SlurmdPort

	CPUs           int
	Boards         int
	Sockets        int // total on the node, all boards
	CoresPerSocket int
	ThreadsPerCore int
	RealMemory     int64 // MiB
	TmpDisk        int64 // MiB

	Gres     string
	Features []string
	Weight   int
	State    string // UNKNOWN, IDLE, DOWN, DRAIN, FUTURE or CLOUD

	// DetectCPUs / DetectMemory: the line gave no CPU topology / no
	// RealMemory, so the node's agent reports what it finds.
	DetectCPUs, DetectMemory bool
	Reason                   string

	Pos Pos // the NodeName line
}

// PartitionConf is one partition as configured.
type PartitionConf struct {
	Name              string
	NodesExpr         string   // as written
	Nodes             []string // expanded, in config order, no duplicates
	Default           bool
	MaxTime           int64 // seconds or model.Unlimited
	DefaultTime       int64 // seconds, model.Unlimited, or model.Unset
	State             model.PartitionState
	PriorityTier      int
	PriorityJobFactor int
	MaxNodes          int // model.Unlimited or > 0
	MinNodes          int
	AllowAccounts     []string // nil: ALL
	AllowGroups       []string // nil: ALL
	DenyAccounts      []string
	AllowQOS          []string // nil: ALL
	DenyQOS           []string
	QOS               string // the partition's QOS, whose limits its jobs also meet
	OverSubscribe     string // NO, YES[:n], FORCE[:n] or EXCLUSIVE
	PreemptMode       string // "" (the global one), OFF, CANCEL, REQUEUE, SUSPEND
	GraceTime         int64  // seconds
	// BillingWeights is TRESBillingWeights: how the partition's jobs
	// bill fair-share usage (nil: by CPUs).
	BillingWeights []priority.TRESWeight

	Pos Pos // the PartitionName line
}

// Pos is a place in a config file.
type Pos struct {
	File string
	Line int
}

func (p Pos) String() string { return fmt.Sprintf("%s:%d", p.File, p.Line) }

// ParseError is a fatal problem in a config file. Line is 0 when the
// problem concerns the file as a whole.
type ParseError struct {
	File string
	Line int
	Msg  string
}

func (e *ParseError) Error() string {
	if e.Line <= 0 {
		return e.File + ": " + e.Msg
	}
	return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
}

func perr(file string, line int, msg string) error {
	return &ParseError{File: file, Line: line, Msg: msg}
}

func newConfig(file string) *Config {
	return &Config{
		File:                file,
		SlurmctldPort:       DefaultSlurmctldPort,
		SlurmdPort:          DefaultSlurmdPort,
		StateSaveLocation:   DefaultStateSaveDir,
		SlurmdSpoolDir:      DefaultSlurmdSpoolDir,
		SlurmUser:           DefaultSlurmUser,
		SlurmdTimeout:       DefaultSlurmdTimeout,
		KillWait:            DefaultKillWait,
		Scheduler:           DefaultScheduler(),
		MinJobAge:           DefaultMinJobAge,
		MaxArraySize:        DefaultMaxArraySize,
		MaxJobCount:         DefaultMaxJobCount,
		PreemptType:         "none",
		Priority:            Priority{MaxAge: 7 * 24 * 3600, DecayHalfLife: 7 * 24 * 3600, CalcPeriod: 300},
		PreemptMode:         "OFF",
		PreemptReorderCount: 1,
		SchedulerTimeSlice:  30,
		MaxStepCount:        DefaultMaxStepCount,
		MaxScriptSize:       DefaultMaxScriptSize,
		FirstJobID:          DefaultFirstJobID,
		ReturnToService:     DefaultReturnToService,

		HealthCheckNodeState: DefaultHealthCheckNodeState,
		Accounting:           Accounting{Type: "sqlite"},
	}
}

// SocketPath is where the controller listens for local clients:
// DroverSocket when set, else drover.sock in StateSaveLocation.
//
// A Unix socket path must fit in 108 bytes: when the default would not,
// the socket lives in LongSocketDir under a name derived from the state
// directory, which the controller and every client compute alike.
func (c *Config) SocketPath() string {
	if c.DroverSocket != "" {
		return c.DroverSocket
	}
	p := filepath.Join(c.StateSaveLocation, "drover.sock")
	if len(p) < 100 {
		return p
	}
	sum := sha256.Sum256([]byte(c.StateSaveLocation))
	return filepath.Join(LongSocketDir, "ctld-"+hex.EncodeToString(sum[:8])+".sock")
}

// LongSocketDir holds controller sockets whose default path is too long.
const LongSocketDir = "/run/drover"

// Get returns the raw value of a top-level key, matched case-insensitively.
// For SlurmctldHost it returns the primary.
func (c *Config) Get(key string) (string, bool) {
	for _, kv := range c.Raw {
		if strings.EqualFold(kv.Key, key) {
			return kv.Value, true
		}
	}
	return "", false
}

// Node returns the configuration of the named node.
func (c *Config) Node(name string) (*NodeConf, bool) {
	for i := range c.Nodes {
		if c.Nodes[i].Name == name {
			return &c.Nodes[i], true
		}
	}
	return nil, false
}

// Partition returns the configuration of the named partition.
func (c *Config) Partition(name string) (*PartitionConf, bool) {
	for i := range c.Partitions {
		if c.Partitions[i].Name == name {
			return &c.Partitions[i], true
		}
	}
	return nil, false
}

// DefaultPartition returns the partition marked Default=YES, if any.
func (c *Config) DefaultPartition() (*PartitionConf, bool) {
	for i := range c.Partitions {
		if c.Partitions[i].Default {
			return &c.Partitions[i], true
		}
	}
	return nil, false
}

// Priority holds the PriorityType=priority/multifactor settings.
type Priority struct {
	Multifactor                                                           bool // PriorityType=priority/multifactor (else basic)
	WeightAge, WeightFairshare, WeightJobSize, WeightPartition, WeightQOS uint32
	MaxAge                                                                int64 // seconds
	FavorSmall                                                            bool
	SmallRelativeToTime, NoFairTree                                       bool  // PriorityFlags
	DecayHalfLife                                                         int64 // seconds
	CalcPeriod                                                            int64 // seconds
	// WeightTRES is PriorityWeightTRES (WeightTRESRaw as written, for
	// sprio -w); UsageReset PriorityUsageResetPeriod.
	WeightTRES    []priority.TRESWeight
	WeightTRESRaw string
	UsageReset    priority.ResetPeriod
	// More PriorityFlags: MAX_TRES, CALCULATE_RUNNING, DEPTH_OBLIVIOUS
	// (which implies NO_FAIR_TREE), NO_NORMAL_PART/QOS/TRES (NO_NORMAL_ALL
	// sets the three).
	MaxTRES, CalculateRunning, DepthOblivious bool
	NoNormalPart, NoNormalQOS, NoNormalTRES   bool
}

// CAPath is where the cluster CA certificate lives: clients on the
// controller's machine read it to verify the TCP port.
func (c *Config) CAPath() string {
	return filepath.Join(c.StateSaveLocation, "ca", "ca.crt")
}

// TokenPath is where the cluster token lives: DroverTokenFile, or
// cluster.token in StateSaveLocation. Here rather than in the controller's
// package so the agent, which reads it, does not depend on the controller.
func (c *Config) TokenPath() string {
	if v, ok := c.Get("DroverTokenFile"); ok && v != "" {
		return v
	}
	return filepath.Join(c.StateSaveLocation, "cluster.token")
}
