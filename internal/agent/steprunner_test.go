package agent

import (
	"context"
	"errors"
	"io"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	pb "github.com/drover-hpc/drover/api/drover/v1"
	"github.com/drover-hpc/drover/internal/executor"
	"github.com/drover-hpc/drover/internal/executor/fake"
	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/stepio"
)

// stepEnd waits for the step end the agent reports.
func stepEnd(t *testing.T, a *Agent) *pb.StepEnded {
	t.Helper()
	deadline := time.After(15 * time.Second)
	for {
		select {
		case m := <-a.outbox:
			if e := m.GetStepEnded(); e != nil {
				return e
			}
		case <-deadline:
			t.Fatal("no StepEnded reported within 15s")
			return nil
		}
	}
}

func started(t *testing.T, ex *fake.Executor) *fake.Process {
	t.Helper()
	select {
	case p := <-ex.Started():
		return p
	case <-time.After(10 * time.Second):
		t.Fatal("no task launched within 10s")
		return nil
	}
}

// waitFor polls cond (a state the agent reaches on its own) for up to 10s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out after 10s waiting for %s", what)
}

func TestStepRunnerRunsTasksOnExecutor(t *testing.T) {
	a, ex := testAgent(t)
	s := testStep(a, &model.StepSpec{Argv: []string{"/bin/app"}}, 0, 1, 2)
	go s.run()
	byRank := map[string]*fake.Process{}
	for range 3 {
		p := started(t, ex)
		v, _ := envOf(p.Spec.Env, "SLURM_PROCID")
		byRank[v] = p
	}
	if len(byRank) != 3 || byRank["0"] == nil || byRank["2"] == nil {
		t.Fatalf("ranks launched: %v", byRank)
	}
	byRank["0"].Exit(executor.Result{})
	byRank["1"].Exit(executor.Result{ExitCode: 3})
	byRank["2"].Exit(executor.Result{})
	e := stepEnd(t, a)
	if e.JobId != 7 || e.StepId != 0 || e.ExitCode != 3 || e.Signal != 0 || e.State != 0 || e.Node != "n1" {
		t.Errorf("step end %+v: want exit 3 (the highest), state derived", e)
	}
	if a.findStep(7, 0) != nil {
		t.Error("ended step still recorded")
	}
	if a.pendingCount() != 1 {
		t.Errorf("step end not kept until confirmed: %d pending", a.pendingCount())
	}
}

func TestStepRunnerFailures(t *testing.T) {
	t.Run("launch refused", func(t *testing.T) {
		a, ex := testAgent(t)
		ex.StartErr = fake.ErrRefused
		s := testStep(a, &model.StepSpec{Argv: []string{"x"}}, 0)
		go s.run()
		if e := stepEnd(t, a); model.JobState(e.State) != model.JobFailed || e.ExitCode != 1 {
			t.Errorf("refused launch: %+v, want FAILED 1", e)
		}
	})
	t.Run("hook fails", func(t *testing.T) {
		a, ex := testAgent(t)
		a.iso.cg = failingCgroups{a.iso.cg}
		s := testStep(a, &model.StepSpec{Argv: []string{"x"}}, 0)
		go s.run()
		if e := stepEnd(t, a); model.JobState(e.State) != model.JobFailed || e.ExitCode != 1 {
			t.Errorf("failed cgroup: %+v, want FAILED 1", e)
		}
		if n := len(ex.Processes()); n != 0 {
			t.Errorf("%d tasks launched after a hook failed", n)
		}
	})
	t.Run("cancelled before launch", func(t *testing.T) {
		a, ex := testAgent(t)
		s := testStep(a, &model.StepSpec{Argv: []string{"x"}}, 0)
		s.terminate(time.Second, model.JobCancelled)
		go s.run()
		e := stepEnd(t, a)
		if e.Signal != int32(syscall.SIGKILL) || model.JobState(e.State) != model.JobCancelled || len(ex.Processes()) != 0 {
			t.Errorf("cancelled step: %+v, %d launched", e, len(ex.Processes()))
		}
	})
}

