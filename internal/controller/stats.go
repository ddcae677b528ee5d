package controller

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	pb "github.com/drover-hpc/drover/api/drover/v1"
	"github.com/drover-hpc/drover/internal/fsm"
	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/service"
	"github.com/drover-hpc/drover/internal/wire"
)

// statWait bounds how long sstat waits for the nodes of a job.
const statWait = 5 * time.Second

// statCalls routes StatReply messages to the StepStats call waiting for
// them, by request id.
type statCalls struct {
	next    atomic.Uint64
	mu      sync.Mutex
	waiting map[uint64]chan *pb.StatReply
}

func (s *statCalls) open() (uint64, chan *pb.StatReply) {
	id := s.next.Add(1)
	ch := make(chan *pb.StatReply, 64)
	s.mu.Lock()
	if s.waiting == nil {
		s.waiting = map[uint64]chan *pb.StatReply{}
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

func (s *statCalls) deliver(r *pb.StatReply) {
	s.mu.Lock()
	ch := s.waiting[r.RequestId]
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
func (c *Controller) StepStats(ctx context.Context, j *model.Job, step model.StepID, hasStep bool) ([]service.StepStat, []string, error) {
	id, replies := c.stats.open()
	defer c.stats.close(id)
	req := &pb.StatRequest{RequestId: id, JobId: uint32(j.ID), StepId: int32(step), HasStep: hasStep}
	pending := map[string]bool{}
	for _, n := range j.NodeNames() {
		c.mu.Lock()
		a := c.agents[n]
		c.mu.Unlock()
		if a == nil {
			continue
		}
		pending[n] = true
		a.send(&pb.ControllerMessage{Msg: &pb.ControllerMessage_Stat{Stat: req}})
	}
	var out []service.StepStat
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
				if s.Usage == nil && s.Ntasks == 0 {
					continue // the node's "nothing here"
				}
				st := service.StepStat{Job: model.JobID(s.JobId), Step: model.StepID(s.StepId), Node: s.Node, NTasks: int(s.Ntasks)}
				for _, p := range s.Pids {
					st.Pids = append(st.Pids, int(p))
				}
				if u := wire.UsageFromPB(s.Usage); u != nil {
					st.Usage = *u
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
func (c *Controller) health(node string, h *pb.NodeHealth) {
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
