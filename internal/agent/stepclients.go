package agent

import (
	"io"
	"sync"
	"syscall"
	"time"

	pb "github.com/drover-hpc/drover/api/drover/v1"
	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/stepio"
)

// A step's clients are srun's I/O connection (one per node, dialled by the
// agent) and any sattach connections. Output goes to all; stdin, signals
// and window sizes come from all, but only srun may close the tasks'
// stdin (an sattach that ends its input must not end srun's). When srun's
// connection is lost and no new one comes (a later agent dials srun again)
// within srunGrace, srun is gone and the step is killed, as slurmctld does
// for a step whose srun stops answering.

// stdinLimit bounds the stdin queued for one task: past it, the agent stops
// reading srun's stream (srun waits) until the task reads. A task that
// does not read its stdin therefore holds back the others only once its
// own queue is full, and the agent's memory stays bounded.
const stdinLimit = 256 << 10

// maxAttached bounds a step's sattach connections on this node. Each is a
// descriptor and a goroutine of the agent, which every user's jobs share,
// and gets a copy of all the step's output: a user asking again and again
// for their own step's I/O (3,000 requests: 2,400 connections held) could
// run the agent out of descriptors for everybody. Past it, a new one is
// closed at once.
const maxAttached = 32

// maxAttachedPerUser bounds one user's sattach connections on this node,
// all their steps together: maxAttached per step alone let a user with
// many steps (256 per job, many small jobs) hold thousands.
const maxAttachedPerUser = 2 * maxAttached

// addClient adds a connection to the step's clients and serves what it
// sends; srun marks srun's own connection.
func (s *stepRun) addClient(c *stepio.Conn, srun bool) bool {
	var uid uint32
	if !srun {
		s.j.mu.Lock()
		uid = s.j.model.UserID
		s.j.mu.Unlock()
		if !s.a.takeAttach(uid) {
			c.Close()
			s.a.log.Warn("sattach refused: the user has as many here as they may", "job", s.j.id, "step", s.st.ID, "limit", maxAttachedPerUser)
			return false
		}
	}
	s.mu.Lock()
	if s.closed || (!srun && s.ending && len(s.procs) == 0) {
		s.mu.Unlock()
		c.Close()
		if !srun {
			s.a.giveAttach(uid)
		}
		return false
	}
	if !srun {
		attached := len(s.sinks)
		if s.srun != nil {
			attached-- // srun's own connection is one of the sinks
		}
		if attached >= maxAttached {
			s.mu.Unlock()
			c.Close()
			s.a.giveAttach(uid)
			s.a.log.Warn("sattach refused: the step has as many as it may", "job", s.j.id, "step", s.st.ID, "limit", maxAttached)
			return false
		}
	}
	s.sinks = append(s.sinks, c)
	if !s.sendDeadline.IsZero() {
		_ = c.SetWriteDeadline(s.sendDeadline)
	}
	if srun {
		s.srun = c
		if s.srunLoss != nil {
			s.srunLoss.Stop()
			s.srunLoss = nil
		}
	}
	s.mu.Unlock()
	if srun {
		go s.readClient(c)
	} else {
		go func() { s.readClient(c); s.a.giveAttach(uid) }()
	}
	return true
}

// takeAttach counts an sattach connection of uid's; false: uid has
// maxAttachedPerUser here.
func (a *Agent) takeAttach(uid uint32) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.attaching[uid] >= maxAttachedPerUser {
		return false
	}
	if a.attaching == nil {
		a.attaching = map[uint32]int{}
	}
	a.attaching[uid]++
	return true
}

// giveAttach ends what takeAttach counted.
func (a *Agent) giveAttach(uid uint32) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.attaching[uid]--; a.attaching[uid] <= 0 {
		delete(a.attaching, uid)
	}
}

// dropClient forgets a client that went away; losing srun arms the kill.
func (s *stepRun) dropClient(c *stepio.Conn) {
	s.mu.Lock()
	for i, x := range s.sinks {
		if x == c {
			s.sinks = append(s.sinks[:i:i], s.sinks[i+1:]...)
			break
		}
	}
	lost := s.srun == c
	if lost {
		s.srun = nil
	}
	s.mu.Unlock()
	c.Close()
	if lost {
		s.srunLost()
	}
}