// TestSrunLossKillsStep: srun dies (its connection closes) and does not
// come back within the grace: the step is killed, CANCELLED.
func TestSrunLossKillsStep(t *testing.T) {
	a, ex := testAgent(t)
	a.srunGraceFor = 100 * time.Millisecond
	srun := newFakeSrun(t)
	s := testStep(a, &model.StepSpec{Argv: []string{"x"}, IOAddr: srun.ln.Addr().String(), IOKey: srun.key}, 0)
	go s.run()
	c := srun.next(t)
	p := started(t, ex)
	c.Close() // srun killed
	select {
	case <-p.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("step still running 10s after its srun was lost")
	}
	if e := stepEnd(t, a); model.JobState(e.State) != model.JobCancelled {
		t.Errorf("step end %+v, want CANCELLED", e)
	}
}

// TestSrunBackInTimeKeepsStep: srun's connection comes back (a later agent
// dials it again) before the grace ends: the step runs on.
func TestSrunBackInTimeKeepsStep(t *testing.T) {
	a, ex := testAgent(t)
	grace := 200 * time.Millisecond
	a.srunGraceFor = grace
	srun := newFakeSrun(t)
	spec := &model.StepSpec{Argv: []string{"x"}, IOAddr: srun.ln.Addr().String(), IOKey: srun.key}
	s := testStep(a, spec, 0)
	go s.run()
	c := srun.next(t)
	p := started(t, ex)
	c.Close()
	waitFor(t, "the agent to notice srun's connection closed", func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.srun == nil
	})
	conn, err := stepio.Dial(spec.IOAddr, spec.IOKey, stepio.Hello{Job: 7})
	if err != nil {
		t.Fatal(err)
	}
	s.addClient(conn, true)
	back := srun.next(t)
	defer back.Close()
	select {
	case <-p.Done():
		t.Fatal("step killed although srun came back within the grace")
	case <-time.After(5 * grace): // past the grace: a kill would have come
	}
	p.Exit(executor.Result{})
	if e := stepEnd(t, a); e.State != 0 || e.ExitCode != 0 {
		t.Errorf("step end %+v", e)
	}
}

// TestSattachStdinEOFKeepsSrunStdin: an sattach that ends its input does
// not close the tasks' stdin; srun's end of input does.
func TestSattachStdinEOFKeepsSrunStdin(t *testing.T) {
	a, ex := testAgent(t)
	srun := newFakeSrun(t)
	spec := &model.StepSpec{Argv: []string{"cat"}, IOAddr: srun.ln.Addr().String(), IOKey: srun.key}
	s := testStep(a, spec, 0)
	go s.run()
	sc := srun.next(t)
	defer sc.Close()
	p := started(t, ex)
	att, err := stepio.Dial(spec.IOAddr, spec.IOKey, stepio.Hello{Job: 7})
	if err != nil {
		t.Fatal(err)
	}
	s.addClient(att, false)
	ac := srun.next(t) // the sattach side
	defer ac.Close()
	if err := ac.Send(stepio.StdinEOF, stepio.AllTasks, nil); err != nil {
		t.Fatal(err)
	}
	// Frames from different clients are not ordered: send srun's input
	// only once the sattach's EOF was served (its reader goes on).
	if err := ac.Send(stepio.Stdin, stepio.AllTasks, []byte("A")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 16)
	n, err := io.ReadAtLeast(p.Spec.StdinR, buf, 1)
	if err != nil || string(buf[:n]) != "A" {
		t.Fatalf("after sattach's EOF the task read %q, %v", buf[:n], err)
	}
	if err := sc.Send(stepio.Stdin, stepio.AllTasks, []byte("from srun")); err != nil {
		t.Fatal(err)
	}
	n, err = io.ReadAtLeast(p.Spec.StdinR, buf, 9)
	if err != nil || string(buf[:n]) != "from srun" {
		t.Fatalf("srun's input after sattach's EOF: %q, %v", buf[:n], err)
	}
	if err := sc.Send(stepio.StdinEOF, stepio.AllTasks, nil); err != nil {
		t.Fatal(err)
	}
	if n, err := p.Spec.StdinR.Read(buf); err != io.EOF {
		t.Fatalf("srun's end of input: read %q, %v, want EOF", buf[:n], err)
	}
	p.Exit(executor.Result{})
	stepEnd(t, a)
}

