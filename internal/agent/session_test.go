package agent

import (
	"context"
	"errors"
	"sync"
	"syscall"
	"testing"
	"time"

	pb "github.com/drover-hpc/drover/api/drover/v1"
	"github.com/drover-hpc/drover/internal/executor"
	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/slurmconf"
)

// fakeController is the controller's end of one Connect stream: what the
// agent sends arrives on sent; what the test puts on toAgent the agent
// receives. With stuck set, Send blocks as a full flow-control window
// does, until the stream is cancelled.
type fakeController struct {
	ctx     context.Context
	sent    chan *pb.AgentMessage
	toAgent chan *pb.ControllerMessage
	stuck   bool
}

func newFakeController(ctx context.Context) *fakeController {
	return &fakeController{ctx: ctx, sent: make(chan *pb.AgentMessage, 1024), toAgent: make(chan *pb.ControllerMessage, 16)}
}

func (f *fakeController) Send(m *pb.AgentMessage) error {
	if f.stuck {
		<-f.ctx.Done()
		return f.ctx.Err()
	}
	select {
	case f.sent <- m:
		return nil
	case <-f.ctx.Done():
		return f.ctx.Err()
	}
}

func (f *fakeController) Recv() (*pb.ControllerMessage, error) {
	select {
	case m := <-f.toAgent:
		if m == nil {
			return nil, errors.New("stream broken")
		}
		return m, nil
	case <-f.ctx.Done():
		return nil, f.ctx.Err()
	}
}

// next returns the next message the agent sent that is not a heartbeat
// or a health verdict.
func (f *fakeController) next(t *testing.T) *pb.AgentMessage {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case m := <-f.sent:
			if m.GetHeartbeat() == nil && m.GetHealth() == nil {
				return m
			}
		case <-deadline:
			t.Fatal("the agent sent nothing within 10s")
			return nil
		}
	}
}

func registered(acks bool, killWait int64, cluster string) *pb.ControllerMessage {
	return &pb.ControllerMessage{Msg: &pb.ControllerMessage_Registered{Registered: &pb.Registered{
		Cluster: cluster, KillWait: killWait, AcksReports: acks}}}
}

// session runs one agent session against a fake controller; stop breaks
// the stream and returns serve's error.
func session(t *testing.T, a *Agent, reg *pb.ControllerMessage) (*fakeController, func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	f := newFakeController(ctx)
	errc := make(chan error, 1)
	go func() { errc <- a.serve(ctx, cancel, f) }()
	if m := f.next(t); m.GetRegister() == nil {
		t.Fatalf("first message %v, want Register", m)
	}
	f.toAgent <- reg
	return f, func() error {
		f.toAgent <- nil
		select {
		case err := <-errc:
			return err
		case <-time.After(10 * time.Second):
			t.Fatal("session did not end within 10s of its stream breaking")
			return nil
		}
	}
}

func stepEndMsg(job uint32, step int32, run uint32) *pb.AgentMessage {
	return &pb.AgentMessage{Msg: &pb.AgentMessage_StepEnded{StepEnded: &pb.StepEnded{JobId: job, StepId: step, Run: run}}}
}

