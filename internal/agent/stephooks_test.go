package agent

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	pb "github.com/drover-hpc/drover/api/drover/v1"
	"github.com/drover-hpc/drover/internal/cgroups"
	"github.com/drover-hpc/drover/internal/executor"
	"github.com/drover-hpc/drover/internal/executor/fake"
	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/slurmconf"
	"github.com/drover-hpc/drover/internal/stepio"
)

// testAgent is an agent without a controller, cgroups or supervisor whose
// tasks run on a fake executor.
func testAgent(t *testing.T) (*Agent, *fake.Executor) {
	t.Helper()
	m, err := cgroups.New(cgroups.LayoutNone, "")
	if err != nil {
		t.Fatal(err)
	}
	ex := fake.New()
	a := &Agent{
		log: slog.New(slog.NewTextHandler(io.Discard, nil)), confPath: "slurm.conf",
		node: "n1", spool: t.TempDir(), jobs: map[uint32]*job{}, ends: map[uint32]*pb.JobEnded{},
		outbox: make(chan *pb.AgentMessage, 4096), pending: map[reportKey]*pendingReport{},
		iso:  &isolation{cg: m, every: time.Hour},
		exec: ex,
	}
	a.cfgp.Store(&slurmconf.Config{})
	a.iso.confp.Store(&slurmconf.CgroupConf{})
	a.setKillWait(time.Second)
	a.setCluster("testc")
	return a, ex
}

// testStep is a step of job 7 with ranks on node n1 (this agent's).
func testStep(a *Agent, spec *model.StepSpec, ranks ...int) *stepRun {
	mj := &model.Job{ID: 7, ArrayTaskID: model.NoArrayTask, Name: "j", Alloc: []model.NodeAlloc{{Node: "n1", CPUs: 4}},
		Spec: &model.JobSpec{WorkDir: "/tmp", Env: []string{"JOBVAR=1"}}, StartTime: time.Now().Unix()}
	j := newJob(7, mj, true)
	st := &model.Step{ID: 0, Spec: spec, NTasks: len(ranks), StartTime: time.Now().Unix(),
		Layout: []model.StepNode{{Node: "n1", CPUs: 4, Tasks: ranks}}}
	local, idx, _ := st.LayoutOn("n1")
	a.jobs[7] = j
	s := &stepRun{a: a, j: j, st: st, local: local, index: idx, procs: map[int]executor.Process{}, inputs: map[int]*stdinQueue{}}
	j.steps[st.ID] = s
	j.stepWG.Add(1)
	return s
}

func envOf(env []string, name string) (string, bool) {
	for _, e := range slices.Backward(env) {
		if v, ok := strings.CutPrefix(e, name+"="); ok {
			return v, true
		}
	}
	return "", false
}

func TestStepHooksOrder(t *testing.T) {
	var names []string
	for _, h := range stepHooks() {
		names = append(names, h.Name())
		if th, ok := h.(tasksHook); ok {
			for _, x := range th.hooks {
				names = append(names, "  "+x.Name())
			}
		}
	}
	want := []string{"env", "cgroup", "prolog", "tasks", "  command", "  task-env", "  task-gpus", "  task-prolog",
		"  task-stdio", "  task-cgroup", "srun-io", "time-limit"}
	if !slices.Equal(names, want) {
		t.Errorf("pipeline %q, want %q", names, want)
	}
}

func TestStepEnvHook(t *testing.T) {
	a, _ := testAgent(t)
	s := testStep(a, &model.StepSpec{Argv: []string{"x"}, Env: []string{"STEPVAR=2"}, IOAddr: "10.0.0.5:4242"}, 0)
	sc := newStepCtx(s)
	if err := (stepEnvHook{}).Prestart(context.Background(), sc); err != nil {
		t.Fatal(err)
	}
	if sc.srunHost != "10.0.0.5" || sc.srunPort != 4242 {
		t.Errorf("srun address %s:%d", sc.srunHost, sc.srunPort)
	}
	if sc.dir != "/tmp" {
		t.Errorf("dir %q: the job's when the step names none", sc.dir)
	}
	for name, want := range map[string]string{"SLURM_JOB_ID": "7", "SLURM_CLUSTER_NAME": "testc", "STEPVAR": "2"} {
		if v, _ := envOf(sc.base, name); v != want {
			t.Errorf("%s=%q, want %q", name, v, want)
		}
	}
	if v, _ := envOf(sc.base, "SLURM_CONF"); !filepath.IsAbs(v) {
		t.Errorf("SLURM_CONF=%q, want an absolute path", v)
	}
	if _, ok := envOf(sc.base, "JOBVAR"); ok {
		t.Error("the step's environment replaces the job's")
	}
	if v, _ := envOf(sc.base, "HOME"); v == "" {
		t.Error("HOME not set from the user's entry")
	}
	s.st.Spec.SrunHost, s.st.Spec.WorkDir = "login1", "/var"
	sc = newStepCtx(s)
	_ = (stepEnvHook{}).Prestart(context.Background(), sc)
	if sc.srunHost != "login1" || sc.dir != "/var" {
		t.Errorf("SrunHost/WorkDir ignored: %q %q", sc.srunHost, sc.dir)
	}
}

