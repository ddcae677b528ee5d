// Package nodemsg is the node protocol as the controller speaks it: typed
// messages between the controller and a node's agent, in model types.
// The node protocol adapter (internal/nodeproto) carries them over the
// agent's gRPC stream and owns their wire form; the controller never sees
// protobuf. Only the model may be imported here.
package nodemsg

import "github.com/drover-hpc/drover/internal/model"

// Stream is one agent's connection: Recv yields what the agent says,
// Send delivers the controller's messages. Recv returns io.EOF when the
// agent hangs up.
type Stream interface {
	Send(ToNode) error
	Recv() (FromNode, error)
}

// FromNode is a message of an agent: one of the pointer types below whose
// names its method lists.
type FromNode interface{ fromNode() }

// ToNode is a message to an agent.
type ToNode interface{ toNode() }

// Runs pairs jobs an agent holds with the run of each it holds (run 0:
// an older agent that did not say).
type Runs map[model.JobID]uint32

// Register is an agent's first message: the node it is, its hardware,
// and what it still runs after a restart.
type Register struct {
	Node                 string
	CPUs, Sockets, Cores int
	Threads              int
	Memory               int64
	Hostname, Version    string
	BootTime             int64
	GPUs                 []model.GPU
	Running              []model.JobID // in the order the agent listed them
	Runs                 Runs          // Running with their runs
	Ended                []model.JobID // ended, end not yet confirmed: a JobEnded follows
	RunningSteps         []string      // "job.step" with tasks on the node
}

// Heartbeat is an agent's periodic word, with the jobs it runs.
type Heartbeat struct{ Runs Runs }

// JobStarted confirms a launch.
type JobStarted struct {
	Job model.JobID
	Run uint32 // 0: an older agent, the run it was sent
}

// JobEnded reports that a job's batch script (or allocation) ended.
type JobEnded struct {
	Job                model.JobID
	ExitCode, Signal   int32
	State              model.JobState // 0: derive from the exit status
	Reason             string
	EndTime, StartTime int64
	Usage              *model.Usage
	Requeue            bool
	Run                uint32
}

// StepEnded reports that a step's tasks on the node ended.
type StepEnded struct {
	Job              model.JobID
	Step             model.StepID
	ExitCode, Signal int32
	State            model.JobState // 0: derive from the exit status
	EndTime          int64
	Usage            *model.Usage
	Run              uint32
}

// StepStat is one node's share of a running step; Usage nil and NTasks 0
// is a node's "nothing here".
type StepStat struct {
	Job    model.JobID
	Step   model.StepID
	Node   string
	NTasks int
	Pids   []int
	Usage  *model.Usage
}

// StatReply answers a StatRequest.
type StatReply struct {
	RequestID uint64
	Steps     []StepStat
}

// NodeHealth is the node's own health verdict; Sticky failures (a failed
// Prolog) only an administrator clears.
type NodeHealth struct {
	Healthy bool
	Reason  string
	Sticky  bool
}

func (*Register) fromNode()   {}
func (*Heartbeat) fromNode()  {}
func (*JobStarted) fromNode() {}
func (*JobEnded) fromNode()   {}
func (*StepEnded) fromNode()  {}
func (*StatReply) fromNode()  {}
func (*NodeHealth) fromNode() {}

// Registered answers a registration: the runs the node is assigned (it
// ends any other it holds).
type Registered struct {
	Cluster  string
	KillWait int64
	Expected []JobRun
	// AcksReports: this controller confirms JobStarted and StepEnded
	// (ReportAck), so the agent resends them until it does.
	AcksReports bool
	// Suspended are the Expected jobs held suspended; the node freezes
	// them and thaws the others (a suspend or resume sent while it was
	// away reached nobody).
	Suspended []model.JobID
}

// JobRun is one run of a job; in Registered, with its time limit now
// (an update sent while the node was away reached nobody).
type JobRun struct {
	Job   model.JobID
	Run   uint32
	Limit int64
}

// Launch starts a job's batch script (or allocation) on its batch host;
// the whole job goes, script and environment included.
type Launch struct {
	Job      *model.Job
	Cluster  string
	KillWait int64
}

// SignalJob signals, terminates, suspends or resumes a job's processes on
// the node.
type SignalJob struct {
	Job       model.JobID
	Signal    int
	Terminate bool // SIGTERM, then SIGKILL after KillWait
	BatchOnly bool
	StepsOnly bool
	Message   string
	Run       uint32 // only this run; 0: whichever runs
	Suspend   bool
	Resume    bool
}

// TimeLimit tells a running job's nodes its new time limit in seconds
// (model.Unlimited for none), which the agents enforce.
type TimeLimit struct {
	Job   model.JobID
	Run   uint32
	Limit int64
}

// EndAck confirms a JobEnded (Run 0: any run).
type EndAck struct {
	Job model.JobID
	Run uint32
}

// ReportAck confirms an agent's JobStarted (Started) or StepEnded.
type ReportAck struct {
	Job     model.JobID
	Step    model.StepID
	Run     uint32
	Started bool
}

// LaunchStep starts a step's tasks on the node; Job is what the node
// needs of the job (not its script, environment or other steps).
type LaunchStep struct {
	Job      *model.Job
	Step     *model.Step
	Cluster  string
	KillWait int64
}

// SignalStep signals or terminates a step's tasks.
type SignalStep struct {
	Job       model.JobID
	Step      model.StepID
	Signal    int
	Terminate bool
}

// AttachIO makes a step's tasks dial an attaching client (sattach).
type AttachIO struct {
	Job       model.JobID
	Step      model.StepID
	Addr, Key string
}

// FetchFile makes the node fetch a file from an sbcast and write it as
// the job's user.
type FetchFile struct {
	Job       *model.Job
	Addr, Key string
	Dest      string
	Mode      uint32
	Force     bool
	MTime     int64
}

// StatRequest asks for the usage of a job's running steps (one step when
// HasStep).
type StatRequest struct {
	RequestID uint64
	Job       model.JobID
	Step      model.StepID
	HasStep   bool
}

// Reconfigure tells the node that scontrol reconfigure ran: its agent
// reads its configuration again and sends a Register with what it finds
// on the same stream (no reconciliation of its jobs: the stream never
// broke). SlurmConf is the controller's slurm.conf, for a node that runs
// on the copy its join brought.
type Reconfigure struct{ SlurmConf string }

func (*Reconfigure) toNode() {}

func (*Registered) toNode()  {}
func (*Launch) toNode()      {}
func (*SignalJob) toNode()   {}
func (*EndAck) toNode()      {}
func (*LaunchStep) toNode()  {}
func (*SignalStep) toNode()  {}
func (*AttachIO) toNode()    {}
func (*FetchFile) toNode()   {}
func (*StatRequest) toNode() {}
func (*ReportAck) toNode()   {}
func (*TimeLimit) toNode()   {}
