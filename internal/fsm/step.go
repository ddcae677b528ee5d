package fsm

import (
	"errors"

	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/state"
)

// CreateStep adds a step to a running job with the layout the service
// planned; apply re-checks that the job still has room for it.
type CreateStep struct {
	Job    model.JobID      `json:"job"`
	Spec   *model.StepSpec  `json:"spec"`
	Layout []model.StepNode `json:"layout"`
	Now    int64            `json:"now"`
	// ExecBudget bounds the argv and environment bytes the job's running
	// steps, this one included, may hold in the replicated state (0: no
	// bound, as in entries logged before it existed, which replay as
	// they were applied). --overlap steps have no CPU bound, so without
	// it one job's steps could hold GiBs of controller memory.
	ExecBudget int64 `json:"exec_budget,omitempty"`
	// MaxRunning bounds the job's steps running at once, this one
	// included (0: no bound, as ExecBudget). Each running step's tasks
	// hold descriptors and goroutines of the agent every user's jobs on
	// the node share; --overlap steps had no bound but MaxStepCount.
	MaxRunning int `json:"max_running,omitempty"`
	// NodeTasks bounds the tasks of the job's running steps on each node
	// of the layout, this step's included: at most NodeTasks, or
	// NodeTasksPerCPU per CPU the job holds there if more (0: no bound).
	// MaxRunning alone let steps of many tasks pile onto one node.
	NodeTasks       int `json:"node_tasks,omitempty"`
	NodeTasksPerCPU int `json:"node_tasks_per_cpu,omitempty"`
	// UserNodeTasks: NodeTasks bounds an --overlap step's tasks with
	// those of every running step of its user's jobs on each node too,
	// per CPU those jobs hold there (false: no such bound, as in entries
	// logged before it). Many small jobs of one user on a node each got
	// NodeTasks of their own, all held by the one agent every user's jobs
	// there share. A step without --overlap needs CPUs of its own: its
	// job's bound it by theirs.
	UserNodeTasks bool `json:"user_node_tasks,omitempty"`
}

// CreateStepResult is the new step's id, or why there is none.
type CreateStepResult struct {
	Step model.StepID
	Err  error
}

// Errors CreateStep returns; the service maps them onto Slurm's wording.
var (
	ErrStepBusy    = errors.New("Requested nodes are busy")
	ErrJobNotReady = errors.New("Job/step already completing or completed")
	// ErrStepExecBudget: Slurm's step-limit words, with the reason.
	ErrStepExecBudget = errors.New("Step limit reached for this job: its running steps' argv and environment fill the controller's budget")
	// ErrStepsRunning: the same words, for MaxRunning and NodeTasks.
	ErrStepsRunning = errors.New("Step limit reached for this job: too many of its steps are running at once")
	// ErrUserStepsRunning: the same words, for UserNodeTasks.
	ErrUserStepsRunning = errors.New("Step limit reached for this job: its user's running steps have too many tasks on a node")
)

// StepEnded records that every task of a step ended on one node.
type StepEnded struct {
	Job      model.JobID    `json:"job"`
	Step     model.StepID   `json:"step"`
	Node     string         `json:"node"`
	ExitCode int32          `json:"exit_code"`
	Signal   int32          `json:"signal"`
	State    model.JobState `json:"state,omitempty"` // override; 0 = derive
	Now      int64          `json:"now"`
	Usage    *model.Usage   `json:"usage,omitempty"` // the node's share
	// Run is the job's run the step belongs to (0: any); step IDs start
	// again with each run, so a late end from an earlier run must not end
	// the new run's step of the same ID.
	Run uint32 `json:"run,omitempty"`
}

// CancelStep marks a running step as ending CANCELLED.
type CancelStep struct {
	Job  model.JobID  `json:"job"`
	Step model.StepID `json:"step"`
	Now  int64        `json:"now"`
}

// Release ends an allocation its holder (salloc, srun) gave back: the job
// moves to COMPLETING and ends with the holder's exit status.
type Release struct {
	Job      model.JobID `json:"job"`
	ExitCode int32       `json:"exit_code"`
	Signal   int32       `json:"signal"`
	Now      int64       `json:"now"`
}

// maxFinishedSteps bounds the finished steps a job record keeps: a script
// that runs srun in a loop must not grow the controller's memory without
// end. Running steps are always kept.
const maxFinishedSteps = 128