type failingCgroups struct{ cgroups.Manager }

func (failingCgroups) Create(string, cgroups.Limits) (cgroups.Group, error) {
	return nil, errors.New("no space")
}

func TestStepCgroupHook(t *testing.T) {
	a, _ := testAgent(t)
	s := testStep(a, &model.StepSpec{Argv: []string{"x"}}, 0)
	sc := newStepCtx(s)
	if err := (stepCgroupHook{}).Prestart(context.Background(), sc); err != nil {
		t.Fatal(err)
	}
	if sc.group == nil || sc.group.Rel() != "job_7/step_0" || s.sampler() == nil {
		t.Errorf("group %v sampler %v", sc.group, s.sampler())
	}
	a.iso.cg = failingCgroups{a.iso.cg}
	s.j.cg = nil
	if err := (stepCgroupHook{}).Prestart(context.Background(), newStepCtx(s)); err == nil {
		t.Error("a step whose cgroup cannot be made must fail")
	}
}

func TestStepPrologHook(t *testing.T) {
	a, _ := testAgent(t)
	dir := t.TempDir()
	mark := filepath.Join(dir, "ran")
	prolog := filepath.Join(dir, "prolog")
	if err := os.WriteFile(prolog, []byte("#!/bin/sh\necho $SLURM_JOB_ID >> "+mark+"\nexit ${FAIL:-0}\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	a.conf().Prolog = prolog
	s := testStep(a, &model.StepSpec{Argv: []string{"x"}}, 0)
	if err := (stepPrologHook{}).Prestart(context.Background(), newStepCtx(s)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(mark); err == nil {
		t.Error("Prolog ran for a step on the batch host (the job's launch runs it there)")
	}
	s.j.primary = false
	for range 2 {
		if err := (stepPrologHook{}).Prestart(context.Background(), newStepCtx(s)); err != nil {
			t.Fatal(err)
		}
	}
	if b, _ := os.ReadFile(mark); string(b) != "7\n" {
		t.Errorf("Prolog runs once per job on a node: %q", b)
	}

	bad := filepath.Join(dir, "bad")
	_ = os.WriteFile(bad, []byte("#!/bin/sh\nexit 3\n"), 0o755)
	a.conf().Prolog = bad
	s2 := testStep(a, &model.StepSpec{Argv: []string{"x"}}, 0)
	s2.j.primary = false
	if err := (stepPrologHook{}).Prestart(context.Background(), newStepCtx(s2)); err == nil || s2.j.prologErr == nil {
		t.Errorf("failing Prolog: err %v, recorded %v", err, s2.j.prologErr)
	}
	drained := false
	for len(a.outbox) > 0 {
		if h := (<-a.outbox).GetHealth(); h != nil && h.Reason == ReasonPrologError && h.Sticky {
			drained = true
		}
	}
	if !drained {
		t.Error("a failing Prolog drains the node")
	}
}

// prepare runs the env hook and then the given task hooks for every task.
func prepare(t *testing.T, s *stepRun, hooks ...taskHook) *stepCtx {
	t.Helper()
	sc := newStepCtx(s)
	if err := (stepEnvHook{}).Prestart(context.Background(), sc); err != nil {
		t.Fatal(err)
	}
	if err := (tasksHook{hooks: hooks}).Prestart(context.Background(), sc); err != nil {
		t.Fatal(err)
	}
	return sc
}

func TestTaskCommandHook(t *testing.T) {
	a, _ := testAgent(t)
	umask := uint32(0o077)
	s := testStep(a, &model.StepSpec{Argv: []string{"/bin/echo", "hi"}, TaskArgv: [][]string{nil, {"/bin/rank1", "a"}}}, 0, 1, 2)
	s.j.model.UserID, s.j.model.GroupID, s.j.model.Groups = 1000, 100, []uint32{5}
	s.j.model.Spec.Umask, s.j.model.Spec.OpenMode = &umask, "append"
	sc := prepare(t, s, taskCommandHook{})
	got := [][]string{}
	for _, tk := range sc.tasks {
		got = append(got, append([]string{tk.spec.Path}, tk.spec.Args...))
		if tk.spec.UID != 1000 || tk.spec.GID != 100 || len(tk.spec.Groups) != 1 || tk.spec.Umask != 0o077 || !tk.spec.Append || tk.spec.Dir != "/tmp" {
			t.Errorf("rank %d: spec %+v", tk.rank, tk.spec)
		}
	}
	want := [][]string{{"/bin/echo", "hi"}, {"/bin/rank1", "a"}, {"/bin/echo", "hi"}}
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("argv %q, want %q", got, want)
	}
	s.st.Spec.Argv, s.st.Spec.TaskArgv = nil, nil
	if sc := prepare(t, s, taskCommandHook{}); sc.tasks[0].spec.Path != "/bin/false" {
		t.Errorf("no argv: %q, want /bin/false", sc.tasks[0].spec.Path)
	}
}

func TestTaskEnvAndGPUHooks(t *testing.T) {
	a, _ := testAgent(t)
	a.iso.setGPUs([]model.GPU{{Index: 0, Major: -1}, {Index: 1, Major: -1}, {Index: 2, Major: -1}, {Index: 3, Major: -1}})
	s := testStep(a, &model.StepSpec{Argv: []string{"x"}, GPUs: &model.GPUReq{PerTask: 2}}, 4, 5)
	s.local.GPUs = model.BitmapOf(0, 1, 2, 3)
	sc := prepare(t, s, taskEnvHook{}, taskGPUHook{})
	for i, want := range []struct{ procID, localID, cuda string }{{"4", "0", "0,1"}, {"5", "1", "2,3"}} {
		env := sc.tasks[i].spec.Env
		if v, _ := envOf(env, "SLURM_PROCID"); v != want.procID {
			t.Errorf("task %d SLURM_PROCID=%q", i, v)
		}
		if v, _ := envOf(env, "SLURM_LOCALID"); v != want.localID {
			t.Errorf("task %d SLURM_LOCALID=%q", i, v)
		}
		if v, _ := envOf(env, "CUDA_VISIBLE_DEVICES"); v != want.cuda {
			t.Errorf("task %d CUDA_VISIBLE_DEVICES=%q", i, v)
		}
	}
	if a, b := sc.tasks[0].spec.Env, sc.tasks[1].spec.Env; slices.Equal(a, b) {
		t.Error("tasks with --gpus-per-task share one environment")
	}
}

func TestTaskPrologHook(t *testing.T) {
	a, _ := testAgent(t)
	dir := t.TempDir()
	tp := filepath.Join(dir, "taskprolog")
	te := filepath.Join(dir, "taskepilog")
	out := filepath.Join(dir, "epilog.out")
	_ = os.WriteFile(tp, []byte("#!/bin/sh\necho export FROM_PROLOG=$SLURM_PROCID\necho unset DROPME\n"), 0o755)
	_ = os.WriteFile(te, []byte("#!/bin/sh\necho $FROM_PROLOG >> "+out+"\n"), 0o755)
	a.conf().TaskProlog, a.conf().TaskEpilog = tp, te
	s := testStep(a, &model.StepSpec{Argv: []string{"x"}, Env: []string{"DROPME=1"}}, 3)
	sc := prepare(t, s, taskEnvHook{}, taskPrologHook{})
	env := sc.tasks[0].spec.Env
	if v, _ := envOf(env, "FROM_PROLOG"); v != "3" {
		t.Errorf("TaskProlog export: %q", v)
	}
	if _, ok := envOf(env, "DROPME"); ok {
		t.Error("TaskProlog unset ignored")
	}
	if len(sc.tasks[0].onExit) != 1 {
		t.Fatalf("TaskEpilog not registered: %d", len(sc.tasks[0].onExit))
	}
	sc.tasks[0].onExit[0](executor.Result{})
	if b, _ := os.ReadFile(out); string(b) != "3\n" {
		t.Errorf("TaskEpilog ran with %q, want the task's environment", b)
	}
}

func TestTaskStdioAndCgroupHooks(t *testing.T) {
	a, _ := testAgent(t)
	s := testStep(a, &model.StepSpec{Argv: []string{"x"}, IOAddr: "127.0.0.1:1", Input: "1"}, 0, 1)
	sc := prepare(t, s, taskStdioHook{}, taskCgroupHook{})
	for _, tk := range sc.tasks {
		if _, ok := tk.spec.StdoutW.(taskOut); !ok {
			t.Errorf("rank %d stdout not streamed to srun", tk.rank)
		}
		if (tk.spec.StdinR != nil) != (tk.rank == 1) {
			t.Errorf("rank %d stdin pipe %v with --input=1", tk.rank, tk.spec.StdinR != nil)
		}
	}
	if len(s.inputs) != 1 || s.inputs[1] == nil {
		t.Errorf("inputs registered: %v", s.inputs)
	}
	s2 := testStep(a, &model.StepSpec{Argv: []string{"x"}, StdOut: "out-%t", StdIn: "in"}, 0)
	sc = prepare(t, s2, taskCommandHook{}, taskStdioHook{})
	if es := sc.tasks[0].spec; es.Stdout != "/tmp/out-0" || es.Stderr != es.Stdout || es.Stdin != "/tmp/in" || es.StdoutW != nil {
		t.Errorf("file patterns: %+v", es)
	}
}

// fakeSrun is srun's I/O port: it accepts the nodes' connections.
type fakeSrun struct {
	ln    net.Listener
	key   string
	conns chan *stepio.Conn
}

func newFakeSrun(t *testing.T) *fakeSrun {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeSrun{ln: ln, key: "k3y", conns: make(chan *stepio.Conn, 16)}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			sc, _, err := stepio.Accept(c, f.key)
			if err != nil {
				c.Close()
				continue
			}
			f.conns <- sc
		}
	}()
	t.Cleanup(func() { ln.Close() })
	return f
}

