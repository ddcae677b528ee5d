package controller

import (
	"io"
	"sync"
	"testing"
	"time"

	"github.com/drover-hpc/drover/internal/fsm"
	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/nodemsg"
	"github.com/drover-hpc/drover/internal/state"
)

// hooked commits like direct and runs after once after the first command
// of type on, in the committing goroutine: a commit "meanwhile".
type hooked struct {
	*direct
	on    fsm.Type
	after func()
	once  sync.Once
}

func (h *hooked) Apply(t fsm.Type, body any) (any, error) {
	res, err := h.direct.Apply(t, body)
	if t == h.on && h.after != nil {
		h.once.Do(h.after)
	}
	return res, err
}

// liveStream is an agent's stream that stays open until closed; what the
// controller sends is collected.
type liveStream struct {
	in     []nodemsg.FromNode
	closed chan struct{}

	mu  sync.Mutex
	out []nodemsg.ToNode
}

func (s *liveStream) Send(m nodemsg.ToNode) error {
	s.mu.Lock()
	s.out = append(s.out, m)
	s.mu.Unlock()
	return nil
}

func (s *liveStream) Recv() (nodemsg.FromNode, error) {
	if len(s.in) > 0 {
		m := s.in[0]
		s.in = s.in[1:]
		return m, nil
	}
	<-s.closed
	return nil, io.EOF
}

func (s *liveStream) launched(job model.JobID, step model.StepID) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range s.out {
		if l, ok := m.(*nodemsg.LaunchStep); ok && l.Job.ID == job && l.Step.ID == step {
			return true
		}
	}
	return false
}

// launchFixture: node n1 runs job 1; its agent's stream is old, a stream
// that takes messages and never delivers them (the connection that just
// dropped).
func launchFixture(t *testing.T) (*Controller, *state.Store, *hooked, uint32) {
	t.Helper()
	st := state.New(1)
	h := &hooked{direct: &direct{f: fsm.New(st, nil)}}
	c, run := oneJobFixture(t, st, h, 2)
	c.agents["n1"] = &agentConn{node: "n1", out: make(chan nodemsg.ToNode, 1024), done: make(chan struct{})}
	return c, st, h, run
}

// newStep commits a one-task step of job 1 on n1 and launches it, as the
// service does.
func newStep(t *testing.T, c *Controller, st *state.Store, h *hooked) model.StepID {
	res, err := h.direct.Apply(fsm.TypeCreateStep, &fsm.CreateStep{Job: 1, Spec: &model.StepSpec{}, Now: time.Now().Unix(),
		Layout: []model.StepNode{{Node: "n1", CPUs: 1, Tasks: []int{0}}}})
	if err != nil {
		t.Error(err)
		return 0
	}
	r := res.(fsm.CreateStepResult)
	if r.Err != nil {
		t.Error(r.Err)
		return 0
	}
	j := st.Snapshot().Job(1)
	c.LaunchStep(j, j.Step(r.Step))
	return r.Step
}

// TestStepLaunchedDuringRegistration: a step committed and launched while
// the node's agent re-registers (after its registration is committed,
// before its new stream takes over) is either sent on the new stream or
// ended on the node, so that srun learns of it; before, the launch went to
// the dropped stream and the step stayed RUNNING with no task.
func TestStepLaunchedDuringRegistration(t *testing.T) {
	c, st, h, run := launchFixture(t)
	made := make(chan model.StepID, 1)
	h.on = fsm.TypeNodeRegister
	h.after = func() { made <- newStep(t, c, st, h) }
	s := &liveStream{closed: make(chan struct{}), in: []nodemsg.FromNode{
		&nodemsg.Register{Node: "n1", CPUs: 2, Memory: 1000, Running: []model.JobID{1}, Runs: nodemsg.Runs{1: run}},
	}}
	done := make(chan error, 1)
	go func() { done <- c.ServeAgent(s, "127.0.0.1", "n1") }()
	defer func() {
		close(s.closed)
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	var step model.StepID
	select {
	case step = <-made:
	case <-time.After(5 * time.Second):
		t.Fatal("the registration was not committed within 5 s")
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		j := st.Snapshot().Job(1)
		stp := j.Step(step)
		if stp != nil && stp.Finished() {
			if stp.State != model.JobNodeFail {
				t.Errorf("step ended %v, want NODE_FAIL", stp.State)
			}
			if s.launched(1, step) {
				t.Error("the step was ended on the node and still sent to it")
			}
			return
		}
		if s.launched(1, step) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 5 s the step launched during the registration is neither sent on the new stream nor ended (state %v)", stp.State)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestStepLaunchedAfterRegistration: the new stream carries launches made
// once it took over, after Registered.
func TestStepLaunchedAfterRegistration(t *testing.T) {
	c, st, h, run := launchFixture(t)
	s := &liveStream{closed: make(chan struct{}), in: []nodemsg.FromNode{
		&nodemsg.Register{Node: "n1", CPUs: 2, Memory: 1000, Running: []model.JobID{1}, Runs: nodemsg.Runs{1: run}},
	}}
	done := make(chan error, 1)
	go func() { done <- c.ServeAgent(s, "127.0.0.1", "n1") }()
	deadline := time.Now().Add(5 * time.Second)
	for !s.answered() {
		if time.Now().After(deadline) {
			t.Fatal("the new stream did not take over within 5 s")
		}
		time.Sleep(5 * time.Millisecond)
	}
	step := newStep(t, c, st, h)
	for !s.launched(1, step) {
		if time.Now().After(deadline) {
			t.Fatal("the step was not sent on the new stream within 5 s")
		}
		time.Sleep(5 * time.Millisecond)
	}
	s.mu.Lock()
	if _, ok := s.out[0].(*nodemsg.Registered); !ok {
		t.Errorf("first message %T, want Registered", s.out[0])
	}
	s.mu.Unlock()
	close(s.closed)
	if err := <-done; err != nil {
		t.Error(err)
	}
}

// TestStaleLaunchNotSent: a launch whose step no longer waits for the node
// (ended there meanwhile) is not sent.
func TestStaleLaunchNotSent(t *testing.T) {
	c, st, h, _ := launchFixture(t)
	old := c.agents["n1"]
	res, err := h.Apply(fsm.TypeCreateStep, &fsm.CreateStep{Job: 1, Spec: &model.StepSpec{}, Now: time.Now().Unix(),
		Layout: []model.StepNode{{Node: "n1", CPUs: 1, Tasks: []int{0}}}})
	if err != nil {
		t.Fatal(err)
	}
	id := res.(fsm.CreateStepResult).Step
	j := st.Snapshot().Job(1)
	if _, err := h.Apply(fsm.TypeStepEnded, &fsm.StepEnded{Job: 1, Step: id, Node: "n1", Signal: 9, State: model.JobNodeFail, Now: time.Now().Unix()}); err != nil {
		t.Fatal(err)
	}
	c.LaunchStep(j, j.Step(id))
	if n := len(old.out); n != 0 {
		t.Errorf("%d messages queued for the node, want none", n)
	}
}

// answered reports whether the controller sent anything (Registered first).
func (s *liveStream) answered() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.out) > 0
}
