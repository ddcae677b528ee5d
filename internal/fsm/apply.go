package fsm

import (
	"fmt"
	"log/slog"
	"slices"
	"unique"

	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/state"
)

// FSM applies commands to a state store.
type FSM struct {
	store *state.Store
	log   *slog.Logger
}

// New returns an FSM over store.
func New(store *state.Store, log *slog.Logger) *FSM {
	if log == nil {
		log = slog.Default()
	}
	return &FSM{store: store, log: log}
}

// Store is the state the FSM writes.
func (f *FSM) Store() *state.Store { return f.store }

// Apply decodes and applies one log entry. It returns the command's result
// or an error value; a malformed entry is logged and skipped, never fatal,
// so one bad entry cannot wedge every replica.
func (f *FSM) Apply(index uint64, data []byte) any {
	t, body, err := Decode(data)
	if err != nil {
		f.log.Error("skipping undecodable log entry", "index", index, "err", err)
		return err
	}
	return f.ApplyDecoded(index, t, body)
}

// ApplyDecoded applies one log entry whose body the caller already holds:
// the leader, which has just encoded it, skips decoding its own bytes.
// body must be what Decode would return for the entry's data
// (EquivalentAfterDecode says when that holds); followers and a replay
// after a restart decode the same entry, so they reach the same state.
// The FSM may keep body (and what it points to) in the state: the caller
// must not touch it afterwards.
func (f *FSM) ApplyDecoded(index uint64, t Type, body any) any {
	txn := f.store.Begin()
	res := f.apply(txn, t, body)
	txn.Commit(index)
	return res
}

func (f *FSM) apply(txn *state.Txn, t Type, body any) any {
	switch c := body.(type) {
	case *Submit:
		return applySubmit(txn, c)
	case *Schedule:
		return applySchedule(txn, c)
	case *JobEnded:
		return applyJobEnded(txn, c)
	case *Cancel:
		return applyCancel(txn, c)
	case *Control:
		return applyControl(txn, c)
	case *UpdateJob:
		applyUpdateJob(txn, c)
	case *NodeRegister:
		applyNodeRegister(txn, c)
	case *NodeDown:
		applyNodeDown(txn, c)
	case *UpdateNodes:
		return applyUpdateNodes(txn, c)
	case *Purge:
		for _, id := range c.Jobs {
			// A job whose record the accounting database has not taken
			// yet stays until it has.
			if j := txn.Snapshot().Job(id); j != nil && j.Finished() && !txn.Snapshot().InOutbox(id) {
				txn.DeleteJob(id)
			}
		}
	case *SetConfig:
		applySetConfig(txn, c)
	case *Priorities:
		applyPriorities(txn, c)
	case *ResetStats:
		txn.SetStats(state.JobStats{Since: c.Now})
	case *AcctAck:
		txn.AckOutbox(c.Seq)
	case *SetAcctDB:
		if _, ver := txn.Snapshot().AcctDB(); ver != c.Base {
			return ErrAcctDBChanged
		}
		txn.SetAcctDB(c.DB, c.Base+1)
	case *CreateStep:
		return applyCreateStep(txn, c)
	case *StepEnded:
		applyStepEnded(txn, c)
	case *CancelStep:
		return applyCancelStep(txn, c)
	case *Release:
		return applyRelease(txn, c)
	case *JoinToken:
		return applyJoinToken(txn, c)
	case *Slice:
		return applySlice(txn, c)
	case *Reservation:
		return applyReservation(txn, c)
	case *Group:
		return f.applyGroup(txn, c)
	default:
		return fmt.Errorf("unhandled command type %d", t)
	}
	return nil
}

// intern shares the strings of specs submitted from one shell: most jobs
// carry the same environment and often the same script, and 10,000 copies
// of a 3 KiB environment would dominate the controller's memory.
func intern(s *model.JobSpec) {
	for i, e := range s.Env {
		s.Env[i] = unique.Make(e).Value()
	}
	s.Script = unique.Make(s.Script).Value()
	s.WorkDir = unique.Make(s.WorkDir).Value()
	s.SubmitLine = unique.Make(s.SubmitLine).Value()
}