// TestSlowStdinReaderHoldsBackNoOther: a task that does not read its
// stdin does not stop the others' (below the queue's bound), nor srun's
// signals.
func TestSlowStdinReaderHoldsBackNoOther(t *testing.T) {
	a, ex := testAgent(t)
	srun := newFakeSrun(t)
	spec := &model.StepSpec{Argv: []string{"x"}, IOAddr: srun.ln.Addr().String(), IOKey: srun.key, Input: "all"}
	s := testStep(a, spec, 0, 1)
	go s.run()
	sc := srun.next(t)
	defer sc.Close()
	ps := map[string]*fake.Process{}
	for range 2 {
		p := started(t, ex)
		v, _ := envOf(p.Spec.Env, "SLURM_PROCID")
		ps[v] = p
	}
	chunk := make([]byte, 32<<10)
	const frames = 4 // 128 KiB: more than a pipe holds, less than stdinLimit
	got := make(chan int, 1)
	go func() {
		n, _ := io.ReadAtLeast(ps["1"].Spec.StdinR, make([]byte, frames*len(chunk)), frames*len(chunk))
		got <- n
	}()
	for range frames {
		if err := sc.Send(stepio.Stdin, stepio.AllTasks, chunk); err != nil {
			t.Fatal(err)
		}
	}
	if err := sc.Send(stepio.Signal, stepio.AllTasks, []byte("10")); err != nil {
		t.Fatal(err)
	}
	select {
	case n := <-got:
		if n != frames*len(chunk) {
			t.Errorf("task 1 read %d bytes", n)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("task 1's stdin held back by task 0, which does not read")
	}
	waitFor(t, "SIGUSR1 to reach the tasks", func() bool {
		sigs := ps["0"].Signals()
		return len(sigs) > 0 && sigs[0] == syscall.SIGUSR1
	})
	ps["0"].Exit(executor.Result{})
	ps["1"].Exit(executor.Result{})
	stepEnd(t, a)
}

func TestStdinQueue(t *testing.T) {
	r, w := io.Pipe()
	q := newStdinQueue(w, 8)
	q.push([]byte("abcd"))
	q.push([]byte("efgh")) // at the bound, still taken
	pushed := make(chan struct{})
	go func() { q.push([]byte("ij")); close(pushed) }()
	select {
	case <-pushed:
		t.Fatal("push past the bound did not wait for the reader")
	case <-time.After(50 * time.Millisecond):
	}
	buf := make([]byte, 10)
	if n, err := io.ReadFull(r, buf); err != nil || string(buf[:n]) != "abcdefghij" {
		t.Fatalf("read %q %v", buf[:n], err)
	}
	<-pushed
	waitFor(t, "the queue to empty once all was read", func() bool { return q.queued() == 0 })
	q.push([]byte("last"))
	q.closeWrite()
	b, err := io.ReadAll(r)
	if err != nil || string(b) != "last" {
		t.Errorf("closeWrite lost queued input: %q %v", b, err)
	}

	r2, w2 := io.Pipe()
	q2 := newStdinQueue(w2, 4)
	q2.push([]byte("1234"))
	blocked := make(chan struct{})
	go func() { q2.push([]byte("5")); close(blocked) }()
	q2.abort()
	select {
	case <-blocked:
	case <-time.After(10 * time.Second):
		t.Fatal("abort did not release a waiting push")
	}
	if _, err := r2.Read(buf); !errors.Is(err, io.ErrClosedPipe) {
		t.Errorf("read after abort: %v", err)
	}
}

// recHook records the pipeline's calls; fail makes its Prestart fail.
type recHook struct {
	name string
	log  *[]string
	fail bool
}

func (h recHook) Name() string { return h.name }
func (h recHook) Prestart(_ context.Context, sc *stepCtx) error {
	*h.log = append(*h.log, "pre:"+h.name)
	if h.fail {
		return errors.New("refused")
	}
	return nil
}
func (h recHook) Poststart(*stepCtx) { *h.log = append(*h.log, "start:"+h.name) }
func (h recHook) Poststop(*stepCtx)  { *h.log = append(*h.log, "stop:"+h.name) }

// TestRunnerHookContract: Prestart in order, tasks launched, Poststart in
// order, Poststop in reverse; a failing Prestart stops the launch, fails
// the step and still runs the Poststop of the hooks before it.
func TestRunnerHookContract(t *testing.T) {
	a, ex := testAgent(t)
	var log []string
	s := testStep(a, &model.StepSpec{Argv: []string{"x"}}, 0)
	hooks := []stepHook{recHook{name: "a", log: &log}, stepEnvHook{}, tasksHook{hooks: []taskHook{taskCommandHook{}}}, recHook{name: "b", log: &log}}
	done := make(chan model.JobState, 1)
	go func() { _, _, st := s.runHooks(hooks); done <- st }()
	started(t, ex).Exit(executor.Result{})
	if st := <-done; st != 0 {
		t.Errorf("state %v", st)
	}
	want := []string{"pre:a", "pre:b", "start:a", "start:b", "stop:b", "stop:a"}
	if !slices.Equal(log, want) {
		t.Errorf("calls %q, want %q", log, want)
	}

	log = nil
	s2 := testStep(a, &model.StepSpec{Argv: []string{"x"}}, 0)
	hooks = []stepHook{recHook{name: "a", log: &log}, recHook{name: "bad", log: &log, fail: true}, recHook{name: "c", log: &log},
		tasksHook{hooks: []taskHook{taskCommandHook{}}}}
	code, _, st := s2.runHooks(hooks)
	if code != 1 || st != model.JobFailed || len(ex.Processes()) != 1 {
		t.Errorf("failed prestart: code %d state %v, %d launches", code, st, len(ex.Processes()))
	}
	if want := []string{"pre:a", "pre:bad", "stop:a"}; !slices.Equal(log, want) {
		t.Errorf("calls %q, want %q", log, want)
	}
}

// TestSattachBoundedPerUserOnNode: one user's sattach connections on a
// node are bounded all steps together (maxAttachedPerUser), not only per
// step: a user with many steps held maxAttached per step. Another user's
// are not held up, and a connection that ends makes room.
func TestSattachBoundedPerUserOnNode(t *testing.T) {
	a, _ := testAgent(t)
	srun := newFakeSrun(t)
	var mu sync.Mutex
	var far []*stepio.Conn // the sattach side of each connection
	go func() {
		for c := range srun.conns {
			mu.Lock()
			far = append(far, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range far {
			c.Close()
		}
	})
	attach := func(s *stepRun) bool {
		t.Helper()
		conn, err := stepio.Dial(srun.ln.Addr().String(), srun.key, stepio.Hello{Job: uint32(s.j.id)})
		if err != nil {
			t.Fatal(err)
		}
		return s.addClient(conn, false)
	}
	steps := maxAttachedPerUser / maxAttached
	for i := range steps {
		s := testStepFor(a, uint32(i+1))
		for k := range maxAttached {
			if !attach(s) {
				t.Fatalf("step %d: sattach %d refused within the bounds", i, k)
			}
		}
	}
	more := testStepFor(a, uint32(steps+1))
	if attach(more) {
		t.Fatalf("a sattach past %d of one user's on the node was kept", maxAttachedPerUser)
	}
	other := testStepFor(a, uint32(steps+2))
	other.j.model.UserID = 1001
	if !attach(other) {
		t.Error("another user's sattach was refused")
	}
	// One of the user's connections ends: room for one more.
	waitFor(t, "the sattach side of every kept connection", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(far) >= maxAttachedPerUser+1
	})
	mu.Lock()
	far[0].Close()
	mu.Unlock()
	waitFor(t, "the ended connection's count to come back", func() bool {
		a.mu.Lock()
		defer a.mu.Unlock()
		return a.attaching[0] < maxAttachedPerUser
	})
	if !attach(more) {
		t.Error("a sattach after one of the user's ended was refused")
	}
}
