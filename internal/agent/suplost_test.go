package agent

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	pb "github.com/drover-hpc/drover/api/drover/v1"
	"github.com/drover-hpc/drover/internal/executor"
	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/wire"
)

// startGroup starts argv in a process group of its own, reaped when it
// ends (as init reaps a program whose supervisor died); the test kills
// what is left at its end.
func startGroup(t *testing.T, argv ...string) int {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	reaped := make(chan struct{})
	go func() { _ = cmd.Wait(); close(reaped) }()
	pgid := cmd.Process.Pid
	t.Cleanup(func() {
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-reaped
	})
	return pgid
}

// awaitGone waits (bounded) until process group pgid is empty.
func awaitGone(t *testing.T, pgid int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for executor.GroupAlive(pgid) {
		if time.Now().After(deadline) {
			t.Fatalf("process group %d still there after 10 s", pgid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// lostExec starts each program for real, then behaves like the handle of
// a supervisor that died at once: Wait returns ErrSupervisorLost, signals
// reach nothing.
type lostExec struct {
	t       *testing.T
	argv    []string
	started chan int // each program's group, if not nil
}

func (e lostExec) Start(*executor.Spec) (executor.Process, error) {
	pgid := startGroup(e.t, e.argv...)
	if e.started != nil {
		e.started <- pgid
	}
	return lostProc{pgid: pgid}, nil
}

type lostProc struct{ pgid int }

func (p lostProc) Pid() int                    { return p.pgid }
func (p lostProc) Signal(syscall.Signal) error { return os.ErrProcessDone }
func (p lostProc) Terminate(time.Duration)     {}
func (p lostProc) Wait() executor.Result       { return executor.Result{Err: executor.ErrSupervisorLost} }

// jobEndWithin returns the JobEnded the agent reports within d, or nil.
func jobEndWithin(a *Agent, d time.Duration) *pb.JobEnded {
	deadline := time.After(d)
	for {
		select {
		case m := <-a.outbox:
			if e := m.GetJobEnded(); e != nil {
				return e
			}
		case <-deadline:
			return nil
		}
	}
}

func wantNodeFail(t *testing.T, e *pb.JobEnded) {
	t.Helper()
	if e == nil {
		t.Fatal("no JobEnded reported within 10 s")
	}
	if model.JobState(e.State) != model.JobNodeFail || e.ExitCode != 0 || e.Signal != 0 {
		t.Errorf("job ended state %v exit %d:%d, want NODE_FAIL 0:0 (exit status unknown)", model.JobState(e.State), e.ExitCode, e.Signal)
	}
}

// TestSupervisorLossKeepsRunningJob: the supervisor dies while the batch
// script runs on (reparented). The job is not declared ended; a cancel
// still reaches its processes; once they are gone the job ends NODE_FAIL.
// Before, it was reported FAILED with exit code 1 at once, its processes
// left running out of reach.
func TestSupervisorLossKeepsRunningJob(t *testing.T) {
	a, _ := testAgent(t)
	a.exec = lostExec{t: t, argv: []string{"sleep", "300"}}
	j := testBatchJob(t, &model.JobSpec{Script: "#!/bin/sh\nsleep 300\n"})
	a.mu.Lock()
	a.jobs[j.id] = j
	a.mu.Unlock()
	go a.run(j)
	s := jobStarted(t, a)
	// A negative check needs a bound: the agent would end it at once.
	if e := jobEndWithin(a, time.Second); e != nil {
		t.Fatalf("job reported ended (state %v, exit %d) while its processes still run", model.JobState(e.State), e.ExitCode)
	}
	if !executor.GroupAlive(int(s.Pid)) {
		t.Fatal("the job's processes are gone before the cancel")
	}
	a.terminateJob(j, "", model.JobCancelled)
	awaitGone(t, int(s.Pid))
	wantNodeFail(t, jobEndWithin(a, 10*time.Second))
}

// TestSupervisorLossJobGone: the supervisor died and took the job's
// processes with it: NODE_FAIL, not FAILED with a made-up exit code.
func TestSupervisorLossJobGone(t *testing.T) {
	a, _ := testAgent(t)
	a.exec = lostExec{t: t, argv: []string{"true"}}
	j := testBatchJob(t, &model.JobSpec{Script: "#!/bin/sh\ntrue\n"})
	a.mu.Lock()
	a.jobs[j.id] = j
	a.mu.Unlock()
	go a.run(j)
	// A job this short may be reported by its end alone (JobStarted goes
	// out only after startedAfter), so read whatever comes up to the end.
	deadline := time.After(10 * time.Second)
	for {
		select {
		case m := <-a.outbox:
			if s := m.GetJobStarted(); s != nil {
				awaitGone(t, int(s.Pid))
			}
			if e := m.GetJobEnded(); e != nil {
				wantNodeFail(t, e)
				return
			}
		case <-deadline:
			t.Fatal("no JobEnded reported within 10 s")
		}
	}
}

// TestRestartWithoutSupervisor: a restarted agent finds a job record but
// no supervisor that holds it. It takes the job back while its processes
// run (before: forgot it, and its processes ran on unaccounted), and
// reports it NODE_FAIL once they are gone.
func TestRestartWithoutSupervisor(t *testing.T) {
	for _, alive := range []bool{true, false} {
		a, _ := testAgent(t)
		mj := testBatchJob(t, &model.JobSpec{Script: "#!/bin/sh\n"}).model
		dir := a.superDir(7)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		b, err := proto.Marshal(wire.JobToPB(mj, wire.Full))
		if err != nil {
			t.Fatal(err)
		}
		argv := []string{"true"}
		if alive {
			argv = []string{"sleep", "300"}
		}
		pgid := startGroup(t, argv...)
		if !alive {
			awaitGone(t, pgid)
		}
		for name, data := range map[string][]byte{"job.pb": b, "meta.json": []byte("{}"), "pgid": []byte(strconv.Itoa(pgid))} {
			if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		j, err := a.reattach(7, dir) // a.sup is nil: no supervisor
		if err != nil {
			t.Fatalf("alive=%v: job not taken back: %v", alive, err)
		}
		if j.proc.Pid() != pgid {
			t.Errorf("taken back with group %d, want %d", j.proc.Pid(), pgid)
		}
		a.mu.Lock()
		a.jobs[7] = j
		a.mu.Unlock()
		go a.resume(j)
		if alive {
			if e := jobEndWithin(a, time.Second); e != nil {
				t.Fatalf("job reported ended (state %v) while its processes still run", model.JobState(e.State))
			}
			if err := j.proc.Signal(syscall.SIGKILL); err != nil {
				t.Errorf("signal to the taken-back job: %v", err)
			}
			awaitGone(t, pgid)
		}
		wantNodeFail(t, jobEndWithin(a, 10*time.Second))
	}
}

// stepEndWithin returns the StepEnded the agent reports within d, or nil.
func stepEndWithin(a *Agent, d time.Duration) *pb.StepEnded {
	deadline := time.After(d)
	for {
		select {
		case m := <-a.outbox:
			if e := m.GetStepEnded(); e != nil {
				return e
			}
		case <-deadline:
			return nil
		}
	}
}

// TestSupervisorLossKeepsStepTask: a step's task outlives its supervisor
// as a batch script does: the step is not ended while the task runs, a
// cancel reaches it; a task gone with its supervisor ends the step
// NODE_FAIL. Before, the step ended FAILED at once.
func TestSupervisorLossKeepsStepTask(t *testing.T) {
	a, _ := testAgent(t)
	ex := lostExec{t: t, argv: []string{"sleep", "300"}, started: make(chan int, 1)}
	a.exec = ex
	s := testStep(a, &model.StepSpec{Argv: []string{"sleep", "300"}}, 0)
	go s.run()
	var pgid int
	select {
	case pgid = <-ex.started:
	case <-time.After(10 * time.Second):
		t.Fatal("the step's task did not start within 10 s")
	}
	if e := stepEndWithin(a, time.Second); e != nil {
		t.Fatalf("step reported ended (state %v, exit %d) while its task still runs", model.JobState(e.State), e.ExitCode)
	}
	s.terminate(time.Second, model.JobCancelled)
	awaitGone(t, pgid)
	if e := stepEndWithin(a, 10*time.Second); e == nil || model.JobState(e.State) != model.JobCancelled {
		t.Errorf("step end %+v, want CANCELLED", e)
	}

	a2, _ := testAgent(t)
	ex2 := lostExec{t: t, argv: []string{"true"}, started: make(chan int, 1)}
	a2.exec = ex2
	go testStep(a2, &model.StepSpec{Argv: []string{"true"}}, 0).run()
	select {
	case pgid = <-ex2.started:
	case <-time.After(10 * time.Second):
		t.Fatal("the step's task did not start within 10 s")
	}
	e := stepEndWithin(a2, 10*time.Second)
	if e == nil || model.JobState(e.State) != model.JobNodeFail || e.ExitCode != 0 {
		t.Errorf("step end %+v, want NODE_FAIL exit 0", e)
	}
}
