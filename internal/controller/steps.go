package controller

import (
	"context"

	pb "github.com/drover-hpc/drover/api/drover/v1"
	"github.com/drover-hpc/drover/internal/api"
	"github.com/drover-hpc/drover/internal/fsm"
	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/wire"
)

// LaunchStep sends a committed step to each of its nodes. The message
// carries the job, so a node that does not run the batch script learns the
// job from its first step.
func (c *Controller) LaunchStep(j *model.Job, st *model.Step) {
	set := c.svc.Settings()
	pj := wire.JobToPB(j, wire.Listing)
	pj.Steps = nil
	if j.Spec != nil {
		// Tasks take their environment from the step; the job's own (a
		// batch script's) is not needed on the nodes.
		pj.Spec.Env = nil
	}
	ps := wire.StepToPB(st, true)
	for _, n := range st.Layout {
		c.send(n.Node, &pb.ControllerMessage{Msg: &pb.ControllerMessage_LaunchStep{LaunchStep: &pb.LaunchStep{
			Job: pj, Step: ps, Cluster: set.ClusterName, KillWait: set.KillWait,
		}}})
	}
}

// SignalStep signals or terminates a step's tasks on its nodes.
func (c *Controller) SignalStep(j *model.Job, st *model.Step, sig int, terminate bool) {
	for _, n := range st.Layout {
		c.send(n.Node, &pb.ControllerMessage{Msg: &pb.ControllerMessage_SignalStep{SignalStep: &pb.SignalStep{
			JobId: uint32(j.ID), StepId: int32(st.ID), Signal: int32(sig), Terminate: terminate,
		}}})
	}
}

// AttachStep makes a step's nodes dial an attaching client.
func (c *Controller) AttachStep(j *model.Job, st *model.Step, addr, key string) {
	for _, n := range st.Layout {
		c.send(n.Node, &pb.ControllerMessage{Msg: &pb.ControllerMessage_Attach{Attach: &pb.AttachIO{
			JobId: uint32(j.ID), StepId: int32(st.ID), IoAddr: addr, IoKey: key,
		}}})
	}
}

// Fetch makes every node of a job fetch a file from an sbcast; each node
// reports its result to sbcast itself.
func (c *Controller) Fetch(_ context.Context, j *model.Job, req api.BroadcastRequest) ([]string, error) {
	nodes := j.NodeNames()
	pj := wire.JobToPB(j, wire.Summary)
	for _, n := range nodes {
		c.send(n, &pb.ControllerMessage{Msg: &pb.ControllerMessage_Fetch{Fetch: &pb.FetchFile{
			JobId: uint32(j.ID), IoAddr: req.Addr, IoKey: req.Key, Dest: req.Dest, Mode: req.Mode,
			Force: req.Force, Mtime: req.MTime, Job: pj,
		}}})
	}
	return nodes, nil
}

// stepEnded commits one node's report of a step's end.
func (c *Controller) stepEnded(node string, e *pb.StepEnded) error {
	end := e.EndTime
	if end == 0 {
		end = c.clock.Now().Unix()
	}
	_, err := c.raft.Apply(fsm.TypeStepEnded, &fsm.StepEnded{
		Job: model.JobID(e.JobId), Step: model.StepID(e.StepId), Node: node,
		ExitCode: e.ExitCode, Signal: e.Signal, State: model.JobState(e.State), Now: end,
		Usage: wire.UsageFromPB(e.Usage), Run: e.Run,
	})
	return err
}

// cleanup tells the nodes of a job that ended, other than except, to kill
// whatever of it they still run (steps on nodes that do not hold the
// batch script, or everything after a node failure).
func (c *Controller) cleanup(j *model.Job, except string) {
	if j == nil {
		return
	}
	for _, n := range j.NodeNames() {
		if n == except {
			continue
		}
		c.send(n, &pb.ControllerMessage{Msg: &pb.ControllerMessage_Signal{Signal: &pb.SignalJob{
			JobId: uint32(j.ID), Terminate: true, Run: j.Run(),
		}}})
	}
}
