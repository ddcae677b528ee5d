package controller

import (
	"sync"

	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/nodemsg"
)

// launchGate orders step launches against agent registrations, node by
// node. A registration ends (NODE_FAIL) the steps the controller holds
// for the node that the agent does not run; a launch sent meanwhile to
// the stream being replaced would vanish, and one committed just before
// the check but queued just after it would start a step already ended.
// Under the node's gate, each launch is either queued before the check
// (the check then sees the step and, the agent not running it, ends it:
// srun is told the launch failed) or after it, on the new stream, and
// only if the step still waits for the node.
type launchGate struct {
	mu    sync.Mutex
	nodes map[string]*sync.Mutex
}

func (g *launchGate) lock(node string) (unlock func()) {
	g.mu.Lock()
	if g.nodes == nil {
		g.nodes = map[string]*sync.Mutex{}
	}
	m := g.nodes[node]
	if m == nil {
		m = &sync.Mutex{}
		g.nodes[node] = m
	}
	g.mu.Unlock()
	m.Lock()
	return m.Unlock
}

// launchStepOn queues msg for node unless the step no longer waits for it
// (ended there by a registration that did not find it, or cancelled).
func (c *Controller) launchStepOn(node string, msg *nodemsg.LaunchStep) {
	unlock := c.launches.lock(node)
	defer unlock()
	if !c.stepDueOn(node, msg.Job.ID, msg.Step.ID) {
		c.log.Info("not launching a step that no longer waits for the node", "job", msg.Job.ID, "step", msg.Step.ID, "node", node)
		return
	}
	c.send(node, msg)
}

// stepDueOn reports whether a step of a running job still has its part on
// node to run.
func (c *Controller) stepDueOn(node string, job model.JobID, step model.StepID) bool {
	j := c.store.Snapshot().Job(job)
	if j == nil || j.State != model.JobRunning {
		return false
	}
	st := j.Step(step)
	if st == nil || st.Finished() {
		return false
	}
	_, i, ok := st.LayoutOn(node)
	return ok && (i >= len(st.NodesDone) || !st.NodesDone[i])
}

// installAgent makes conn the node's live stream after ending the steps
// the agent does not run (see launchGate). The replaced stream is closed
// first, outside the gate, so that a launch blocked on its full queue
// lets go of the gate.
func (c *Controller) installAgent(conn *agentConn, running []string) {
	c.mu.Lock()
	if old := c.agents[conn.node]; old != nil {
		old.close()
	}
	c.mu.Unlock()
	unlock := c.launches.lock(conn.node)
	defer unlock()
	c.loseSteps(c.store.Snapshot(), conn.node, running)
	c.mu.Lock()
	if old := c.agents[conn.node]; old != nil {
		old.close()
	}
	c.agents[conn.node] = conn
	c.lastSeen[conn.node] = c.clock.Now()
	delete(c.unregistered, conn.node)
	c.mu.Unlock()
}