func applyCreateStep(txn *state.Txn, c *CreateStep) any {
	j := txn.Snapshot().Job(c.Job)
	if j == nil || j.State != model.JobRunning || j.Completing {
		return CreateStepResult{Err: ErrJobNotReady}
	}
	if c.MaxRunning > 0 {
		n := 1
		for _, st := range j.Steps {
			if !st.Finished() {
				n++
			}
		}
		if n > c.MaxRunning {
			return CreateStepResult{Err: ErrStepsRunning}
		}
	}
	if c.NodeTasks > 0 && tooManyTasks(j, c) {
		return CreateStepResult{Err: ErrStepsRunning}
	}
	if c.NodeTasks > 0 && c.UserNodeTasks && c.Spec != nil && c.Spec.Overlap && tooManyUserTasks(txn.Snapshot(), j, c) {
		return CreateStepResult{Err: ErrUserStepsRunning}
	}
	if c.ExecBudget > 0 {
		held := state.StepExecBytes(c.Spec)
		for _, st := range j.RunningSteps() {
			held += state.StepExecBytes(st.Spec)
		}
		if held > c.ExecBudget {
			return CreateStepResult{Err: ErrStepExecBudget}
		}
	}
	overlap := c.Spec != nil && c.Spec.Overlap
	if !overlap {
		used := j.StepCPUsInUse()
		for _, n := range c.Layout {
			if used[n.Node]+n.CPUs > allocCPUs(j, n.Node) {
				return CreateStepResult{Err: ErrStepBusy}
			}
		}
		// The layout chose CPU ids and GPUs on an older snapshot: a step
		// committed meanwhile may hold them (two sruns at once). Busy:
		// srun asks again and gets a layout from the newer state.
		if idsTaken(j, c) {
			return CreateStepResult{Err: ErrStepBusy}
		}
	}
	j = j.Clone()
	id := j.NextStep
	ntasks := 0
	for _, n := range c.Layout {
		ntasks += len(n.Tasks)
	}
	name := ""
	var limit int64
	if c.Spec != nil {
		name, limit = c.Spec.Name, c.Spec.TimeLimit
	}
	st := &model.Step{
		ID: id, Spec: c.Spec, Name: name, State: model.JobRunning, Layout: c.Layout, NTasks: ntasks,
		StartTime: c.Now, NodesDone: make([]bool, len(c.Layout)), TimeLimit: limit,
	}
	j.Steps = append(trimSteps(j.Steps), st)
	j.NextStep = id + 1
	txn.PutJob(j)
	return CreateStepResult{Step: id}
}

// trimSteps returns a copy of steps without the oldest finished ones
// beyond maxFinishedSteps.
func trimSteps(steps []*model.Step) []*model.Step {
	finished := 0
	for _, s := range steps {
		if s.Finished() {
			finished++
		}
	}
	drop := finished - maxFinishedSteps + 1
	out := make([]*model.Step, 0, len(steps)+1)
	for _, s := range steps {
		if drop > 0 && s.Finished() {
			drop--
			continue
		}
		out = append(out, s)
	}
	return out
}

// tooManyTasks reports whether c's step would take the tasks of j's
// running steps on one of its nodes past c's bound.
func tooManyTasks(j *model.Job, c *CreateStep) bool {
	for _, n := range c.Layout {
		tasks := len(n.Tasks)
		for _, st := range j.Steps {
			if st.Finished() {
				continue
			}
			for _, l := range st.Layout {
				if l.Node == n.Node {
					tasks += len(l.Tasks)
				}
			}
		}
		if tasks > max(c.NodeTasks, c.NodeTasksPerCPU*allocCPUs(j, n.Node)) {
			return true
		}
	}
	return false
}

// tooManyUserTasks reports whether c's step would take the tasks of the
// running steps of j's user's jobs on one of its nodes past c's bound,
// per CPU those jobs hold there. One walk over the jobs holding nodes.
func tooManyUserTasks(snap *state.Snapshot, j *model.Job, c *CreateStep) bool {
	type held struct{ tasks, cpus int }
	on := make(map[string]*held, len(c.Layout))
	for _, n := range c.Layout {
		on[n.Node] = &held{tasks: len(n.Tasks)}
	}
	snap.EachAllocated(func(o *model.Job) bool {
		if o.UserID != j.UserID {
			return true
		}
		for _, a := range o.Alloc {
			if h := on[a.Node]; h != nil {
				h.cpus += a.CPUs
			}
		}
		for _, st := range o.Steps {
			if st.Finished() {
				continue
			}
			for _, l := range st.Layout {
				if h := on[l.Node]; h != nil {
					h.tasks += len(l.Tasks)
				}
			}
		}
		return true
	})
	for _, h := range on {
		if h.tasks > max(c.NodeTasks, c.NodeTasksPerCPU*h.cpus) {
			return true
		}
	}
	return false
}

func allocCPUs(j *model.Job, node string) int {
	for _, a := range j.Alloc {
		if a.Node == node {
			return a.CPUs
		}
	}
	return 0
}

// withStep returns a copy of j whose step id is replaced by fn's result.
func withStep(j *model.Job, id model.StepID, fn func(*model.Step) bool) *model.Job {
	for i, s := range j.Steps {
		if s.ID != id {
			continue
		}
		s = s.Clone()
		if !fn(s) {
			return nil
		}
		j = j.Clone()
		j.Steps = append([]*model.Step(nil), j.Steps...)
		j.Steps[i] = s
		return j
	}
	return nil
}