// srunLost arms the kill of a step whose srun is gone, unless the step is
// ending anyway or srun comes back first.
func (s *stepRun) srunLost() {
	grace := s.a.srunGrace()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.ending || s.srunLoss != nil {
		return
	}
	s.srunLoss = time.AfterFunc(grace, func() {
		s.mu.Lock()
		gone := s.srun == nil && !s.closed && !s.ending
		s.srunLoss = nil
		s.mu.Unlock()
		if gone {
			s.a.log.Warn("srun is gone: killing the step", "job", s.j.id, "step", s.st.ID, "after", grace)
			s.terminate(s.a.getKillWait(), model.JobCancelled)
		}
	})
}

// srunGrace is how long a step waits for its lost srun: MessageTimeout.
func (a *Agent) srunGrace() time.Duration {
	if a.srunGraceFor > 0 {
		return a.srunGraceFor
	}
	return a.msgTimeout()
}

// readClient serves what a client sends: stdin, signals, window sizes.
func (s *stepRun) readClient(c *stepio.Conn) {
	defer s.dropClient(c)
	for {
		t, _, p, err := c.Recv()
		if err != nil {
			return
		}
		switch t {
		case stepio.Stdin:
			s.input(p)
		case stepio.StdinEOF:
			s.mu.Lock()
			if s.srun != c {
				// sattach's input ended, not srun's: the tasks read on.
				s.mu.Unlock()
				continue
			}
			for r, q := range s.inputs {
				q.closeWrite()
				delete(s.inputs, r)
			}
			s.mu.Unlock()
		case stepio.Signal:
			if n := atoi(string(p)); n > 0 {
				s.signal(syscall.Signal(n))
			}
		case stepio.Winch:
			s.winch(string(p))
		}
	}
}

// input gives srun's stdin to the tasks that read it.
func (s *stepRun) input(p []byte) {
	s.mu.Lock()
	qs := make([]*stdinQueue, 0, len(s.inputs))
	for _, q := range s.inputs {
		qs = append(qs, q)
	}
	tty := s.tty
	if tty == nil && s.st.Spec.Pty && !s.closed {
		s.early().keep(p)
	}
	s.mu.Unlock()
	if tty != nil {
		tty.write(p)
	}
	for _, q := range qs {
		q.push(p)
	}
}

// winch sizes a --pty task's terminal ("ROWS COLS").
func (s *stepRun) winch(v string) {
	s.mu.Lock()
	tty := s.tty
	if tty == nil && s.st.Spec.Pty && !s.closed {
		s.early().size = v
	}
	s.mu.Unlock()
	if tty != nil {
		tty.resize(v)
	}
}

// early is where input for a --pty task waits for its terminal; the
// caller holds s.mu.
func (s *stepRun) early() *ptyEarly {
	if s.ttyEarly == nil {
		s.ttyEarly = &ptyEarly{}
	}
	return s.ttyEarly
}

// closeInput ends a task's stdin (the task ended): what is queued for it
// is dropped.
func (s *stepRun) closeInput(rank int) {
	s.mu.Lock()
	q := s.inputs[rank]
	delete(s.inputs, rank)
	s.mu.Unlock()
	if q != nil {
		q.abort()
	}
}

// send writes a frame to every client; a client that went away is dropped
// (srun killed: the tasks go on until srunGrace ends, their output is
// discarded).
func (s *stepRun) send(t byte, task uint32, p []byte) {
	s.mu.Lock()
	sinks := append([]*stepio.Conn(nil), s.sinks...)
	s.mu.Unlock()
	for _, c := range sinks {
		if err := c.Send(t, task, p); err != nil {
			s.dropClient(c)
		}
	}
}

// boundSends gives the writes to the step's clients a deadline once the
// step ends. While tasks run, a client that reads slowly holds their output
// back (as Slurm's does); an ending step must not wait on it for ever: a
// stalled srun (its own stdout full) would otherwise keep the kill, the
// last frames and so the step's end, and the job's, from happening. A
// client whose writes time out is dropped. Clients added later get the same
// deadline.
func (s *stepRun) boundSends() {
	deadline := time.Now().Add(s.a.msgTimeout()) // a socket deadline: wall time
	s.mu.Lock()
	s.sendDeadline = deadline
	sinks := append([]*stepio.Conn(nil), s.sinks...)
	s.mu.Unlock()
	for _, c := range sinks {
		_ = c.SetWriteDeadline(deadline)
	}
}

