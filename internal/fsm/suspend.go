package fsm

import (
	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/state"
)

// TypeSlice is set apart from the iota list of commands.go so that
// commands added there by other work never collide with it. Values are
// persisted: never reuse.
const TypeSlice Type = 64

func init() { bodies[TypeSlice] = func() any { return new(Slice) } }

// Slice suspends and resumes jobs for the scheduler: gang time slices,
// and preemption victims (PreemptMode=SUSPEND) resumed once their CPUs
// are free. Suspensions apply first, so a resumption may take the CPUs
// they gave back.
type Slice struct {
	Suspend []model.JobID `json:"suspend,omitempty"`
	Resume  []model.JobID `json:"resume,omitempty"`
	Now     int64         `json:"now"`
}

// SliceResult lists the jobs whose processes must now be frozen or
// thawed: those of the command that still could be.
type SliceResult struct {
	Suspended, Resumed []model.JobID
}

func applySlice(txn *state.Txn, c *Slice) SliceResult {
	var res SliceResult
	for _, id := range c.Suspend {
		if j := txn.Snapshot().Job(id); j != nil && schedSuspend(txn, j, c.Now, 0) {
			res.Suspended = append(res.Suspended, id)
		}
	}
	for _, id := range c.Resume {
		if j := txn.Snapshot().Job(id); j != nil && schedResume(txn, j, c.Now) {
			res.Resumed = append(res.Resumed, id)
		}
	}
	return res
}

// schedSuspend suspends running job j for preemptor (0: a gang slice):
// its CPUs go back to its nodes for others to use while it is frozen; its
// memory and GPUs stay allocated, as Slurm keeps a suspended job's.
func schedSuspend(txn *state.Txn, j *model.Job, now int64, preemptor model.JobID) bool {
	if j.State != model.JobRunning || j.Completing || j.Suspended {
		return false
	}
	snap := txn.Snapshot()
	for _, a := range j.Alloc {
		if n := snap.Node(a.Node); n != nil {
			n = n.Clone()
			n.AllocCPUs = max(0, n.AllocCPUs-a.CPUs)
			n.AllocCores = n.AllocCores.AndNot(a.CPUIDs)
			txn.PutNode(n)
		}
	}
	j = j.Clone()
	j.SecsPreSuspend = max(0, now-j.StartTime-j.SuspendedSecs)
	j.Suspended, j.SuspendTime = true, now
	j.SchedSuspended, j.PreemptedFor, j.SliceTime = true, preemptor, now
	txn.PutJob(j)
	return true
}

// schedResume takes back a scheduler-suspended job's CPUs and thaws it,
// when every one of them is free again.
func schedResume(txn *state.Txn, j *model.Job, now int64) bool {
	if j.State != model.JobRunning || j.Completing || !j.SchedSuspended {
		return false
	}
	snap := txn.Snapshot()
	for _, a := range j.Alloc {
		n := snap.Node(a.Node)
		if n == nil || n.FreeCPUs() < a.CPUs || a.CPUIDs.Intersects(n.AllocCores) {
			return false
		}
	}
	for _, a := range j.Alloc {
		n := snap.Node(a.Node).Clone()
		n.AllocCPUs += a.CPUs
		n.AllocCores = n.AllocCores.Or(a.CPUIDs)
		txn.PutNode(n)
	}
	j = j.Clone()
	unsuspend(j, now)
	j.SliceTime = now
	txn.PutJob(j)
	return true
}

// resumeVictims resumes, where their CPUs are free, the jobs suspended
// for preemptor, which just ended: with partition_prio a suspended victim
// runs again as soon as its preemptor is gone, before the next scheduling
// pass could give its CPUs to another job.
func resumeVictims(txn *state.Txn, preemptor model.JobID, now int64) []model.JobID {
	var victims []*model.Job
	txn.Snapshot().EachAllocated(func(j *model.Job) bool {
		if j.SchedSuspended && j.PreemptedFor == preemptor {
			victims = append(victims, j)
		}
		return true
	})
	var out []model.JobID
	for _, v := range victims {
		if schedResume(txn, txn.Snapshot().Job(v.ID), now) {
			out = append(out, v.ID)
		}
	}
	return out
}

// suspendVictim suspends a SUSPEND or GANG victim of a schedule for its
// preemptor: it stays suspended while the preemptor waits to start on its
// CPUs, and the preemptor's end resumes it (gang slices may resume it
// before).
func suspendVictim(txn *state.Txn, j *model.Job, e PreemptEntry, now int64) bool {
	if !schedSuspend(txn, j, now, e.For) {
		return false
	}
	if p := txn.Snapshot().Job(e.For); p != nil && !p.SuspendsVictims {
		p = p.Clone()
		p.SuspendsVictims = true
		txn.PutJob(p)
	}
	return true
}
