package controller

import (
	"context"

	"github.com/drover-hpc/drover/internal/api"
	"github.com/drover-hpc/drover/internal/fsm"
	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/nodemsg"
)

// LaunchStep sends a committed step to each of its nodes. The message
// carries the job, so a node that does not run the batch script learns the
// job from its first step.
func (c *Controller) LaunchStep(j *model.Job, st *model.Step) {
	set := c.svc.Settings()
	msg := &nodemsg.LaunchStep{Job: j, Step: st, Cluster: set.ClusterName, KillWait: set.KillWait}
	for _, n := range st.Layout {
		c.launchStepOn(n.Node, msg)
	}
}

// SignalStep signals or terminates a step's tasks on its nodes.
func (c *Controller) SignalStep(j *model.Job, st *model.Step, sig int, terminate bool) {
	for _, n := range st.Layout {
		c.send(n.Node, &nodemsg.SignalStep{Job: j.ID, Step: st.ID, Signal: sig, Terminate: terminate})
	}
}

// AttachStep makes a step's nodes dial an attaching client.
func (c *Controller) AttachStep(j *model.Job, st *model.Step, addr, key string) {
	for _, n := range st.Layout {
		c.send(n.Node, &nodemsg.AttachIO{Job: j.ID, Step: st.ID, Addr: addr, Key: key})
	}
}

// Fetch makes every node of a job fetch a file from an sbcast; each node
// reports its result to sbcast itself.
func (c *Controller) Fetch(_ context.Context, j *model.Job, req api.BroadcastRequest) ([]string, error) {
	nodes := j.NodeNames()
	msg := &nodemsg.FetchFile{Job: j, Addr: req.Addr, Key: req.Key, Dest: req.Dest, Mode: req.Mode,
		Force: req.Force, MTime: req.MTime}
	for _, n := range nodes {
		c.send(n, msg)
	}
	return nodes, nil
}

// stepEnded commits one node's report of a step's end.
func (c *Controller) stepEnded(node string, e *nodemsg.StepEnded) error {
	end := e.EndTime
	if end == 0 {
		end = c.clock.Now().Unix()
	}
	_, err := c.raft.Apply(fsm.TypeStepEnded, &fsm.StepEnded{
		Job: e.Job, Step: e.Step, Node: node,
		ExitCode: e.ExitCode, Signal: e.Signal, State: e.State, Now: end,
		Usage: e.Usage, Run: e.Run,
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
		c.send(n, &nodemsg.SignalJob{Job: j.ID, Terminate: true, Run: j.Run()})
	}
}