// TestReportsResentUntilAcked: a step end and a start whose sends were
// lost with a stream are sent again on the next session, and again after
// resendAfter, until the controller confirms them.
func TestReportsResentUntilAcked(t *testing.T) {
	a, _ := testAgent(t)
	a.msgTimeoutFor = 50 * time.Millisecond
	a.conf().SlurmdTimeout = 800 * time.Millisecond // heartbeat every 200 ms
	a.reportReliable(reportKey{job: 5, step: 2, run: 1}, stepEndMsg(5, 2, 1))
	a.reportReliable(reportKey{job: 6, run: 1, started: true},
		&pb.AgentMessage{Msg: &pb.AgentMessage_JobStarted{JobStarted: &pb.JobStarted{JobId: 6, Run: 1}}})
	<-a.outbox // both were "sent" on a stream that then broke
	<-a.outbox

	f, stop := session(t, a, registered(true, 0, "c"))
	seen := map[string]bool{}
	for len(seen) < 2 {
		m := f.next(t)
		switch {
		case m.GetStepEnded() != nil:
			seen["step"] = true
		case m.GetJobStarted() != nil:
			seen["start"] = true
		}
	}
	// Unconfirmed: sent again while the stream lives.
	if m := f.next(t); m.GetStepEnded() == nil && m.GetJobStarted() == nil {
		t.Fatalf("unconfirmed report not resent: %v", m)
	}
	f.toAgent <- &pb.ControllerMessage{Msg: &pb.ControllerMessage_ReportAck{ReportAck: &pb.ReportAck{JobId: 5, StepId: 2, Run: 1}}}
	f.toAgent <- &pb.ControllerMessage{Msg: &pb.ControllerMessage_ReportAck{ReportAck: &pb.ReportAck{JobId: 6, Run: 1, Started: true}}}
	waitFor(t, "the confirmations to be applied", func() bool { return a.pendingCount() == 0 })
	_ = stop()

	// Nothing left to resend on the next session.
	f, stop = session(t, a, registered(true, 0, "c"))
	f.toAgent <- &pb.ControllerMessage{Msg: &pb.ControllerMessage_Signal{Signal: &pb.SignalJob{JobId: 99}}} // a marker
	hb := 0
	for hb < 3 {
		select {
		case m := <-f.sent:
			if m.GetStepEnded() != nil || m.GetJobStarted() != nil {
				t.Fatalf("confirmed report sent again: %v", m)
			}
			if m.GetHeartbeat() != nil {
				hb++
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no heartbeat within 10s")
		}
	}
	_ = stop()
}

// TestReportsToOlderController: a controller that confirms nothing gets
// each report once more after registration; the agent then forgets it.
func TestReportsToOlderController(t *testing.T) {
	a, _ := testAgent(t)
	a.msgTimeoutFor = 50 * time.Millisecond
	a.reportReliable(reportKey{job: 5, step: 2, run: 1}, stepEndMsg(5, 2, 1))
	<-a.outbox
	f, stop := session(t, a, registered(false, 0, "c"))
	if m := f.next(t); m.GetStepEnded() == nil {
		t.Fatalf("report not resent after registration: %v", m)
	}
	waitFor(t, "the report to be forgotten", func() bool { return a.pendingCount() == 0 })
	_ = stop()
}

// TestSendDeadline: a controller that stops reading cannot hold the
// agent's sends forever: the session ends within msgTimeout and the agent
// reconnects.
func TestSendDeadline(t *testing.T) {
	a, _ := testAgent(t)
	a.msgTimeoutFor = 100 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := newFakeController(ctx)
	f.stuck = true
	errc := make(chan error, 1)
	start := time.Now()
	go func() { errc <- a.serve(ctx, cancel, f) }()
	select {
	case err := <-errc:
		if !errors.Is(err, errSendTimeout) {
			t.Errorf("serve: %v, want a send timeout", err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("send gave up after %s", d)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a send to a controller that does not read blocked for 10s")
	}

	// The registration answer is bounded too.
	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	f2 := newFakeController(ctx2)
	go func() { errc <- a.serve(ctx2, cancel2, f2) }()
	select {
	case err := <-errc:
		if err == nil {
			t.Error("registration without an answer succeeded")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("waited 10s for a registration answer")
	}
}

func TestMessageTimeoutFromConfig(t *testing.T) {
	a, _ := testAgent(t)
	if a.msgTimeout() != DefaultMessageTimeout || a.srunGrace() != DefaultMessageTimeout {
		t.Errorf("defaults: %s %s", a.msgTimeout(), a.srunGrace())
	}
	a.conf().Raw = []slurmconf.KV{{Key: "MessageTimeout", Value: "25"}}
	if a.msgTimeout() != 25*time.Second || a.srunGrace() != 25*time.Second {
		t.Errorf("MessageTimeout=25: %s %s", a.msgTimeout(), a.srunGrace())
	}
}

// TestRegistrationSettingsRace: KillWait and ClusterName arrive with a
// registration while steps read them (go test -race).
func TestRegistrationSettingsRace(t *testing.T) {
	a, _ := testAgent(t)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for range 50 {
			s := testStepFor(a, 8)
			_ = (stepEnvHook{}).Prestart(context.Background(), newStepCtx(s))
			s.terminate(a.getKillWait(), 0)
		}
	}()
	_, stop := session(t, a, registered(true, 7, "newname"))
	wg.Wait()
	_ = stop()
	if a.getKillWait() != 7*time.Second || a.clusterName() != "newname" {
		t.Errorf("registration settings: %s %q", a.getKillWait(), a.clusterName())
	}
}

// testStepFor is a step of another job than testStep's, not recorded in
// the agent's jobs map (so tests may make many concurrently).
func testStepFor(a *Agent, id uint32) *stepRun {
	mj := &model.Job{ID: model.JobID(id), Alloc: []model.NodeAlloc{{Node: "n1", CPUs: 1}}, Spec: &model.JobSpec{}}
	j := newJob(id, mj, false)
	st := &model.Step{ID: 1, Spec: &model.StepSpec{Argv: []string{"x"}}, Layout: []model.StepNode{{Node: "n1", CPUs: 1, Tasks: []int{0}}}}
	local, idx, _ := st.LayoutOn("n1")
	return &stepRun{a: a, j: j, st: st, local: local, index: idx, procs: map[int]executor.Process{}, inputs: map[int]*stdinQueue{}}
}

// TestShutdownWaitsKillWait: a task that ignores SIGTERM is killed only
// after KillWait; the agent stays until then (it used to leave after a
// fixed 5 s, leaving the task running).
func TestShutdownWaitsKillWait(t *testing.T) {
	if testing.Short() {
		t.Skip("waits KillWait (6 s)")
	}
	t.Parallel() // it mostly waits: let the package's other tests run meanwhile
	a, ex := testAgent(t)
	ex.IgnoreTERM = true
	killWait := 6 * time.Second
	a.setKillWait(killWait)
	s := testStep(a, &model.StepSpec{Argv: []string{"trap"}}, 0)
	s.j.primary = false // a step's record: it cannot outlive the agent
	go s.run()
	p := started(t, ex)
	start := time.Now()
	a.shutdown()
	select {
	case <-p.Done():
	default:
		t.Fatalf("agent shut down after %s with a task still running", time.Since(start).Round(time.Millisecond))
	}
	if sigs := p.Signals(); len(sigs) != 2 || sigs[0] != syscall.SIGTERM || sigs[1] != syscall.SIGKILL {
		t.Errorf("signals %v, want SIGTERM then SIGKILL", sigs)
	}
	if d := time.Since(start); d < killWait {
		t.Errorf("task killed after %s, before KillWait", d)
	}
}

func TestUnkillableTimeoutFromConfig(t *testing.T) {
	cfg := &slurmconf.Config{}
	if d := unkillableTimeout(cfg); d != 0 {
		t.Errorf("unset: %s, want the executor's default", d)
	}
	cfg.Raw = []slurmconf.KV{{Key: "UnkillableStepTimeout", Value: "90"}}
	if d := unkillableTimeout(cfg); d != 90*time.Second {
		t.Errorf("UnkillableStepTimeout=90: %s", d)
	}
}