// closeSinks ends the step's client connections once its tasks are over.
func (s *stepRun) closeSinks() {
	s.mu.Lock()
	sinks := s.sinks
	s.sinks, s.srun, s.closed = nil, nil, true
	if s.srunLoss != nil {
		s.srunLoss.Stop()
		s.srunLoss = nil
	}
	s.mu.Unlock()
	for _, c := range sinks {
		_ = c.CloseWrite()
		go func(c *stepio.Conn) {
			// Let the client read the last frames before the close.
			time.Sleep(2 * time.Second)
			c.Close()
		}(c)
	}
}

// taskOut sends one task's stdout or stderr to the clients.
type taskOut struct {
	s    *stepRun
	t    byte
	rank uint32
}

func (w taskOut) Write(p []byte) (int, error) {
	const chunk = 512 << 10
	for off := 0; off < len(p); off += chunk {
		w.s.send(w.t, w.rank, p[off:min(off+chunk, len(p))])
	}
	return len(p), nil
}

// attach connects an sattach client to a running step's I/O.
func (a *Agent) attach(m *pb.AttachIO) {
	s := a.findStep(m.JobId, m.StepId)
	if s == nil {
		return
	}
	go func() {
		conn, err := stepio.Dial(m.IoAddr, m.IoKey, stepio.Hello{Job: m.JobId, Step: m.StepId, Node: s.index})
		if err != nil {
			a.log.Warn("cannot reach sattach", "job", m.JobId, "step", m.StepId, "err", err)
			return
		}
		s.addClient(conn, false)
	}()
}

// stdinQueue feeds one task's stdin pipe from a bounded queue, so that
// one task that does not read holds back neither the others nor (until
// stdinLimit) srun's other frames, and the agent never holds more than
// stdinLimit of it.
type stdinQueue struct {
	w     *io.PipeWriter
	limit int

	mu     sync.Mutex
	cond   *sync.Cond
	buf    [][]byte
	n      int  // bytes in buf
	eof    bool // close the pipe once buf is written
	closed bool // aborted: drop everything
}

func newStdinQueue(w *io.PipeWriter, limit int) *stdinQueue {
	q := &stdinQueue{w: w, limit: limit}
	q.cond = sync.NewCond(&q.mu)
	go q.pump()
	return q
}

// push queues a copy of p, waiting while the queue is full.
func (q *stdinQueue) push(p []byte) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.n >= q.limit && !q.closed {
		q.cond.Wait()
	}
	if q.closed || q.eof {
		return
	}
	q.buf = append(q.buf, append([]byte(nil), p...))
	q.n += len(p)
	q.cond.Broadcast()
}

// closeWrite closes the task's stdin after what is queued.
func (q *stdinQueue) closeWrite() {
	q.mu.Lock()
	q.eof = true
	q.cond.Broadcast()
	q.mu.Unlock()
}

// abort closes the task's stdin now, dropping what is queued.
func (q *stdinQueue) abort() {
	q.mu.Lock()
	q.closed, q.buf, q.n = true, nil, 0
	q.cond.Broadcast()
	q.mu.Unlock()
	q.w.CloseWithError(io.ErrClosedPipe)
}

// queued is how many bytes wait for the task.
func (q *stdinQueue) queued() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.n
}

func (q *stdinQueue) pump() {
	for {
		q.mu.Lock()
		for len(q.buf) == 0 && !q.eof && !q.closed {
			q.cond.Wait()
		}
		if q.closed {
			q.mu.Unlock()
			return
		}
		if len(q.buf) == 0 { // eof, all written
			q.mu.Unlock()
			q.w.Close()
			return
		}
		p := q.buf[0]
		q.buf = q.buf[1:]
		q.mu.Unlock()
		_, err := q.w.Write(p)
		q.mu.Lock()
		q.n -= len(p)
		if q.n < 0 || q.closed {
			q.n = 0
		}
		q.cond.Broadcast()
		q.mu.Unlock()
		if err != nil {
			q.abort()
			return
		}
	}
}
