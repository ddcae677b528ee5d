package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"syscall"
	"time"

	pb "github.com/drover-hpc/drover/api/drover/v1"
	"github.com/drover-hpc/drover/internal/executor"
	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/stepenv"
	"github.com/drover-hpc/drover/internal/stepio"
	"github.com/drover-hpc/drover/internal/wire"
)

// stepRun is one step's share of this node: its local tasks, and the
// connections (srun's, then any sattach) their I/O goes through.
type stepRun struct {
	a     *Agent
	j     *job
	st    *model.Step
	local model.StepNode
	index int // this node's index in the step's layout (SLURM_NODEID)

	mu     sync.Mutex
	procs  map[int]executor.Process // by rank
	sinks  []*stepio.Conn
	inputs map[int]*stdinQueue // ranks that read srun's stdin
	srun   *stepio.Conn        // srun's connection, among sinks; nil when lost
	// srunLoss kills the step if srun's connection stays lost (srunLost).
	srunLoss *time.Timer
	closed   bool        // the tasks are over: no more clients
	limit    *time.Timer // the step's own --time (stepTimeLimitHook)
	ending   bool
	// sendDeadline bounds writes to clients once the step ends (boundSends).
	sendDeadline time.Time
	endAs        model.JobState // CANCELLED, TIMEOUT when ended on request
	tty          *ptyTask
	ttyEarly     *ptyEarly      // srun's input and size before tty exists
	launch       *pb.LaunchStep // kept with supervised tasks for a later agent
	usage        *sampler       // the step's cgroup, followed while it runs
}

func (a *Agent) launchStep(l *pb.LaunchStep) {
	st := wire.StepFromPB(l.Step)
	local, idx, ok := st.LayoutOn(a.node)
	if !ok || st.Spec == nil {
		return
	}
	a.mu.Lock()
	j := a.jobs[l.Job.Id]
	if run := uint32(l.Job.Restarts) + 1; j != nil && j.run() != run {
		a.mu.Unlock()
		if j.run() > run {
			a.log.Warn("dropping a step of an earlier run of the job", "job", j.id, "step", st.ID, "run", run)
			return
		}
		// A step of the job's new run while an earlier run still holds a
		// record here (this node was cut off meanwhile): end the stale
		// run, then launch the step in a record of its own.
		a.replaceStale(j, func() { a.launchStep(l) })
		return
	}
	if j == nil {
		j = newJob(l.Job.Id, wire.JobFromPB(l.Job), false)
		a.jobs[j.id] = j
	}
	a.mu.Unlock()
	if l.KillWait > 0 {
		a.setKillWait(time.Duration(l.KillWait) * time.Second)
	}
	sr := &stepRun{a: a, j: j, st: st, local: local, index: idx, procs: map[int]executor.Process{}, inputs: map[int]*stdinQueue{}, launch: l}
	j.mu.Lock()
	if j.steps[st.ID] != nil {
		j.mu.Unlock()
		return // a resent launch
	}
	if j.ending {
		j.mu.Unlock()
		a.reportStep(sr, 1, 0, model.JobFailed)
		return
	}
	j.steps[st.ID] = sr
	j.stepWG.Add(1)
	j.mu.Unlock()
	go sr.run()
}

func (a *Agent) reportStep(s *stepRun, code, sig int32, state model.JobState) {
	var usage *pb.Usage
	u := s.sampler()
	if u != nil {
		u.close()
		usage = wire.UsageToPB(u.usage(a.node, s.local.GPUs))
	}
	run := s.j.run()
	a.reportReliable(reportKey{job: s.j.id, step: int32(s.st.ID), run: run},
		&pb.AgentMessage{Msg: &pb.AgentMessage_StepEnded{StepEnded: &pb.StepEnded{
			JobId: s.j.id, StepId: int32(s.st.ID), Node: a.node, ExitCode: code, Signal: sig,
			State: uint32(state), EndTime: time.Now().Unix(), Usage: usage, Run: run,
		}}})
	// The end goes out first: srun already has its tasks' exits and may
	// ask for the next step at once, which must not find this one still
	// holding the CPUs while its (empty) cgroup is being removed.
	if u != nil {
		if err := u.g.Delete(); err != nil {
			a.log.Warn("cannot remove the step's cgroup", "job", s.j.id, "step", s.st.ID, "err", err)
		}
	}
}

func (s *stepRun) run() { s.done(s.exec()) }

// sampler is the step's usage follower; nil before its cgroup exists.
func (s *stepRun) sampler() *sampler {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.usage
}

