package model

import "strconv"

// StepID numbers the steps of a job: 0, 1, 2... for srun steps, and
// negative values for Slurm's special steps (Slurm stores them as large
// unsigned values: batch = 0xfffffffb, extern = 0xfffffffc,
// interactive = 0xfffffffa).
type StepID int32

const (
	StepBatch       StepID = -5
	StepExtern      StepID = -4
	StepInteractive StepID = -6
	// NoStep marks "the whole job" where a step may be named.
	NoStep StepID = -1
)

// String is the step id as users write it: "0", "batch", "extern".
func (s StepID) String() string {
	switch s {
	case StepBatch:
		return "batch"
	case StepExtern:
		return "extern"
	case StepInteractive:
		return "interactive"
	}
	return strconv.FormatInt(int64(s), 10)
}

// ParseStepID reads "0", "batch", "extern" or "interactive".
func ParseStepID(v string) (StepID, bool) {
	switch v {
	case "batch":
		return StepBatch, true
	case "extern":
		return StepExtern, true
	case "interactive":
		return StepInteractive, true
	}
	n, err := strconv.ParseUint(v, 10, 31)
	if err != nil {
		return 0, false
	}
	return StepID(n), true
}

// Distribution is how a step's tasks are laid out over its nodes.
type Distribution string

const (
	DistBlock  Distribution = "block"
	DistCyclic Distribution = "cyclic"
)

// StepSpec is what srun asks for when creating a step inside a job.
type StepSpec struct {
	Name         string       `json:"name,omitempty"`
	Argv         []string     `json:"argv"`
	TaskArgv     [][]string   `json:"task_argv,omitempty"` // --multi-prog: argv per rank (overrides Argv)
	Env          []string     `json:"env,omitempty"`
	WorkDir      string       `json:"work_dir,omitempty"`
	NTasks       int          `json:"ntasks"`          // Unset or >=1
	MinNodes     int          `json:"min_nodes"`       // Unset or >=1
	MaxNodes     int          `json:"max_nodes"`       // Unset or >=MinNodes
	TasksPerNode int          `json:"ntasks_per_node"` // Unset or >=1
	CPUsPerTask  int          `json:"cpus_per_task"`   // Unset or >=1
	Distribution Distribution `json:"distribution,omitempty"`
	NodeList     []string     `json:"node_list,omitempty"` // -w, expanded
	ExcNodes     []string     `json:"exc_nodes,omitempty"` // -x, expanded
	Exact        bool         `json:"exact,omitempty"`
	Overlap      bool         `json:"overlap,omitempty"`
	TimeLimit    int64        `json:"time_limit,omitempty"` // seconds; 0 = the job's
	GPUs         *GPUReq      `json:"gpus,omitempty"`       // nil = every GPU the job has on the step's nodes

	// I/O: the nodes dial IOAddr and prove themselves with IOKey. StdOut,
	// StdErr, StdIn are per-task filename patterns written on the nodes
	// instead of streamed ("" = stream). Input is "all", "none" or a rank
	// ("" = task 0).
	IOAddr  string `json:"io_addr,omitempty"`
	IOKey   string `json:"io_key,omitempty"`
	StdOut  string `json:"stdout,omitempty"`
	StdErr  string `json:"stderr,omitempty"`
	StdIn   string `json:"stdin,omitempty"`
	Input   string `json:"input,omitempty"`
	Pty     bool   `json:"pty,omitempty"`
	Label   bool   `json:"label,omitempty"`
	SrunPID int    `json:"srun_pid,omitempty"`
	// SrunHost is the address srun listens on; it becomes
	// SLURM_LAUNCH_NODE_IPADDR / SLURM_SRUN_COMM_HOST in the tasks.
	SrunHost   string `json:"srun_host,omitempty"`
	SubmitLine string `json:"submit_line,omitempty"`
}

// StepNode is a step's share of one node: the CPUs it holds there and the
// global ranks of the tasks it runs there, in local order.
type StepNode struct {
	Node  string `json:"node"`
	CPUs  int    `json:"cpus"`
	Tasks []int  `json:"tasks"`
	GPUs  Bitmap `json:"gpus,omitempty"` // GRES indices of the step's GPUs here
	// CPUIDs are the node's CPU ids the step is bound to (a subset of
	// the job's there).
	CPUIDs Bitmap `json:"cpu_ids,omitempty"`
}

// Step is the controller's record of one job step.
type Step struct {
	ID        StepID     `json:"id"`
	Spec      *StepSpec  `json:"spec,omitempty"`
	Name      string     `json:"name"`
	State     JobState   `json:"state"`
	Layout    []StepNode `json:"layout"`
	NTasks    int        `json:"ntasks"`
	StartTime int64      `json:"start_time"`
	EndTime   int64      `json:"end_time,omitempty"`
	ExitCode  int32      `json:"exit_code"`
	Signal    int32      `json:"signal"`
	NodesDone []bool     `json:"nodes_done,omitempty"` // per Layout entry
	Ending    bool       `json:"ending,omitempty"`     // cancel requested
	EndState  JobState   `json:"end_state,omitempty"`  // state to take when every node reported
	TimeLimit int64      `json:"time_limit,omitempty"`
	Usage     *Usage     `json:"usage,omitempty"` // merged over the nodes that reported
	// SuspendedSecs: how long the job was suspended while the step ran
	// (counted when a suspension ends); sacct leaves it out of the step's
	// Elapsed, as Slurm does.
	SuspendedSecs int64 `json:"suspended_secs,omitempty"`
}

