package controller

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/drover-hpc/drover/internal/api"
	"github.com/drover-hpc/drover/internal/fsm"
	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/nodemsg"
)

// statWait bounds how long sstat waits for the nodes of a job.
const statWait = 5 * time.Second

// statCalls routes StatReply messages to the StepStats call waiting for
// them, by request id.
type statCalls struct {
	next    atomic.Uint64
	mu      sync.Mutex
	waiting map[uint64]chan *nodemsg.StatReply
}

func (s *statCalls) open() (uint64, chan *nodemsg.StatReply) {
	id := s.next.Add(1)
	ch := make(chan *nodemsg.StatReply, 64)
	s.mu.Lock()
	if s.waiting == nil {
		s.waiting = map[uint64]chan *nodemsg.StatReply{}
	}
	s.waiting[id] = ch
	s.mu.Unlock()
	return id, ch
}

func (s *statCalls) close(id uint64) {
	s.mu.Lock()
	delete(s.waiting, id)
	s.mu.Unlock()
}

func (s *statCalls) deliver(r *nodemsg.StatReply) {
	s.mu.Lock()
	ch := s.waiting[r.RequestID]
	s.mu.Unlock()
	if ch != nil {
		select {
		case ch <- r:
		default:
		}
	}
}

// StepStats asks every node of j that is connected for the usage of its
// running steps and gathers the answers (sstat).
func (c *Controller) StepStats(ctx context.Context, j *model.Job, step model.StepID, hasStep bool) ([]api.StepStat, []string, error) {
	id, replies := c.stats.open()
	defer c.stats.close(id)
	req := &nodemsg.StatRequest{RequestID: id, Job: j.ID, Step: step, HasStep: hasStep}
	pending := map[string]bool{}
	for _, n := range j.NodeNames() {
		c.mu.Lock()
		a := c.agents[n]
		c.mu.Unlock()
		if a == nil {
			continue
		}
		pending[n] = true
		a.send(req)
	}
	var out []api.StepStat
	timer := c.clock.NewTimer(statWait)
	defer timer.Stop()
	for len(pending) > 0 {
		select {
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		case <-timer.C:
			var failed []string
			for n := range pending {
				failed = append(failed, n)
			}
			return out, failed, nil
		case r := <-replies:
			for _, s := range r.Steps {
				delete(pending, s.Node)
				if s.Usage == nil && s.NTasks == 0 {
					continue // the node's "nothing here"
				}
				st := api.StepStat{Job: s.Job, Step: s.Step, Node: s.Node, NTasks: s.NTasks, Pids: s.Pids}
				if s.Usage != nil {
					st.Usage = *s.Usage
				}
				out = append(out, st)
			}
		}
	}
	return out, nil, nil
}

// health applies a node's own health verdict: drain with the agent's
// reason, or undrain a node drained for the reason the agent now clears.
// An admin's drain (another reason) is never undone here.
func (c *Controller) health(node string, h *nodemsg.NodeHealth) {
	n := c.store.Snapshot().Node(node)
	if n == nil {
		return
	}
	cmd := &fsm.UpdateNodes{Nodes: []string{node}, Reason: h.Reason, Now: c.clock.Now().Unix(), Health: !h.Sticky}
	switch {
	case !h.Healthy && (!n.Drain || (n.HealthDrain && (n.Reason != h.Reason || h.Sticky))):
		cmd.State = "DRAIN" // a new drain, or the health drain's new reason
	case h.Healthy && n.Drain && n.HealthDrain:
		// Only the drain health set: an administrator's (or a sticky
		// failure's) stays, whatever its reason.
		cmd.State, cmd.Reason = "UNDRAIN", ""
	default:
		return
	}
	if _, err := c.raft.Apply(fsm.TypeUpdateNodes, cmd); err != nil {
		c.log.Error("commit node health", "node", node, "err", err)
		return
	}
	c.log.Warn("node health", "node", node, "healthy", h.Healthy, "reason", h.Reason)
	c.Kick()
}
