package schedtest

import "github.com/drover-hpc/drover/internal/model"

// SchedSuspend suspends running job j for preemptor (0: a gang slice) as
// the FSM does: the CPUs go back to the nodes, memory and GPUs stay.
func (c *Cluster) SchedSuspend(j *model.Job, now int64, preemptor model.JobID) {
	for _, a := range j.Alloc {
		if n := c.Node(a.Node); n != nil {
			n.AllocCPUs -= a.CPUs
			n.AllocCores = n.AllocCores.AndNot(a.CPUIDs)
		}
	}
	j.Suspended, j.SchedSuspended, j.SuspendTime, j.SliceTime, j.PreemptedFor = true, true, now, now, preemptor
}