// done reports the step's end on this node and forgets it.
func (s *stepRun) done(code, sig int32, state model.JobState) {
	s.j.mu.Lock()
	delete(s.j.steps, s.st.ID)
	s.j.mu.Unlock()
	s.a.reportStep(s, code, sig, state)
	for _, rank := range s.local.Tasks {
		s.a.discard(s.a.taskDir(s.j.id, s.st.ID, rank), s.a.recycleSuperDir)
	}
	s.j.stepWG.Done()
}

// exec runs the step's launch pipeline (stepHooks) and the local tasks
// to their end, and returns the node's share of the step's result: the
// highest exit code, a signal that killed a task.
func (s *stepRun) exec() (code, sig int32, state model.JobState) {
	return s.runHooks(stepHooks())
}

// runHooks is the runner under exec, with the hooks given.
func (s *stepRun) runHooks(hooks []stepHook) (code, sig int32, state model.JobState) {
	sc := newStepCtx(s)
	var ran []stepHook
	defer func() {
		for i := len(ran) - 1; i >= 0; i-- {
			if h, ok := ran[i].(stepPoststopper); ok {
				h.Poststop(sc)
			}
		}
	}()
	for _, h := range hooks {
		if p, ok := h.(stepPrestarter); ok {
			if err := p.Prestart(context.Background(), sc); err != nil {
				if !errors.Is(err, errHookFailed) {
					s.a.log.Warn("step launch failed", "job", s.j.id, "step", s.st.ID, "hook", h.Name(), "err", err)
				}
				return 1, 0, model.JobFailed
			}
		}
		ran = append(ran, h)
	}
	results := make(chan taskResult, len(sc.tasks))
	for _, t := range sc.tasks {
		s.mu.Lock()
		if s.ending {
			s.mu.Unlock()
			results <- taskResult{t.rank, executor.Result{Signal: int(syscall.SIGKILL)}}
			continue
		}
		proc, err := s.start(t.spec, t.rank)
		if err != nil {
			s.mu.Unlock()
			results <- taskResult{t.rank, executor.Result{ExitCode: 1, Err: err}}
			continue
		}
		s.procs[t.rank] = proc
		s.mu.Unlock()
		go func(t *taskCtx, p executor.Process) {
			r := s.waitTask(t.rank, p)
			for _, f := range t.onExit {
				f(r)
			}
			results <- taskResult{t.rank, r}
		}(t, proc)
	}
	for _, h := range ran {
		if p, ok := h.(stepPoststarter); ok {
			p.Poststart(sc)
		}
	}
	return s.collect(results, len(sc.tasks))
}

type taskResult struct {
	rank int
	res  executor.Result
}

// collect waits for n task results, tells the clients each task's exit,
// and returns the node's share of the step's result.
func (s *stepRun) collect(results <-chan taskResult, n int) (code, sig int32, state model.JobState) {
	failed, lost := 0, 0
	for range n {
		r := <-results
		s.closeInput(r.rank)
		msg := ""
		if r.res.Err != nil {
			msg = r.res.Err.Error()
			failed++
		}
		if errors.Is(r.res.Err, executor.ErrSupervisorLost) {
			lost++ // its exit status is unknown (suplost.go)
		}
		s.send(stepio.Exit, uint32(r.rank), stepio.FormatExit(r.res.ExitCode, r.res.Signal, msg))
		if c := int32(r.res.ExitCode); c > code {
			code = c
		}
		if r.res.Signal != 0 && sig == 0 {
			sig = int32(r.res.Signal)
		}
	}
	var ooms uint64
	if u := s.sampler(); u != nil {
		if st, ok := u.sample(); ok && st.OOMKills > 0 {
			ooms = st.OOMKills
			msg := s.a.oomMessage(ooms, s.j.id, strconv.Itoa(int(s.st.ID)))
			s.send(stepio.Stderr, uint32(s.local.Tasks[0]), []byte(msg))
		}
	}
	s.closeSinks()
	s.mu.Lock()
	endAs := s.endAs
	s.mu.Unlock()
	switch {
	case endAs != 0:
		state = endAs
	case ooms > 0:
		state = model.JobOOM
	case lost > 0:
		state = model.JobNodeFail
	case failed > 0:
		state = model.JobFailed
	}
	return code, sig, state
}

