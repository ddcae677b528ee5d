package agent

import (
	pb "github.com/drover-hpc/drover/api/drover/v1"
	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/wire"
)

// stat answers sstat: the current usage of the job's steps on this node.
// A node with nothing to report still answers, so the controller does not
// wait for it.
func (a *Agent) stat(r *pb.StatRequest) {
	reply := &pb.StatReply{RequestId: r.RequestId}
	a.mu.Lock()
	j := a.jobs[r.JobId]
	a.mu.Unlock()
	want := func(id model.StepID) bool { return !r.HasStep || int32(id) == r.StepId }
	if j != nil {
		j.mu.Lock()
		batch := j.batch
		gpus := nodeAlloc(j.model, a.node).GPUs
		var steps []*stepRun
		for _, s := range j.steps {
			if want(s.st.ID) {
				steps = append(steps, s)
			}
		}
		j.mu.Unlock()
		if batch != nil && want(model.StepBatch) {
			reply.Steps = append(reply.Steps, a.stepStat(j.id, model.StepBatch, 1, batch, gpus))
		}
		for _, s := range steps {
			reply.Steps = append(reply.Steps, a.stepStat(j.id, s.st.ID, len(s.local.Tasks), s.sampler(), s.local.GPUs))
		}
	}
	if len(reply.Steps) == 0 {
		reply.Steps = []*pb.StepStat{{JobId: r.JobId, Node: a.node}}
	}
	a.report(&pb.AgentMessage{Msg: &pb.AgentMessage_StatReply{StatReply: reply}})
}

func (a *Agent) stepStat(job uint32, step model.StepID, ntasks int, s *sampler, gpus model.Bitmap) *pb.StepStat {
	st := &pb.StepStat{JobId: job, StepId: int32(step), Node: a.node, Ntasks: int32(ntasks)}
	if s == nil || s.g == nil {
		st.Usage = &pb.Usage{MaxRssNode: a.node, Nodes: 1}
		return st
	}
	st.Usage = wire.UsageToPB(s.usage(a.node, gpus))
	if pids, err := s.g.Procs(); err == nil {
		for _, p := range pids {
			st.Pids = append(st.Pids, int32(p))
		}
	}
	return st
}