func applySubmit(txn *state.Txn, c *Submit) any {
	c.Spec = shareSpec(c.Spec)
	snap := txn.Snapshot()
	first := snap.NextJobID
	base := &model.Job{
		ArrayTaskID: model.NoArrayTask, Spec: c.Spec, SpecID: first,
		UserID: c.UID, GroupID: c.GID, Groups: c.Groups, UserName: c.User, Partition: c.Partition,
		State: model.JobPending, Reason: model.ReasonNone, Priority: c.Priority, Nice: c.Spec.Nice, PrioritySet: c.Spec.Priority != nil,
		TimeLimit: c.TimeLimit, Name: c.Spec.Name, Comment: c.Spec.Comment, SubmitTime: c.Now,
		HoldUser: c.Spec.Hold,
	}
	switch {
	case base.HoldUser:
		base.Reason, base.Priority = model.ReasonHeldUser, 0
	case c.Spec.Dependency != nil:
		base.Reason = model.ReasonDependency
	case c.Spec.BeginTime > c.Now:
		base.Reason = model.ReasonBeginTime
	}
	if c.Spec.BeginTime <= c.Now && c.Spec.Dependency == nil {
		base.EligibleTime = c.Now
	}
	if a := c.Spec.Array; a != nil && len(a.TaskIDs) > 0 {
		for i, task := range a.TaskIDs {
			j := base.Clone()
			j.ID = first + model.JobID(i)
			j.ArrayJobID, j.ArrayTaskID = first, task
			txn.PutJob(j)
		}
		txn.SetNextJobID(first + model.JobID(len(a.TaskIDs)))
	} else {
		base.ID = first
		txn.PutJob(base)
		txn.SetNextJobID(first + 1)
	}
	return SubmitResult{JobID: first}
}

func applySchedule(txn *state.Txn, c *Schedule) any {
	snap := txn.Snapshot()
	var res ScheduleResult
	for _, st := range c.Starts {
		j := snap.Job(st.Job)
		if j == nil || j.State != model.JobPending || j.HoldUser || j.HoldAdmin || len(st.Alloc) == 0 {
			continue
		}
		if !allocFits(snap, st.Alloc) || !resvPermits(snap, j, st.Alloc, c.Now) {
			continue
		}
		for _, a := range st.Alloc {
			n := snap.Node(a.Node).Clone()
			n.AllocCPUs += a.CPUs
			n.AllocMem += a.Mem
			n.AllocCores = n.AllocCores.Or(a.CPUIDs)
			n.AllocGPUs = n.AllocGPUs.Or(a.GPUs)
			txn.PutNode(n)
		}
		j = j.Clone()
		j.State, j.StartTime, j.Alloc, j.Reason = model.JobRunning, c.Now, st.Alloc, model.ReasonNone
		j.PlannedStart, j.SchedNodes = 0, ""
		if j.EligibleTime == 0 {
			j.EligibleTime = c.Now
		}
		txn.PutJob(j)
		res.Started = append(res.Started, j.ID)
	}
	for id, reason := range c.Reasons {
		if j := snap.Job(id); j != nil && j.State == model.JobPending && j.Reason != reason {
			j = j.Clone()
			j.Reason = reason
			txn.PutJob(j)
		}
	}
	for id, t := range c.Planned {
		nodes := c.PlannedNodes[id]
		if t == 0 {
			nodes = ""
		}
		if j := snap.Job(id); j != nil && j.State == model.JobPending && (j.PlannedStart != t || j.SchedNodes != nodes) {
			j = j.Clone()
			j.PlannedStart, j.SchedNodes = t, nodes
			txn.PutJob(j)
		}
	}
	for _, id := range c.DepFailed {
		if j := snap.Job(id); j != nil && j.State == model.JobPending {
			j = j.Clone()
			j.DepFailed, j.Reason = true, model.ReasonDepNeverSatisfied
			txn.PutJob(j)
		}
	}
	for _, e := range c.Preempt {
		j := snap.Job(e.Job)
		if j == nil || j.State != model.JobRunning || j.Completing {
			continue
		}
		if e.Mode == "SUSPEND" || e.Mode == "GANG" {
			if suspendVictim(txn, j, e, c.Now) {
				res.Suspended = append(res.Suspended, j.ID)
			}
			continue
		}
		j = j.Clone()
		j.Completing, j.Preempted, j.PreemptedFor = true, true, e.For
		j.EndState = model.JobPending
		if e.Mode == "CANCEL" || (j.Spec != nil && !j.Spec.Requeue) {
			// A --no-requeue job cannot go back: it ends PREEMPTED.
			j.EndState = model.JobPreempted
		}
		txn.PutJob(j)
		res.Preempted = append(res.Preempted, j.ID)
	}
	for _, id := range c.KillDep {
		if j := snap.Job(id); j != nil && j.State == model.JobPending {
			j = j.Clone()
			j.DepFailed, j.Reason = true, model.ReasonDepNeverSatisfied
			j.State, j.EndTime, j.CancelledBy = model.JobCancelled, c.Now, model.NoCanceller
			txn.PutJob(j)
		}
	}
	return res
}

