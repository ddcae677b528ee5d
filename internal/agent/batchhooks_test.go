package agent

import (
	"context"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	pb "github.com/drover-hpc/drover/api/drover/v1"
	"github.com/drover-hpc/drover/internal/executor"
	"github.com/drover-hpc/drover/internal/model"
)

func testBatchJob(t *testing.T, spec *model.JobSpec) *job {
	t.Helper()
	if spec.WorkDir == "" {
		spec.WorkDir = t.TempDir()
	}
	mj := &model.Job{ID: 7, Name: "b", Alloc: []model.NodeAlloc{{Node: "n1", CPUs: 2}}, Spec: spec,
		StartTime: time.Now().Unix(), State: model.JobRunning, ArrayTaskID: model.NoArrayTask}
	return newJob(7, mj, true)
}

// jobStarted waits for the JobStarted the agent reports.
func jobStarted(t *testing.T, a *Agent) *pb.JobStarted {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case m := <-a.outbox:
			if s := m.GetJobStarted(); s != nil {
				return s
			}
		case <-deadline:
			t.Fatal("no JobStarted reported within 10s")
			return nil
		}
	}
}

func TestBatchHooksOrder(t *testing.T) {
	var names []string
	for _, h := range batchHooks() {
		names = append(names, h.Name())
	}
	if want := []string{"spool-dir", "env", "prolog", "cgroup", "script", "stdio"}; !slices.Equal(names, want) {
		t.Errorf("pipeline %q, want %q", names, want)
	}
}

