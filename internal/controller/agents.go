package controller

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"

	"github.com/drover-hpc/drover/internal/fsm"
	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/nodemsg"
	"github.com/drover-hpc/drover/internal/state"
)

// agentConn is one agent's live stream; sends are serialised through a
// buffered queue so a slow agent never blocks the scheduler.
type agentConn struct {
	node string
	out  chan nodemsg.ToNode
	once sync.Once
	done chan struct{}
}

func (a *agentConn) send(m nodemsg.ToNode) {
	select {
	case a.out <- m:
	case <-a.done:
	}
}

func (a *agentConn) close() { a.once.Do(func() { close(a.done) }) }

// ServeAgent runs an agent's stream until it ends. The caller has already
// checked the cluster token or the node certificate; certNode, when not
// empty, is the node the certificate names, and the only one the agent
// may register as.
func (c *Controller) ServeAgent(stream nodemsg.Stream, peerAddr, certNode string) error {
	first, err := stream.Recv()
	if err != nil {
		return err
	}
	reg, ok := first.(*nodemsg.Register)
	if !ok {
		return errors.New("first message must be a registration")
	}
	if certNode != "" && certNode != reg.Node {
		return fmt.Errorf("certificate of node %q cannot register node %q", certNode, reg.Node)
	}
	snap := c.store.Snapshot()
	node := snap.Node(reg.Node)
	if node == nil {
		return fmt.Errorf("node %q is not in slurm.conf", reg.Node)
	}
	runs, running := reg.Runs, reg.Running
	ended := map[model.JobID]bool{}
	for _, id := range reg.Ended {
		ended[id] = true
	}
	// Reconcile what the controller believes runs on the node with what
	// the agent reports.
	var lost, requeue []model.JobID
	var reterminate []*model.Job
	c.mu.Lock()
	snap.EachActive(func(j *model.Job) bool {
		if j.State != model.JobRunning || j.BatchHost() != reg.Node {
			return true
		}
		run, has := runs[j.ID]
		switch {
		case has && (run == 0 || run == j.Run()):
			if j.Completing {
				reterminate = append(reterminate, j)
			}
		case ended[j.ID]:
			// Its end report follows the registration.
		case c.acked[j.ID] == j.Run():
			lost = append(lost, j.ID)
		case j.Completing:
			lost = append(lost, j.ID) // never reached the node; ends as intended
		case c.isInherited(j) && (j.Spec == nil || !j.Spec.Requeue || j.Spec.Interactive):
			// Launched before this controller led (a restart of the
			// whole cluster): it most likely ran and stopped with its
			// agent, and a job that may not be requeued (--no-requeue,
			// srun, salloc) ends NODE_FAIL as Slurm's would.
			lost = append(lost, j.ID)
		default:
			// Never started there, or stopped with its agent: run it
			// afresh, with a new start time.
			requeue = append(requeue, j.ID)
		}
		return true
	})
	c.mu.Unlock()
	st := c.svc.Settings()
	cmd := &fsm.NodeRegister{
		Node: reg.Node, CPUs: reg.CPUs, Sockets: reg.Sockets, Cores: reg.Cores,
		Threads: reg.Threads, Memory: reg.Memory, Hostname: reg.Hostname, Addr: peerAddr,
		Version: reg.Version, BootTime: reg.BootTime, Running: running, Lost: lost, Requeue: requeue, Now: c.clock.Now().Unix(),
		GPUs: reg.GPUs, HasGPUs: true,
	}
	if _, err := c.raft.Apply(fsm.TypeNodeRegister, cmd); err != nil {
		return err
	}
	// The new stream takes over before the answer: what is sent to the
	// node from now on waits in its queue until Registered is out.
	conn := &agentConn{node: reg.Node, out: make(chan nodemsg.ToNode, 1024), done: make(chan struct{})}
	c.installAgent(conn, reg.RunningSteps)
	defer func() {
		conn.close()
		c.mu.Lock()
		if c.agents[reg.Node] == conn {
			delete(c.agents, reg.Node)
		}
		c.mu.Unlock()
	}()
	// The node keeps only the runs assigned to it: a run of a job that was
	// requeued meanwhile (and may run elsewhere now) is stale.
	var expected []nodemsg.JobRun
	var suspended []model.JobID
	// Taken after installAgent: a suspend or resume committed later goes
	// out on the new stream after Registered, so the node ends as the
	// controller says either way.
	after := c.store.Snapshot()
	for id, run := range runs {
		j := after.Job(id)
		if j == nil || j.State != model.JobRunning || !slices.Contains(j.NodeNames(), reg.Node) {
			continue
		}
		if run != 0 && run != j.Run() {
			c.log.Warn("node holds a stale run; it ends it", "node", reg.Node, "job", id, "run", run, "current", j.Run())
			continue
		}
		expected = append(expected, nodemsg.JobRun{Job: id, Run: j.Run(), Limit: j.TimeLimit})
		if j.Suspended || j.SchedSuspended {
			suspended = append(suspended, id)
		}
	}
	if err := stream.Send(&nodemsg.Registered{Cluster: st.ClusterName, KillWait: st.KillWait, Expected: expected,
		AcksReports: true, Suspended: suspended}); err != nil {
		return err
	}
	c.log.Info("node registered", "node", reg.Node, "cpus", reg.CPUs, "mem", reg.Memory, "running", len(running))

	sendErr := make(chan error, 1)
	go func() {
		for {
			select {
			case m := <-conn.out:
				if err := stream.Send(m); err != nil {
					sendErr <- err
					conn.close()
					return
				}
			case <-conn.done:
				sendErr <- nil
				return
			}
		}
	}()
	if len(reterminate) > 0 {
		ids := make([]model.JobID, len(reterminate))
		for i, j := range reterminate {
			ids[i] = j.ID
		}
		c.Terminate(ids, "CANCELLED")
	}
	c.Kick()

	in := make(chan received, maxEndBatch)
	go readStream(stream, in, conn.done)
	var next *received
	for {
		var r received
		if next != nil {
			r, next = *next, nil
		} else {
			r = <-in
		}
		if err := r.err; err != nil {
			conn.close()
			<-sendErr
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		c.mu.Lock()
		c.lastSeen[reg.Node] = c.clock.Now()
		c.mu.Unlock()
		switch m := r.msg.(type) {
		case *nodemsg.Heartbeat:
			c.heartbeat(reg.Node, m.Runs)
		case *nodemsg.JobStarted:
			if !c.endsHere(reg.Node, m.Job) {
				// A start confirmed by another node than the batch host
				// would make the controller count a launch as received.
				c.log.Warn("ignoring the start of a job this node does not hold", "node", reg.Node, "job", m.Job)
				conn.send(&nodemsg.ReportAck{Job: m.Job, Run: m.Run, Started: true}) // so that it stops resending
				continue
			}
			run := m.Run
			if run == 0 { // an older agent: the run it was sent
				if j := c.store.Snapshot().Job(m.Job); j != nil {
					run = j.Run()
				}
			}
			c.mu.Lock()
			c.acked[m.Job] = run
			c.mu.Unlock()
			conn.send(&nodemsg.ReportAck{Job: m.Job, Run: m.Run, Started: true})
		case *nodemsg.JobEnded:
			// Ends that queued up meanwhile go into the same commit.
			var batch []*nodemsg.JobEnded
			batch, next = moreEnds([]*nodemsg.JobEnded{m}, in)
			if err := c.jobsEnded(conn, reg.Node, batch); err != nil {
				return err // the agent resends unacknowledged ends on reconnect
			}
		case *nodemsg.StepEnded:
			if err := c.stepEnded(reg.Node, m); err != nil {
				c.log.Error("commit step end", "job", m.Job, "step", m.Step, "err", err)
				continue // not confirmed: the agent sends it again
			}
			conn.send(&nodemsg.ReportAck{Job: m.Job, Step: m.Step, Run: m.Run})
		case *nodemsg.StatReply:
			c.stats.deliver(ownStats(reg.Node, m))
		case *nodemsg.NodeHealth:
			c.health(reg.Node, m)
		case *nodemsg.Register:
			c.reregister(reg.Node, m)
		}
	}
}

// reregister takes what a connected agent found again after scontrol
// reconfigure (its GPUs from a gres.conf read again): the node's resources
// only, since the stream never broke its jobs need no reconciling. The
// name is the stream's, whatever the message says.
func (c *Controller) reregister(node string, m *nodemsg.Register) {
	n := c.store.Snapshot().Node(node)
	if n == nil {
		return
	}
	if _, err := c.raft.Apply(fsm.TypeNodeRegister, &fsm.NodeRegister{
		Node: node, CPUs: m.CPUs, Sockets: m.Sockets, Cores: m.Cores, Threads: m.Threads, Memory: m.Memory,
		Hostname: m.Hostname, Version: m.Version, BootTime: m.BootTime, Now: c.clock.Now().Unix(),
		GPUs: m.GPUs, HasGPUs: true,
	}); err != nil {
		c.log.Error("commit node registration", "node", node, "err", err)
		return
	}
	c.log.Info("node registered again after reconfigure", "node", node, "gpus", len(m.GPUs))
	c.Kick()
}

// heartbeat revives a node marked not responding while its stream lived
// (a network cut the connection survived), and tells it to kill what it
// still runs of jobs that ended meanwhile (NODE_FAIL, requeued).
func (c *Controller) heartbeat(node string, runs nodemsg.Runs) {
	snap := c.store.Snapshot()
	for id, run := range runs {
		j := snap.Job(id)
		if j == nil || j.State != model.JobRunning || !slices.Contains(j.NodeNames(), node) || (run != 0 && run != j.Run()) {
			// Only that run: the job's current run, here or elsewhere,
			// is not the node's to end.
			c.send(node, &nodemsg.SignalJob{Job: id, Terminate: true, Run: run})
		}
	}
	n := snap.Node(node)
	if n != nil && (!n.Responding || (n.State == model.NodeDown && n.Reason == fsm.ReasonNotResponding)) {
		_, _ = c.raft.Apply(fsm.TypeNodeRegister, &fsm.NodeRegister{
			Node: node, CPUs: n.CPUs, Sockets: n.Sockets, Cores: n.Cores, Threads: n.Threads, Memory: n.Memory,
			Hostname: n.Hostname, Version: n.Version, BootTime: n.BootTime, Now: c.clock.Now().Unix(),
		})
	}
}

// loseSteps ends, on node, the steps the controller believed ran there but
// the registering agent does not run: their tasks went with an agent that
// stopped (or with the machine).
func (c *Controller) loseSteps(snap *state.Snapshot, node string, running []string) {
	have := map[string]bool{}
	for _, s := range running {
		have[s] = true
	}
	now := c.clock.Now().Unix()
	snap.EachActive(func(j *model.Job) bool {
		if j.State != model.JobRunning {
			return true
		}
		for _, st := range j.Steps {
			_, i, ok := st.LayoutOn(node)
			if !ok || st.Finished() || st.NodesDone[i] || have[fmt.Sprintf("%d.%d", j.ID, st.ID)] {
				continue
			}
			c.log.Warn("step lost on node", "job", j.ID, "step", st.ID, "node", node)
			if _, err := c.raft.Apply(fsm.TypeStepEnded, &fsm.StepEnded{Job: j.ID, Step: st.ID, Node: node,
				ExitCode: 0, Signal: 9, State: model.JobNodeFail, Now: now}); err != nil {
				c.log.Error("commit lost step", "err", err)
			}
		}
		return true
	})
}

// endsHere reports whether node may report the start or the end of job:
// it is the job's batch host (the first node of its allocation, whose
// agent holds the job's primary record).
func (c *Controller) endsHere(node string, job model.JobID) bool {
	j := c.store.Snapshot().Job(job)
	return j != nil && j.BatchHost() == node
}

// ownStats keeps of a node's usage answer what it says about itself: a
// node speaks for no other.
func ownStats(node string, r *nodemsg.StatReply) *nodemsg.StatReply {
	out := &nodemsg.StatReply{RequestID: r.RequestID}
	for _, s := range r.Steps {
		if s.Node == node {
			out.Steps = append(out.Steps, s)
		}
	}
	return out
}

// isInherited says whether j's current run was already running when this
// controller began leading (c.mu held). A start time in seconds cannot
// say it: a cluster restarted within the second of a launch looked like
// a launch of this term, and a --no-requeue job ran twice.
func (c *Controller) isInherited(j *model.Job) bool {
	run, ok := c.inherited[j.ID]
	return ok && run == j.Run()
}