// allocFits re-verifies a planned allocation against the newest state: the
// plan was computed on an older snapshot.
func allocFits(snap *state.Snapshot, alloc []model.NodeAlloc) bool {
	for _, a := range alloc {
		if n := snap.Node(a.Node); n == nil || !n.CanTake(a) {
			return false
		}
	}
	return true
}

// release gives a job's resources back to its nodes.
func release(txn *state.Txn, j *model.Job) {
	snap := txn.Snapshot()
	for _, a := range j.Alloc {
		n := snap.Node(a.Node)
		if n == nil {
			continue
		}
		n = n.Clone()
		if !j.SchedSuspended { // a suspended job's CPUs are already back
			n.AllocCPUs = max(0, n.AllocCPUs-a.CPUs)
			n.AllocCores = n.AllocCores.AndNot(a.CPUIDs)
		}
		n.AllocMem = max(0, n.AllocMem-a.Mem)
		n.AllocGPUs = n.AllocGPUs.AndNot(a.GPUs)
		txn.PutNode(n)
	}
}

// applyJobEnded returns JobEndedResult: whether the report ended the job's
// current run.
func applyJobEnded(txn *state.Txn, c *JobEnded) any {
	j := txn.Snapshot().Job(c.Job)
	if j == nil || j.State != model.JobRunning || (c.StartTime != 0 && c.StartTime != j.StartTime) ||
		(c.Run != 0 && c.Run != j.Run()) {
		return JobEndedResult{} // duplicate or late report: already final, or of an earlier run
	}
	release(txn, j)
	j = j.Clone()
	unsuspend(j, c.Now)
	if !j.Released {
		j.ExitCode, j.Signal = c.ExitCode, c.Signal
	}
	j.EndTime = c.Now
	if c.Usage != nil {
		j.BatchUsage = c.Usage
	}
	switch {
	case j.Completing && j.Preempted && j.EndState == model.JobPending:
		// Preempted and requeued: eligible again at once, but it lets its
		// preemptor start first (sched waitsForPreemptor).
		preemptor := j.PreemptedFor
		requeue(j, c.Now)
		j.PreemptedFor = preemptor
	case j.Completing && j.EndState == model.JobPending: // requeue
		requeueLater(j, c.Now)
	case j.Completing && j.EndState == model.JobPreempted:
		j.State, j.Reason = model.JobPreempted, model.ReasonNone
		if j.Signal == 0 && j.ExitCode == 0 {
			j.Signal = 15 // Slurm reports 0:15
		}
	case j.Completing && j.Released && c.State == model.JobTimeout:
		// srun or salloc gave the allocation back because its node ended
		// it at the time limit (the steps died of it): the job timed out,
		// whatever status the holder saw.
		j.State, j.Reason = model.JobTimeout, model.ReasonTimeLimit
		j.ExitCode, j.Signal = c.ExitCode, c.Signal
	case j.Completing:
		j.State = j.EndState
	case c.Requeue: // the node could not run it (prolog)
		requeue(j, c.Now)
		if c.Reason == model.ReasonLaunchFailedHeld {
			j.HoldAdmin, j.Reason = true, c.Reason
		}
	case c.State != 0:
		j.State = c.State
		if c.Reason != "" {
			j.Reason = c.Reason
		}
	case c.ExitCode == 0 && c.Signal == 0:
		j.State = model.JobCompleted
	default:
		j.State = model.JobFailed
		j.Reason = model.ReasonNonZeroExit
		if c.Signal != 0 {
			j.Reason = model.ReasonRaisedSignal
		}
	}
	j.Completing = false
	endSteps(j, c.Now)
	txn.PutJob(j)
	res := JobEndedResult{Applied: true}
	if j.SuspendsVictims {
		res.Resumed = resumeVictims(txn, j.ID, c.Now)
	}
	return res
}

