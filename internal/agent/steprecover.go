package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	pb "github.com/drover-hpc/drover/api/drover/v1"
	"github.com/drover-hpc/drover/internal/executor"
	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/stepio"
	"github.com/drover-hpc/drover/internal/wire"
)

// Step tasks run under the node's supervisor too, with their stdio as
// pipes the supervisor keeps: when the agent goes, the tasks run on (their
// output waits in the pipes), and the next agent takes the pipes back,
// dials srun again and carries on. Each task has a root-only directory
// <spool>/super/job<N>.s<S>.t<R> with the step's launch message (step.pb)
// and which streams are pipes (task.json).

type taskMeta struct {
	Pipes [3]bool `json:"pipes"`
	Rank  int     `json:"rank"`
}

func (a *Agent) taskDir(job uint32, step model.StepID, rank int) string {
	return filepath.Join(a.spool, "super", fmt.Sprintf("job%d.s%d.t%d", job, step, rank))
}

func (a *Agent) supervisor() *executor.Supervisor {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.sup
}

// startSupervised starts one task under the supervisor and connects its
// pipes to the step's streams.
func (s *stepRun) startSupervised(sup *executor.Supervisor, es *executor.Spec, rank int) (executor.Process, error) {
	dir := s.a.taskDir(s.j.id, s.st.ID, rank)
	if err := s.a.newSuperDir(dir); err != nil {
		return nil, err
	}
	b, err := proto.Marshal(s.launch)
	if err != nil {
		return nil, err
	}
	want := [3]bool{es.StdinR != nil, es.StdoutW != nil, es.StderrW != nil}
	meta, _ := json.Marshal(taskMeta{Pipes: want, Rank: rank})
	if err := os.WriteFile(filepath.Join(dir, "step.pb"), b, 0o600); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "task.json"), meta, 0o600); err != nil {
		return nil, err
	}
	plain := *es
	plain.StdinR, plain.StdoutW, plain.StderrW = nil, nil, nil
	proc, pipes, err := sup.StartPiped(dir, &plain, want)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	return s.connectPipes(sup, dir, proc, pipes, es.StdinR, es.StdoutW, es.StderrW), nil
}

// connectPipes copies a supervised task's output pipes to the step's
// writers and the step's input to its stdin pipe. Wait returns once the
// output is drained.
func (s *stepRun) connectPipes(sup *executor.Supervisor, dir string, proc executor.Process, pipes *executor.Pipes,
	in io.Reader, out, errw io.Writer) executor.Process {
	t := &pipedTask{Process: proc}
	for _, c := range []struct {
		f *os.File
		w io.Writer
	}{{pipes.Stdout, out}, {pipes.Stderr, errw}} {
		if c.f == nil {
			continue
		}
		done := make(chan struct{})
		t.drained = append(t.drained, done)
		go func(f *os.File, w io.Writer) {
			defer close(done)
			if w == nil {
				w = io.Discard
			}
			_, _ = io.Copy(w, f)
			f.Close()
		}(c.f, c.w)
	}
	if pipes.Stdin != nil {
		go func(f *os.File) {
			if in != nil {
				_, _ = io.Copy(f, in)
			}
			f.Close()
			sup.CloseStdin(dir)
		}(pipes.Stdin)
	}
	return t
}

// pipedTask is a supervised task whose Wait also waits for its output.
type pipedTask struct {
	executor.Process
	drained []chan struct{}
	once    sync.Once
	res     executor.Result
}

func (t *pipedTask) Wait() executor.Result {
	t.once.Do(func() {
		t.res = t.Process.Wait()
		for _, d := range t.drained {
			select {
			case <-d:
			case <-time.After(executor.IODrainTimeout):
			}
		}
	})
	return t.res
}

// recoverSteps takes back the step tasks a previous agent left with the
// supervisor, one step at a time.
func (a *Agent) recoverSteps(names []string) {
	groups := map[string][]string{} // "job.sS" → task dirs
	for _, n := range names {
		i := strings.LastIndex(n, ".t")
		if i < 0 {
			continue
		}
		groups[n[:i]] = append(groups[n[:i]], filepath.Join(a.spool, "super", n))
	}
	keys := make([]string, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if err := a.recoverStep(groups[k]); err != nil {
			a.log.Warn("cannot take back step", "step", k, "err", err)
			for _, d := range groups[k] {
				_ = os.RemoveAll(d)
			}
		}
	}
}