// start launches one task; task 0 of a --pty step gets a terminal. Other
// tasks run under the node's supervisor when there is one, so that they
// outlive the agent.
func (s *stepRun) start(es *executor.Spec, rank int) (executor.Process, error) {
	if s.st.Spec.Pty && rank == 0 {
		return s.startPty(es)
	}
	if sup := s.a.supervisor(); sup != nil && s.launch != nil {
		if p, err := s.startSupervised(sup, es, rank); err == nil {
			return p, nil
		} else {
			s.a.log.Warn("task not supervised: it will end with the agent", "job", s.j.id, "step", s.st.ID, "err", err)
		}
	}
	return s.a.executor().Start(es)
}

// wireIO points a task's stdio at files (-o/-e/-i patterns) or at the
// streams to srun.
func (s *stepRun) wireIO(es *executor.Spec, jm *model.Job, rank int) {
	spec := s.st.Spec
	if spec.Pty && rank == 0 {
		return // its terminal carries all three (startPty)
	}
	path := func(pattern string) string {
		return stepenv.ResolvePath(es.Dir, stepenv.ExpandStepPattern(pattern, jm, s.st, s.a.node, s.index, rank))
	}
	switch {
	case spec.StdOut != "":
		es.Stdout = path(spec.StdOut)
	case spec.IOAddr != "":
		es.StdoutW = taskOut{s, stepio.Stdout, uint32(rank)}
	}
	switch {
	case spec.StdErr != "":
		es.Stderr = path(spec.StdErr)
	case spec.StdOut != "":
		es.Stderr = es.Stdout
	case spec.IOAddr != "":
		es.StderrW = taskOut{s, stepio.Stderr, uint32(rank)}
	}
	switch {
	case spec.StdIn != "":
		es.Stdin = path(spec.StdIn)
	case spec.IOAddr != "" && readsInput(spec.Input, spec.Pty, rank):
		r, w := io.Pipe()
		es.StdinR = r
		s.mu.Lock()
		s.inputs[rank] = newStdinQueue(w, stdinLimit)
		s.mu.Unlock()
	}
}

// readsInput says whether rank gets srun's stdin under --input mode.
// Slurm's default is every task, except that with --pty only task 0 (the
// terminal's) reads.
func readsInput(mode string, pty bool, rank int) bool {
	switch mode {
	case "":
		return !pty || rank == 0
	case "all":
		return true
	case "none":
		return false
	}
	n, err := strconv.Atoi(mode)
	return err == nil && n == rank
}

func (s *stepRun) signal(sig syscall.Signal) {
	s.mu.Lock()
	procs := make([]executor.Process, 0, len(s.procs))
	for _, p := range s.procs {
		procs = append(procs, p)
	}
	s.mu.Unlock()
	for _, p := range procs {
		_ = p.Signal(sig)
	}
}

// terminate starts the kill sequence of the step's tasks once. endAs is
// the state the step ends in (CANCELLED, TIMEOUT), announced to srun the
// way slurmstepd does; 0 ends it quietly (the job is over).
func (s *stepRun) terminate(killWait time.Duration, endAs model.JobState) {
	s.mu.Lock()
	if s.ending {
		s.mu.Unlock()
		return
	}
	s.ending, s.endAs = true, endAs
	procs := make([]executor.Process, 0, len(s.procs))
	for _, p := range s.procs {
		procs = append(procs, p)
	}
	s.mu.Unlock()
	s.boundSends()
	if endAs != 0 && len(s.local.Tasks) > 0 {
		why := ""
		if endAs == model.JobTimeout {
			why = " DUE TO TIME LIMIT"
		}
		msg := fmt.Sprintf("slurmstepd: error: *** STEP %d.%s ON %s CANCELLED AT %s%s ***\n",
			s.j.id, s.st.ID, s.a.node, time.Now().Format("2006-01-02T15:04:05"), why)
		s.send(stepio.Stderr, uint32(s.local.Tasks[0]), []byte(msg))
	}
	for _, p := range procs {
		p.Terminate(killWait)
	}
}

func (a *Agent) findStep(jobID uint32, step int32) *stepRun {
	a.mu.Lock()
	j := a.jobs[jobID]
	a.mu.Unlock()
	if j == nil {
		return nil
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.steps[model.StepID(step)]
}

func (a *Agent) signalStep(m *pb.SignalStep) {
	s := a.findStep(m.JobId, m.StepId)
	if s == nil {
		return
	}
	if m.Terminate {
		s.terminate(a.getKillWait(), model.JobCancelled)
		return
	}
	s.signal(syscall.Signal(m.Signal))
}

func atoi(v string) int {
	n, _ := strconv.Atoi(v)
	return n
}