// requeueDelay is how long Slurm keeps an explicitly requeued job from
// starting again (its launch credential's lifetime, 120 s, plus one).
const requeueDelay = 121

// requeueLater requeues j and holds it pending (reason BeginTime) for
// requeueDelay, as Slurm does after scontrol requeue.
func requeueLater(j *model.Job, now int64) {
	requeue(j, now)
	j.BeginTime = now + requeueDelay
	j.EligibleTime = j.BeginTime
	if !j.HoldAdmin && !j.HoldUser {
		j.Reason = model.ReasonBeginTime
	} else if j.HoldAdmin {
		j.Reason = model.ReasonRequeuedHeld
	}
}

// JobEndedResult tells whether a JobEnded ended the job's current run; a
// report of a stale run or a duplicate changes nothing.
// Resumed are jobs suspended for this one that now run again (their
// processes are to be thawed).
type JobEndedResult struct {
	Applied bool
	Resumed []model.JobID
}

func requeue(j *model.Job, now int64) {
	if j.StartTime != 0 {
		r := model.Run{Submit: j.SubmitTime, Eligible: j.EligibleTime, Start: j.StartTime, End: j.EndTime,
			ExitCode: j.ExitCode, Signal: j.Signal, Preempted: j.Preempted}
		if r.End == 0 {
			r.End = now
		}
		for _, a := range j.Alloc {
			r.Nodes = append(r.Nodes, a.Node)
			r.CPUs += a.CPUs
		}
		runs := append(slices.Clip(j.Runs), r)
		if len(runs) > model.MaxRuns {
			runs = runs[len(runs)-model.MaxRuns:]
		}
		j.Runs = runs
	}
	j.ExitCode, j.Signal, j.Preempted = 0, 0, false
	j.Suspended, j.SuspendTime, j.SuspendedSecs, j.SecsPreSuspend = false, 0, 0, 0
	j.SchedSuspended, j.PreemptedFor, j.SliceTime, j.SuspendsVictims = false, 0, 0, false
	j.State, j.Completing, j.EndState = model.JobPending, false, 0
	j.Steps, j.NextStep, j.Released = nil, 0, false
	j.Alloc, j.StartTime, j.EndTime = nil, 0, 0
	j.Restarts++
	j.Reason = model.ReasonNone
	j.SubmitTime = now
}

func applyCancel(txn *state.Txn, c *Cancel) any {
	snap := txn.Snapshot()
	var res CancelResult
	for _, id := range c.Jobs {
		j := snap.Job(id)
		if j == nil || j.State.Final() || j.Completing {
			continue
		}
		j = j.Clone()
		j.CancelledBy = c.By
		if j.State == model.JobPending {
			j.State, j.EndTime = model.JobCancelled, c.Now
		} else {
			j.Completing, j.EndState = true, model.JobCancelled
			res.Terminate = append(res.Terminate, id)
		}
		txn.PutJob(j)
	}
	return res
}