func applyStepEnded(txn *state.Txn, c *StepEnded) {
	j := txn.Snapshot().Job(c.Job)
	if j == nil || (c.Run != 0 && c.Run != j.Run()) {
		return
	}
	j = withStep(j, c.Step, func(s *model.Step) bool {
		_, i, ok := s.LayoutOn(c.Node)
		if !ok || s.Finished() || s.NodesDone[i] {
			return false
		}
		s.NodesDone[i] = true
		if c.Usage != nil {
			u := model.Usage{}
			if s.Usage != nil {
				u = *s.Usage
			}
			u.Merge(c.Node, c.Usage)
			s.Usage = &u
		}
		if c.Signal != 0 && s.Signal == 0 && s.ExitCode == 0 {
			s.Signal = c.Signal
		}
		if c.ExitCode > s.ExitCode {
			s.ExitCode, s.Signal = c.ExitCode, c.Signal
		}
		if c.State != 0 && s.EndState == 0 {
			s.EndState = c.State
		}
		for _, done := range s.NodesDone {
			if !done {
				return true
			}
		}
		finishStep(s, c.Now)
		return true
	})
	if j != nil {
		txn.PutJob(j)
	}
}

// finishStep gives a step whose nodes all reported its final state.
func finishStep(s *model.Step, now int64) {
	switch {
	case s.EndState != 0:
		s.State = s.EndState
	case s.ExitCode == 0 && s.Signal == 0:
		s.State = model.JobCompleted
	default:
		s.State = model.JobFailed
	}
	s.EndTime = now
	shedEnv(s)
}

// shedEnv drops a finished step's environment and --multi-prog argv (up
// to MaxExecBytes each) from the replicated record: no command shows them
// and nothing relaunches a finished step, while up to maxFinishedSteps of
// them per job would otherwise hold controller memory (Slurm keeps a
// step's environment only on its nodes). Running steps keep theirs: an
// agent's relaunch after a failover reads them. s must be a clone; its
// spec is copied, never changed in place, as older snapshots share it.
func shedEnv(s *model.Step) {
	if s.Spec == nil || (s.Spec.Env == nil && s.Spec.TaskArgv == nil) {
		return
	}
	sp := *s.Spec
	sp.Env, sp.TaskArgv = nil, nil
	s.Spec = &sp
}

func applyCancelStep(txn *state.Txn, c *CancelStep) any {
	j := txn.Snapshot().Job(c.Job)
	if j == nil {
		return ErrJobNotReady
	}
	j = withStep(j, c.Step, func(s *model.Step) bool {
		if s.Finished() || s.Ending {
			return false
		}
		s.Ending, s.EndState = true, model.JobCancelled
		return true
	})
	if j == nil {
		return ErrJobNotReady
	}
	txn.PutJob(j)
	return nil
}

func applyRelease(txn *state.Txn, c *Release) any {
	j := txn.Snapshot().Job(c.Job)
	if j == nil || j.State != model.JobRunning || j.Completing {
		return ErrJobNotReady
	}
	j = j.Clone()
	j.Completing, j.EndState = true, model.JobCompleted
	if c.ExitCode != 0 || c.Signal != 0 {
		j.EndState = model.JobFailed
	}
	j.ExitCode, j.Signal, j.Released = c.ExitCode, c.Signal, true
	txn.PutJob(j)
	return nil
}

// endSteps closes every running step of a job that left RUNNING: they end
// as the job did (CANCELLED, NODE_FAIL, TIMEOUT...), or COMPLETED/CANCELLED
// when the job completed under them.
func endSteps(j *model.Job, now int64) {
	if len(j.RunningSteps()) == 0 {
		return
	}
	state := j.State
	if state == model.JobCompleted || state == model.JobFailed {
		state = model.JobCancelled
	}
	steps := make([]*model.Step, len(j.Steps))
	for i, s := range j.Steps {
		if !s.Finished() {
			s = s.Clone()
			s.State, s.EndTime = state, now
			if s.Ending {
				s.State = model.JobCancelled
			}
			shedEnv(s)
		}
		steps[i] = s
	}
	j.Steps = steps
}

// idsTaken reports whether a new step's CPU ids or GPUs are held by a
// running step that does not share (--overlap) them.
func idsTaken(j *model.Job, c *CreateStep) bool {
	wantsGPUs := c.Spec != nil && c.Spec.GPUs.Any()
	for _, st := range j.Steps {
		if st == nil || st.Finished() || (st.Spec != nil && st.Spec.Overlap) {
			continue
		}
		stGPUs := st.Spec != nil && st.Spec.GPUs.Any()
		for _, n := range c.Layout {
			held, _, ok := st.LayoutOn(n.Node)
			if !ok {
				continue
			}
			if n.CPUIDs.Intersects(held.CPUIDs) || (wantsGPUs && stGPUs && n.GPUs.Intersects(held.GPUs)) {
				return true
			}
		}
	}
	return false
}