func (f *fakeSrun) next(t *testing.T) *stepio.Conn {
	t.Helper()
	select {
	case c := <-f.conns:
		return c
	case <-time.After(10 * time.Second):
		t.Fatal("no node connected to srun within 10s")
		return nil
	}
}

func TestSrunIOHook(t *testing.T) {
	a, _ := testAgent(t)
	srun := newFakeSrun(t)
	s := testStep(a, &model.StepSpec{Argv: []string{"x"}, IOAddr: srun.ln.Addr().String(), IOKey: srun.key}, 0)
	sc := prepare(t, s, taskStdioHook{})
	if err := (srunIOHook{}).Prestart(context.Background(), sc); err != nil {
		t.Fatal(err)
	}
	c := srun.next(t)
	defer c.Close()
	s.send(stepio.Stdout, 0, []byte("hello"))
	if typ, _, p, err := c.Recv(); err != nil || typ != stepio.Stdout || string(p) != "hello" {
		t.Errorf("frame %d %q %v", typ, p, err)
	}
	s.mu.Lock()
	marked := s.srun != nil
	s.mu.Unlock()
	if !marked {
		t.Error("srun's connection not marked as srun's")
	}

	// srun gone before the node dials: the step fails and no task waits
	// on its stdin.
	dead := srun.ln.Addr().String()
	srun.ln.Close()
	s2 := testStep(a, &model.StepSpec{Argv: []string{"x"}, IOAddr: dead, IOKey: "k"}, 0)
	sc2 := prepare(t, s2, taskStdioHook{})
	if err := (srunIOHook{}).Prestart(context.Background(), sc2); err == nil {
		t.Error("unreachable srun must fail the step")
	}
	if len(s2.inputs) != 0 {
		t.Error("stdin pipes left open after srun was unreachable")
	}
}

func TestStepTimeLimitHook(t *testing.T) {
	a, ex := testAgent(t)
	s := testStep(a, &model.StepSpec{Argv: []string{"x"}}, 0)
	s.st.TimeLimit, s.st.StartTime = 1, time.Now().Add(-time.Minute).Unix() // already over
	done := make(chan [3]int32, 1)
	go func() {
		c, sig, st := s.exec()
		done <- [3]int32{c, sig, int32(st)}
	}()
	p := <-ex.Started()
	select {
	case <-p.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("step past its --time not terminated within 10s")
	}
	r := <-done
	if model.JobState(r[2]) != model.JobTimeout || r[1] != int32(syscall.SIGTERM) {
		t.Errorf("result %v, want TIMEOUT by SIGTERM", r)
	}
	if s.limit != nil {
		t.Error("time limit timer left armed after the step")
	}
}