func applyControl(txn *state.Txn, c *Control) any {
	snap := txn.Snapshot()
	var res CancelResult
	for _, id := range c.Jobs {
		j := snap.Job(id)
		if j == nil {
			continue
		}
		j = j.Clone()
		switch c.Action {
		case "hold-admin", "hold-user":
			if j.State != model.JobPending {
				continue
			}
			if c.Action == "hold-admin" {
				j.HoldAdmin, j.Reason = true, model.ReasonHeldAdmin
			} else {
				j.HoldUser, j.Reason = true, model.ReasonHeldUser
			}
			j.Priority = 0
		case "release", "release-user":
			if j.State != model.JobPending {
				continue
			}
			j.HoldUser = false
			if c.Action == "release" {
				j.HoldAdmin = false
			}
			if !j.HoldAdmin && !j.HoldUser {
				// A release ranks the job afresh, as Slurm does: an
				// operator's pinned priority does not survive a hold.
				j.Reason, j.Priority, j.PrioritySet = model.ReasonNone, 1, false
				if p, ok := c.Priorities[id]; ok && p > 0 {
					j.Priority = p
				}
			}
		case "suspend":
			if j.State != model.JobRunning || j.Completing || j.Suspended {
				continue
			}
			j.SecsPreSuspend = max(0, c.Now-j.StartTime-j.SuspendedSecs)
			j.Suspended, j.SuspendTime = true, c.Now
			res.Suspend = append(res.Suspend, id)
		case "resume":
			if !j.Suspended || j.SchedSuspended { // the scheduler resumes its own
				continue
			}
			unsuspend(j, c.Now)
			res.Resume = append(res.Resume, id)
		case "requeue", "requeuehold":
			switch {
			case j.State == model.JobRunning && !j.Completing:
				j.Completing, j.EndState = true, model.JobPending
				res.Terminate = append(res.Terminate, id)
			case j.Finished():
				requeueLater(j, c.Now)
			default:
				continue
			}
			if c.Action == "requeuehold" {
				j.HoldAdmin, j.Priority = true, 0
				j.Reason = model.ReasonRequeuedHeld
			}
		}
		txn.PutJob(j)
	}
	return res
}

func applyUpdateJob(txn *state.Txn, c *UpdateJob) {
	snap := txn.Snapshot()
	for _, id := range c.Jobs {
		j := snap.Job(id)
		if j == nil || j.Finished() {
			continue
		}
		j = j.Clone()
		if c.TimeLimit != nil {
			j.TimeLimit = *c.TimeLimit
		}
		if c.Partition != nil && j.State == model.JobPending {
			j.Partition = *c.Partition
		}
		if c.Name != nil {
			j.Name = *c.Name
		}
		if c.Comment != nil {
			j.Comment = *c.Comment
		}
		if c.Nice != nil {
			j.Nice = *c.Nice
		}
		if c.Priority != nil {
			j.Priority, j.PrioritySet = *c.Priority, true
		}
		if c.BeginTime != nil && j.State == model.JobPending {
			j.BeginTime = max(*c.BeginTime, 1) // 0 would mean "the spec's"
			j.EligibleTime = max(*c.BeginTime, c.Now)
		}
		if !c.Spec.Empty() && j.Spec != nil {
			// Only the throttle may change once a job runs; the service
			// refused the rest.
			if j.State == model.JobPending || (c.Spec.Throttle != nil && *c.Spec == (SpecChange{Throttle: c.Spec.Throttle})) {
				j.Spec, j.SpecID = c.Spec.Apply(j.Spec), ownSpecID(j.ID)
				if c.Spec.Dependency != nil {
					j.DepFailed = false // judged again on the next cycle
				}
			}
		}
		txn.PutJob(j)
	}
}