// Finished reports whether every node of the step reported its end.
func (s *Step) Finished() bool { return s.State.Final() }

// NodeNames lists the step's nodes in layout order.
func (s *Step) NodeNames() []string {
	out := make([]string, len(s.Layout))
	for i, n := range s.Layout {
		out[i] = n.Node
	}
	return out
}

// LayoutOn returns the step's share of node, and its index in the layout.
func (s *Step) LayoutOn(node string) (StepNode, int, bool) {
	for i, n := range s.Layout {
		if n.Node == node {
			return n, i, true
		}
	}
	return StepNode{}, -1, false
}

// TasksPerNode lists the task count of each node, in layout order.
func (s *Step) TasksPerNode() []int {
	out := make([]int, len(s.Layout))
	for i, n := range s.Layout {
		out[i] = len(n.Tasks)
	}
	return out
}

// Clone returns a copy of s whose slices may be replaced freely.
func (s *Step) Clone() *Step {
	c := *s
	c.NodesDone = append([]bool(nil), s.NodesDone...)
	return &c
}

// DisplayID is "123.0", "123_4.batch".
func (s *Step) DisplayID(j *Job) string { return j.DisplayID() + "." + s.ID.String() }

// Step returns the job's step with id, or nil.
func (j *Job) Step(id StepID) *Step {
	for _, s := range j.Steps {
		if s.ID == id {
			return s
		}
	}
	return nil
}

// RunningSteps lists the steps not yet finished.
func (j *Job) RunningSteps() []*Step {
	var out []*Step
	for _, s := range j.Steps {
		if !s.Finished() {
			out = append(out, s)
		}
	}
	return out
}

// StepCPUsInUse sums, per node, the CPUs held by running steps that do not
// overlap.
func (j *Job) StepCPUsInUse() map[string]int {
	used := map[string]int{}
	for _, s := range j.Steps {
		if s.Finished() || (s.Spec != nil && s.Spec.Overlap) {
			continue
		}
		for _, n := range s.Layout {
			used[n.Node] += n.CPUs
		}
	}
	return used
}

// BatchStep is the batch step of a running batch job as Slurm shows it:
// one task on the batch host, holding the job's CPUs there, started with
// the job. It is nil for other jobs, and when the job records the step
// itself. Listings carry no script, so a batch job is one that srun or
// salloc did not submit (Spec.Interactive false).
func (j *Job) BatchStep() *Step {
	if j.State != JobRunning && j.State != JobSuspended || j.Completing ||
		j.Spec == nil || j.Spec.Interactive || len(j.Alloc) == 0 || j.Step(StepBatch) != nil {
		return nil
	}
	a := j.Alloc[0]
	return &Step{
		ID: StepBatch, Name: "batch", State: JobRunning, NTasks: 1, StartTime: j.StartTime,
		Layout: []StepNode{{Node: a.Node, CPUs: a.CPUs, Tasks: []int{0}}},
	}
}

// ActiveSteps lists the steps users see running: the batch step (see
// BatchStep) and the recorded steps not yet finished.
func (j *Job) ActiveSteps() []*Step {
	var out []*Step
	if b := j.BatchStep(); b != nil {
		out = append(out, b)
	}
	for _, s := range j.Steps {
		if s != nil && !s.Finished() && s.State != JobPending {
			out = append(out, s)
		}
	}
	return out
}

// Usage is what a step consumed, measured from its cgroup on each node.
// Memory figures are bytes, CPU times microseconds.
type Usage struct {
	MaxRSS     int64  `json:"max_rss"`      // highest memory peak of one node
	MaxRSSNode string `json:"max_rss_node"` // where it was
	AveRSS     int64  `json:"ave_rss"`      // mean of the sampled memory use over nodes and samples
	UserCPU    int64  `json:"user_cpu"`
	SystemCPU  int64  `json:"system_cpu"`
	MaxPids    int64  `json:"max_pids,omitempty"`
	Nodes      int    `json:"nodes"`          // how many nodes' reports are merged in
	GPUs       string `json:"gpus,omitempty"` // "node1:0,1;node2:0" GRES indices used
	// Samples counts the memory samples behind AveRSS (for merging).
	Samples int64 `json:"samples,omitempty"`
}

// TotalCPU is user plus system time.
func (u *Usage) TotalCPU() int64 { return u.UserCPU + u.SystemCPU }

// Merge folds another node's report into u.
func (u *Usage) Merge(node string, o *Usage) {
	if o == nil {
		return
	}
	if o.MaxRSS > u.MaxRSS || u.MaxRSSNode == "" {
		u.MaxRSS, u.MaxRSSNode = max(u.MaxRSS, o.MaxRSS), node
		if o.MaxRSSNode != "" {
			u.MaxRSSNode = o.MaxRSSNode
		}
	}
	if n := u.Samples + o.Samples; n > 0 {
		u.AveRSS = (u.AveRSS*u.Samples + o.AveRSS*o.Samples) / n
		u.Samples = n
	}
	u.UserCPU += o.UserCPU
	u.SystemCPU += o.SystemCPU
	u.MaxPids = max(u.MaxPids, o.MaxPids)
	u.Nodes += max(1, o.Nodes)
	if o.GPUs != "" {
		if u.GPUs != "" {
			u.GPUs += ";"
		}
		u.GPUs += o.GPUs
	}
}