func (a *Agent) recoverStep(dirs []string) error {
	sup := a.supervisor()
	if sup == nil {
		return errors.New("no job supervisor")
	}
	b, err := os.ReadFile(filepath.Join(dirs[0], "step.pb"))
	if err != nil {
		return err
	}
	var l pb.LaunchStep
	if err := proto.Unmarshal(b, &l); err != nil {
		return err
	}
	st := wire.StepFromPB(l.Step)
	local, idx, ok := st.LayoutOn(a.node)
	if !ok || st.Spec == nil {
		return errors.New("step record names another node")
	}
	a.mu.Lock()
	j := a.jobs[l.Job.Id]
	if j == nil {
		j = newJob(l.Job.Id, wire.JobFromPB(l.Job), false)
		a.jobs[j.id] = j
	}
	a.mu.Unlock()
	s := &stepRun{a: a, j: j, st: st, local: local, index: idx, procs: map[int]executor.Process{},
		inputs: map[int]*stdinQueue{}, launch: &l}
	s.usage = a.reopenSampler(jobGroupName(j.id) + "/step_" + strconv.Itoa(int(st.ID)))
	j.mu.Lock()
	j.prologDone = true
	if j.steps[st.ID] != nil {
		j.mu.Unlock()
		return errors.New("step already known")
	}
	j.steps[st.ID] = s
	j.stepWG.Add(1)
	j.mu.Unlock()
	a.log.Info("took back step left by a previous agent", "job", j.id, "step", st.ID, "tasks", len(dirs))
	go func() { s.done(s.resume(sup, dirs)) }()
	return nil
}

// resume reconnects a taken-back step's tasks to srun and follows them to
// their end.
func (s *stepRun) resume(sup *executor.Supervisor, dirs []string) (int32, int32, model.JobState) {
	spec := s.st.Spec
	results := make(chan taskResult, len(s.local.Tasks))
	found := map[int]bool{}
	type back struct {
		rank  int
		proc  executor.Process
		pipes *executor.Pipes
		dir   string
	}
	var tasks []back
	for _, dir := range dirs {
		var meta taskMeta
		mb, err := os.ReadFile(filepath.Join(dir, "task.json"))
		if err == nil {
			err = json.Unmarshal(mb, &meta)
		}
		if err != nil {
			continue
		}
		proc, pipes, err := sup.ReattachPiped(dir, meta.Pipes)
		if err != nil {
			continue
		}
		found[meta.Rank] = true
		tasks = append(tasks, back{meta.Rank, proc, pipes, dir})
	}
	// Input pipes are registered before srun hears from this node again;
	// output is copied only once srun is there to take it.
	ins := make([]io.Reader, len(tasks))
	for i, t := range tasks {
		if t.pipes.Stdin != nil {
			r, w := io.Pipe()
			s.mu.Lock()
			s.inputs[t.rank] = newStdinQueue(w, stdinLimit)
			s.mu.Unlock()
			ins[i] = r
		}
	}
	if spec.IOAddr != "" {
		if conn, err := stepio.Dial(spec.IOAddr, spec.IOKey, stepio.Hello{Job: s.j.id, Step: int32(s.st.ID), Node: s.index}); err == nil {
			s.addClient(conn, true)
		} else {
			// srun died while no agent watched: the step ends after the
			// same grace as when its connection drops.
			s.a.log.Warn("cannot reach srun again", "job", s.j.id, "step", s.st.ID, "err", err)
			s.srunLost()
		}
	}
	for i, t := range tasks {
		proc := s.connectPipes(sup, t.dir, t.proc, t.pipes, ins[i],
			taskOut{s, stepio.Stdout, uint32(t.rank)}, taskOut{s, stepio.Stderr, uint32(t.rank)})
		tasks[i].proc = proc
		s.mu.Lock()
		s.procs[t.rank] = proc
		s.mu.Unlock()
	}
	for _, t := range tasks {
		go func(rank int, p executor.Process) { results <- taskResult{rank, s.waitTask(rank, p)} }(t.rank, t.proc)
	}
	n := len(tasks)
	for _, rank := range s.local.Tasks {
		if !found[rank] {
			n++
			results <- taskResult{rank, executor.Result{ExitCode: 1, Err: errors.New("task lost with the node's agent")}}
		}
	}
	return s.collect(results, n)
}

// stepDirNames splits the supervisor's directory names into batch jobs
// ("job12") and step tasks ("job12.s0.t3").
func stepDirNames(names []string) (jobs, tasks []string) {
	for _, n := range names {
		rest, ok := strings.CutPrefix(n, "job")
		if !ok {
			continue
		}
		if strings.Contains(rest, ".") {
			tasks = append(tasks, n)
		} else if _, err := strconv.ParseUint(rest, 10, 32); err == nil {
			jobs = append(jobs, n)
		}
	}
	return jobs, tasks
}

// hasSupervisedSteps reports whether every running step of j runs under
// the supervisor (a job that only holds such steps here can be left to
// the next agent).
func (j *job) hasSupervisedSteps() bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	if len(j.steps) == 0 || j.primary && !j.supervised {
		return false
	}
	for _, s := range j.steps {
		if !s.supervisedOnly() {
			return false
		}
	}
	return true
}

// supervisedOnly reports whether all of the step's local tasks run under
// the supervisor.
func (s *stepRun) supervisedOnly() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tty != nil {
		return false
	}
	for _, p := range s.procs {
		if _, ok := p.(*pipedTask); !ok {
			return false
		}
	}
	return true
}

// endUnsupervisedSteps ends the steps of j that cannot outlive the agent
// (a --pty task, tasks started without a supervisor).
func (a *Agent) endUnsupervisedSteps(j *job) {
	j.mu.Lock()
	var kill []*stepRun
	for _, s := range j.steps {
		if !s.supervisedOnly() {
			kill = append(kill, s)
		}
	}
	j.mu.Unlock()
	for _, s := range kill {
		s.terminate(a.getKillWait(), 0)
	}
}