func applyNodeRegister(txn *state.Txn, c *NodeRegister) {
	snap := txn.Snapshot()
	n := snap.Node(c.Node)
	if n == nil {
		return
	}
	n = n.Clone()
	// Declared resources win; undeclared ones take what the agent found.
	if n.DetectCPUs && c.CPUs > 0 {
		n.CPUs, n.Sockets, n.Cores, n.Threads = c.CPUs, c.Sockets, c.Cores, c.Threads
	}
	if n.DetectMemory && c.Memory > 0 {
		n.Memory = c.Memory
	}
	n.Hostname, n.Version, n.BootTime, n.RegTime, n.LastSeen = c.Hostname, c.Version, c.BootTime, c.Now, c.Now
	if c.Addr != "" {
		n.Addr = c.Addr
	}
	wasDown := n.State == model.NodeDown && n.Reason == ReasonNotResponding
	if n.State == model.NodeUnknown || wasDown {
		n.State = model.NodeUp
		if wasDown {
			n.Reason, n.ReasonTime, n.ReasonUID = "", 0, 0
		}
	}
	n.Responding = true
	if c.HasGPUs {
		registerGPUs(n, c.GPUs, c.Now)
	}
	txn.PutNode(n)
	for _, id := range c.Lost {
		if j := snap.Job(id); j != nil && j.State == model.JobRunning {
			failJob(txn, j, c.Now)
		}
	}
	for _, id := range c.Requeue {
		if j := txn.Snapshot().Job(id); j != nil && j.State == model.JobRunning {
			release(txn, j)
			j = j.Clone()
			requeue(j, c.Now)
			txn.PutJob(j)
		}
	}
}

// ReasonNotResponding is the node reason set when its agent goes silent.
const ReasonNotResponding = "Not responding"

func applyNodeDown(txn *state.Txn, c *NodeDown) {
	n := txn.Snapshot().Node(c.Node)
	if n == nil {
		return
	}
	n = n.Clone()
	n.State, n.Responding = model.NodeDown, c.Reason != ReasonNotResponding
	if n.Reason == "" || c.Reason == ReasonNotResponding {
		n.Reason, n.ReasonTime = c.Reason, c.Now
	}
	txn.PutNode(n)
	failJobsOn(txn, c.Node, c.Now)
}

// failJobsOn ends every job holding the node: running ones NODE_FAIL,
// completing ones with the state they were heading for.
func failJobsOn(txn *state.Txn, node string, now int64) {
	snap := txn.Snapshot()
	var hit []*model.Job
	snap.EachActive(func(j *model.Job) bool {
		if j.State == model.JobRunning && slices.ContainsFunc(j.Alloc, func(a model.NodeAlloc) bool { return a.Node == node }) {
			hit = append(hit, j)
		}
		return true
	})
	for _, j := range hit {
		failJob(txn, j, now)
	}
}

func failJob(txn *state.Txn, j *model.Job, now int64) {
	release(txn, j)
	j = j.Clone()
	switch {
	case j.Completing && j.EndState == model.JobPending:
		requeueLater(j, now)
	case j.Completing:
		j.State = j.EndState
	case j.Spec != nil && j.Spec.Requeue && !j.Spec.Interactive:
		// A requeueable batch job (Slurm's JobRequeue=1 default, unless
		// --no-requeue) whose node failed goes back to the queue.
		requeue(j, now)
	default:
		j.State, j.Reason = model.JobNodeFail, model.ReasonNodeDown
	}
	j.Completing, j.EndTime = false, now
	if j.State == model.JobPending {
		j.EndTime = 0
	}
	endSteps(j, now)
	txn.PutJob(j)
}

func applyUpdateNodes(txn *state.Txn, c *UpdateNodes) any {
	snap := txn.Snapshot()
	for _, name := range c.Nodes {
		n := snap.Node(name)
		if n == nil {
			continue
		}
		n = n.Clone()
		switch c.State {
		case "DRAIN":
			n.Drain, n.Reason, n.ReasonUID, n.ReasonTime = true, c.Reason, c.UID, c.Now
			n.HealthDrain = c.Health
		case "RESUME", "UNDRAIN", "IDLE":
			if n.InvalidReg {
				continue // Slurm's rule: only a valid registration clears it
			}
			n.Drain, n.HealthDrain = false, false
			if n.State == model.NodeDown {
				n.State = model.NodeUnknown
				if n.Responding {
					n.State = model.NodeUp
				}
			}
			n.Reason, n.ReasonUID, n.ReasonTime = "", 0, 0
		case "DOWN":
			n.State, n.Reason, n.ReasonUID, n.ReasonTime = model.NodeDown, c.Reason, c.UID, c.Now
		}
		txn.PutNode(n)
		if c.State == "DOWN" {
			failJobsOn(txn, name, c.Now)
		}
	}
	return nil
}

