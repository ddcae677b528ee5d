package controller

import (
	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/state"
)

// A controller that begins leading (a restart, a new leader) finds the
// nodes as the state left them: up and responding. Until a node's agent
// registers with it, though, a launch there reaches nobody, and the
// agent's registration then requeues the job it never ran: sacct -D
// showed a REQUEUED run for a job that was only ever started once (and,
// after a whole cluster restart, a job requeued by one node's
// registration was placed on another not yet back and requeued again, a
// zero-length run). So until its agent registers, a node takes no new
// work. One that never comes back is marked down after SlurmdTimeout as
// before; jobs already running there are the registration's to reconcile.

// schedNodes is the nodes a scheduling pass sees: those not registered
// with this leader yet are shown not responding (copies: the snapshot's
// nodes are shared; its Nodes slice is the caller's).
func (c *Controller) schedNodes(snap *state.Snapshot) []*model.Node {
	nodes := snap.Nodes()
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.unregistered) == 0 {
		return nodes
	}
	for i, n := range nodes {
		if c.unregistered[n.Name] && n.Responding {
			v := n.Clone()
			v.Responding = false
			nodes[i] = v
		}
	}
	return nodes
}