func TestBatchLaunchRunsScript(t *testing.T) {
	a, ex := testAgent(t)
	j := testBatchJob(t, &model.JobSpec{Script: "#!/bin/sh\necho hi\n", Argv: []string{"arg1"}, StdErr: "err-%j"})
	res := make(chan executor.Result, 1)
	go func() { res <- a.start(j) }()
	p := started(t, ex)
	es := p.Spec
	if b, err := os.ReadFile(es.Path); err != nil || string(b) != j.model.Spec.Script || filepath.Dir(es.Path) != j.dir {
		t.Errorf("script %s in %s: %q %v", es.Path, j.dir, b, err)
	}
	if !slices.Equal(es.Args, []string{"arg1"}) {
		t.Errorf("args %q", es.Args)
	}
	wd := j.model.Spec.WorkDir
	if es.Stdout != filepath.Join(wd, "slurm-7.out") || es.Stderr != filepath.Join(wd, "err-7") || j.errPath != es.Stderr {
		t.Errorf("stdout %q stderr %q errPath %q", es.Stdout, es.Stderr, j.errPath)
	}
	if v, _ := envOf(es.Env, "SLURM_JOB_ID"); v != "7" || !slices.Contains(es.PidEnv, "SLURM_TASK_PID") {
		t.Errorf("env SLURM_JOB_ID=%q PidEnv %q", v, es.PidEnv)
	}
	if s := jobStarted(t, a); s.JobId != 7 || s.Pid != int32(p.Pid()) {
		t.Errorf("JobStarted %+v", s)
	}
	p.Exit(executor.Result{ExitCode: 2})
	select {
	case r := <-res:
		if r.ExitCode != 2 || r.Err != nil {
			t.Errorf("result %+v", r)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("start did not return within 10s of the script's end")
	}
}

func TestBatchLaunchAllocation(t *testing.T) {
	a, ex := testAgent(t)
	j := testBatchJob(t, &model.JobSpec{Interactive: true})
	res := make(chan executor.Result, 1)
	go func() { res <- a.start(j) }()
	if s := jobStarted(t, a); s.JobId != 7 || s.Pid != 0 {
		t.Errorf("JobStarted %+v", s)
	}
	j.terminate(time.Second, "", 0) // released
	select {
	case r := <-res:
		if r != (executor.Result{}) {
			t.Errorf("allocation result %+v", r)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("released allocation still held after 10s")
	}
	if n := len(ex.Processes()); n != 0 {
		t.Errorf("an allocation launched %d programs", n)
	}
}

func TestBatchLaunchPrologFails(t *testing.T) {
	a, ex := testAgent(t)
	bad := filepath.Join(t.TempDir(), "prolog")
	_ = os.WriteFile(bad, []byte("#!/bin/sh\necho broken; exit 1\n"), 0o755)
	a.conf().Prolog = bad
	j := testBatchJob(t, &model.JobSpec{Script: "#!/bin/sh\n"})
	r := a.start(j)
	if r.Err == nil || !strings.Contains(r.Err.Error(), "broken") || j.prologErr == nil {
		t.Errorf("result %+v, prologErr %v", r, j.prologErr)
	}
	if n := len(ex.Processes()); n != 0 {
		t.Errorf("%d programs launched after Prolog failed", n)
	}
}

func TestBatchEnvHookTaskEpilog(t *testing.T) {
	a, _ := testAgent(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	te := filepath.Join(dir, "te")
	_ = os.WriteFile(te, []byte("#!/bin/sh\necho $SLURM_JOB_ID > "+out+"\n"), 0o755)
	a.conf().TaskEpilog = te
	j := testBatchJob(t, &model.JobSpec{Umask: new(uint32), OpenMode: "append"})
	bc := &batchCtx{a: a, j: j, mj: j.model}
	if err := (batchEnvHook{}).Prestart(context.Background(), bc); err != nil {
		t.Fatal(err)
	}
	if bc.es.Umask != 0 || !bc.es.Append || bc.es.Dir != j.model.Spec.WorkDir {
		t.Errorf("spec %+v", bc.es)
	}
	for _, f := range bc.onExit {
		f(executor.Result{})
	}
	if b, _ := os.ReadFile(out); string(b) != "7\n" {
		t.Errorf("TaskEpilog after the script: %q", b)
	}
}

// TestBatchEnvHomeAndShell: the script gets HOME from the node's passwd
// entry and SHELL=/bin/sh only where the job brought none; the job's own
// (sbatch exports the caller's environment) win; an unknown user gets
// neither. The node's variables are set over the job's.
func TestBatchEnvHomeAndShell(t *testing.T) {
	a, _ := testAgent(t)
	me, err := user.Current()
	if err != nil {
		t.Skip(err)
	}
	uid, _ := strconv.ParseUint(me.Uid, 10, 32)
	for _, c := range []struct {
		name string
		uid  uint32
		env  []string
		want []string // present, exactly once each
		not  []string // names absent
	}{
		{"none brought", uint32(uid), []string{"A=1"}, []string{"HOME=" + me.HomeDir, "SHELL=/bin/sh", "A=1"}, nil},
		{"both brought", uint32(uid), []string{"HOME=/h", "SHELL=/bin/zsh"}, []string{"HOME=/h", "SHELL=/bin/zsh"}, nil},
		{"home brought", uint32(uid), []string{"HOME=/h"}, []string{"HOME=/h", "SHELL=/bin/sh"}, nil},
		{"shell brought", uint32(uid), []string{"SHELL=/bin/zsh"}, []string{"HOME=" + me.HomeDir, "SHELL=/bin/zsh"}, nil},
		{"unknown user", 4000000001, []string{"A=1"}, []string{"A=1"}, []string{"HOME", "SHELL"}},
		{"node's over the job's", uint32(uid), []string{"SLURM_CONF=/x", "HOME=/h", "SHELL=/s"},
			[]string{"SLURM_CONF=" + a.absConf()}, nil},
	} {
		j := testBatchJob(t, &model.JobSpec{Env: c.env})
		j.model.UserID = c.uid
		bc := &batchCtx{a: a, j: j, mj: j.model}
		if err := (batchEnvHook{}).Prestart(context.Background(), bc); err != nil {
			t.Fatal(err)
		}
		for _, kv := range c.want {
			if n := envCount(bc.es.Env, kv); n != 1 {
				t.Errorf("%s: %q %d times in %q", c.name, kv, n, bc.es.Env)
			}
		}
		for _, name := range c.not {
			for _, kv := range bc.es.Env {
				if strings.HasPrefix(kv, name+"=") {
					t.Errorf("%s: %q set", c.name, kv)
				}
			}
		}
		names := map[string]bool{}
		for _, kv := range bc.es.Env {
			name, _, _ := strings.Cut(kv, "=")
			if names[name] {
				t.Errorf("%s: %s twice in %q", c.name, name, bc.es.Env)
			}
			names[name] = true
		}
	}
}

func envCount(env []string, kv string) int {
	n := 0
	for _, e := range env {
		if e == kv {
			n++
		}
	}
	return n
}

// TestShortJobReportedByItsEnd: a batch script that ends before
// startedAfter is reported by its JobEnded alone; no JobStarted follows.
func TestShortJobReportedByItsEnd(t *testing.T) {
	a, ex := testAgent(t)
	j := testBatchJob(t, &model.JobSpec{Script: "#!/bin/sh\ntrue\n"})
	a.mu.Lock()
	a.jobs[j.id] = j
	a.mu.Unlock()
	go a.run(j)
	started(t, ex).Exit(executor.Result{})
	deadline := time.After(10 * time.Second)
	for ended := false; !ended; {
		select {
		case m := <-a.outbox:
			if m.GetJobStarted() != nil {
				t.Fatal("JobStarted reported for a job that ended at once")
			}
			ended = m.GetJobEnded() != nil
		case <-deadline:
			t.Fatal("no JobEnded within 10s")
		}
	}
	// Absence can only be waited for: past the time a start report would
	// have gone out, nothing more comes.
	select {
	case m := <-a.outbox:
		t.Fatalf("after the end: %v", m)
	case <-time.After(3 * startedAfter):
	}
}