func applySetConfig(txn *state.Txn, c *SetConfig) {
	snap := txn.Snapshot()
	keep := map[string]bool{}
	for _, cfg := range c.Nodes {
		keep[cfg.Name] = true
		old := snap.Node(cfg.Name)
		n := cfg.Clone()
		if old != nil {
			// Runtime state survives a reconfigure.
			n.State, n.Drain, n.Responding = old.State, old.Drain || cfg.Drain, old.Responding
			n.HealthDrain = old.HealthDrain && !cfg.Drain
			n.InvalidReg = old.InvalidReg // until the node registers again
			n.Reason, n.ReasonUID, n.ReasonTime = old.Reason, old.ReasonUID, old.ReasonTime
			n.BootTime, n.LastSeen, n.RegTime, n.Hostname, n.Version = old.BootTime, old.LastSeen, old.RegTime, old.Hostname, old.Version
			n.AllocCPUs, n.AllocMem = old.AllocCPUs, old.AllocMem
			n.AllocCores, n.AllocGPUs = old.AllocCores, old.AllocGPUs
			if old.RegTime > 0 && old.Gres == n.Gres && len(old.GPUs) == len(n.GPUs) {
				n.GPUs = old.GPUs // the devices the agent reported
			} else if old.RegTime > 0 && len(n.GPUs) > 0 {
				// New placeholders, no devices behind them yet: no job
				// gets them until the agent registers its GPUs again
				// (it is told to read gres.conf again).
				n.InvalidReg = true
			}
			if n.DetectCPUs && old.RegTime > 0 {
				n.CPUs, n.Sockets, n.Cores, n.Threads = old.CPUs, old.Sockets, old.Cores, old.Threads
			}
			if n.DetectMemory && old.RegTime > 0 {
				n.Memory = old.Memory
			}
			if cfg.State == model.NodeDown && old.State != model.NodeDown {
				n.State = model.NodeDown
			}
		}
		txn.PutNode(n)
	}
	for _, n := range snap.Nodes() {
		if !keep[n.Name] && n.AllocCPUs == 0 {
			txn.DeleteNode(n.Name)
		}
	}
	txn.SetPartitions(c.Partitions)
	if snap.NextJobID < c.FirstJobID {
		txn.SetNextJobID(c.FirstJobID)
	}
}

// unsuspend ends j's suspension at now: the suspended time is kept apart
// from its run time.
func unsuspend(j *model.Job, now int64) {
	if !j.Suspended {
		return
	}
	j.SuspendedSecs += max(0, now-j.SuspendTime)
	// Each step that ran during the suspension owes it the overlap (Slurm
	// adds the time to the steps still running when the job resumes).
	var steps []*model.Step
	for i, s := range j.Steps {
		from, to := max(j.SuspendTime, s.StartTime), now
		if s.State.Final() && s.EndTime > 0 {
			to = min(to, s.EndTime)
		}
		if s.StartTime == 0 || to <= from {
			continue
		}
		if steps == nil {
			steps = append([]*model.Step(nil), j.Steps...)
		}
		steps[i] = s.Clone()
		steps[i].SuspendedSecs += to - from
	}
	if steps != nil {
		j.Steps = steps
	}
	j.Suspended, j.SchedSuspended, j.PreemptedFor = false, false, 0
}

// applyPriorities sets computed priorities on jobs still pending, neither
// held (priority 0) nor given one by an operator.
func applyPriorities(txn *state.Txn, c *Priorities) {
	snap := txn.Snapshot()
	for id, p := range c.Jobs {
		j := snap.Job(id)
		if j == nil || j.State != model.JobPending || j.Priority == 0 || j.PrioritySet || j.Priority == p {
			continue
		}
		j = j.Clone()
		j.Priority = p
		txn.PutJob(j)
	}
	// UsageAt says usage was recalculated: an empty map (after a
	// PriorityUsageResetPeriod reset) arrives as nil and still replaces.
	if c.Usage != nil || c.UsageAt > 0 {
		txn.SetUsage(c.Usage, c.UsageAt)
	}
}
