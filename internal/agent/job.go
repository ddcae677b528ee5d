package agent

import (
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	pb "github.com/drover-hpc/drover/api/drover/v1"
	"github.com/drover-hpc/drover/internal/executor"
	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/stepenv"
	"github.com/drover-hpc/drover/internal/wire"
)

// job is one job running on this node.
type job struct {
	id      uint32
	model   *model.Job
	proc    executor.Process
	dir     string // spool directory of the job
	errPath string // where slurmstepd-style messages go

	mu       sync.Mutex
	ending   bool
	timedOut bool
}

func (a *Agent) launch(l *pb.Launch) {
	mj := wire.JobFromPB(l.Job)
	a.mu.Lock()
	if _, dup := a.jobs[l.Job.Id]; dup {
		a.mu.Unlock()
		return
	}
	if e := a.ends[l.Job.Id]; e != nil {
		// It already ran here: never twice. Tell the controller again.
		a.mu.Unlock()
		a.report(&pb.AgentMessage{Msg: &pb.AgentMessage_JobEnded{JobEnded: e}})
		return
	}
	j := &job{id: l.Job.Id, model: mj}
	a.jobs[j.id] = j
	a.mu.Unlock()
	if l.KillWait > 0 {
		a.killWait = time.Duration(l.KillWait) * time.Second
	}
	go a.run(j)
}

func (a *Agent) run(j *job) {
	res := a.start(j)
	a.finish(j, res)
}

// start prepares and launches the job's program, then waits for it.
func (a *Agent) start(j *job) executor.Result {
	mj := j.model
	spec := mj.Spec
	j.dir = filepath.Join(a.spool, "job"+strconv.FormatUint(uint64(j.id), 10))
	if err := os.MkdirAll(j.dir, 0o700); err != nil {
		return executor.Result{ExitCode: 1, Err: err}
	}
	_ = os.Chown(j.dir, int(mj.UserID), int(mj.GroupID))

	env := stepenv.BatchEnv(mj, stepenv.NodeInfo{Name: a.node, CPUs: cpusOn(mj, a.node)}, a.cluster, mj.StartTime)
	env = stepenv.Override(env, "SLURM_CONF="+a.absConf())
	if u, err := user.LookupId(strconv.FormatUint(uint64(mj.UserID), 10)); err == nil {
		env = stepenv.Default(env, "HOME="+u.HomeDir, "SHELL=/bin/sh")
	}
	fields := stepenv.BatchFields(mj, a.node)
	es := &executor.Spec{
		Env: env, PidEnv: []string{"SLURM_TASK_PID"}, Dir: spec.WorkDir, UID: mj.UserID, GID: mj.GroupID, Groups: mj.Groups,
		Append: spec.OpenMode == "append", Umask: -1,
	}
	var link *ioLink
	if spec.Interactive {
		var err error
		if link, err = dialIO(spec.IOAddr, spec.IOKey, j.id); err != nil {
			return executor.Result{ExitCode: 1, Err: fmt.Errorf("connect to srun at %s: %w", spec.IOAddr, err)}
		}
		defer link.close()
		es.Path, es.Args = spec.Argv[0], spec.Argv[1:]
		es.StdoutW, es.StderrW, es.StdinR = link.stdout(), link.stderr(), link.stdin()
	} else {
		script := filepath.Join(j.dir, "slurm_script")
		if err := os.WriteFile(script, []byte(spec.Script), 0o700); err != nil {
			return executor.Result{ExitCode: 1, Err: err}
		}
		_ = os.Chown(script, int(mj.UserID), int(mj.GroupID))
		es.Path, es.Args = script, spec.Argv
		out := spec.StdOut
		if out == "" {
			out = stepenv.DefaultOutput(mj)
		}
		es.Stdout = stepenv.ResolvePath(spec.WorkDir, stepenv.ExpandPattern(out, fields))
		es.Stderr = es.Stdout
		if spec.StdErr != "" {
			es.Stderr = stepenv.ResolvePath(spec.WorkDir, stepenv.ExpandPattern(spec.StdErr, fields))
		}
		if spec.StdIn != "" {
			es.Stdin = stepenv.ResolvePath(spec.WorkDir, stepenv.ExpandPattern(spec.StdIn, fields))
		}
		j.errPath = es.Stderr
	}
	proc, err := executor.Start(es)
	if err != nil {
		res := executor.Result{ExitCode: 1, Err: err}
		if link != nil {
			link.sendExit(res)
		}
		return res
	}
	j.mu.Lock()
	j.proc = proc
	ending := j.ending
	j.mu.Unlock()
	a.report(&pb.AgentMessage{Msg: &pb.AgentMessage_JobStarted{JobStarted: &pb.JobStarted{JobId: j.id, Pid: int32(proc.Pid())}}})
	if ending { // cancelled while starting
		proc.Terminate(a.killWait)
	}
	var timer *time.Timer
	if lim := mj.TimeLimit; lim > 0 {
		deadline := time.Unix(mj.StartTime, 0).Add(time.Duration(lim) * time.Second)
		timer = time.AfterFunc(time.Until(deadline), func() {
			j.mu.Lock()
			j.timedOut = true
			j.mu.Unlock()
			j.terminate(a.killWait, a.stepdMessage(j, " DUE TO TIME LIMIT"))
		})
	}
	res := proc.Wait()
	if timer != nil {
		timer.Stop()
	}
	if link != nil {
		link.sendExit(res)
	}
	return res
}

// finish reports the end and cleans the spool directory.
func (a *Agent) finish(j *job, res executor.Result) {
	end := &pb.JobEnded{JobId: j.id, ExitCode: int32(res.ExitCode), Signal: int32(res.Signal), EndTime: time.Now().Unix()}
	j.mu.Lock()
	timedOut := j.timedOut
	j.mu.Unlock()
	switch {
	case res.Err != nil:
		a.log.Warn("job launch failed", "job", j.id, "err", res.Err)
		end.State, end.Reason = uint32(model.JobFailed), model.ReasonLaunchFailed
		end.ExitCode, end.Signal = 1, 0
		a.appendErr(j, fmt.Sprintf("slurmstepd: error: %v\n", res.Err))
	case timedOut:
		end.State, end.Reason = uint32(model.JobTimeout), model.ReasonTimeLimit
		end.ExitCode, end.Signal = 0, int32(syscall.SIGTERM)
	}
	_ = os.RemoveAll(j.dir)
	a.mu.Lock()
	delete(a.jobs, j.id)
	stopping := a.stopping
	if !stopping {
		a.ends[j.id] = end
	}
	a.mu.Unlock()
	if stopping {
		// Killed because this agent stops, not because the job ended: the
		// controller relaunches it when the node registers again.
		return
	}
	a.report(&pb.AgentMessage{Msg: &pb.AgentMessage_JobEnded{JobEnded: end}})
}

func (a *Agent) signal(s *pb.SignalJob) {
	a.mu.Lock()
	j := a.jobs[s.JobId]
	a.mu.Unlock()
	if j == nil {
		if s.Terminate {
			// Already gone: make sure the controller hears of the end.
			a.mu.Lock()
			e := a.ends[s.JobId]
			a.mu.Unlock()
			if e != nil {
				a.report(&pb.AgentMessage{Msg: &pb.AgentMessage_JobEnded{JobEnded: e}})
			}
		}
		return
	}
	if s.Terminate {
		msg := ""
		if s.Message == "CANCELLED" {
			msg = a.stepdMessage(j, "")
		}
		j.terminate(a.killWait, msg)
		return
	}
	j.mu.Lock()
	p := j.proc
	j.mu.Unlock()
	if p != nil {
		_ = p.Signal(syscall.Signal(s.Signal))
	}
}

// terminate starts the kill sequence once, after writing msg to the job's
// error file.
func (j *job) terminate(killWait time.Duration, msg string) {
	j.mu.Lock()
	if j.ending {
		j.mu.Unlock()
		return
	}
	j.ending = true
	p := j.proc
	j.mu.Unlock()
	if msg != "" && j.errPath != "" {
		appendFile(j.errPath, msg)
	}
	if p != nil {
		p.Terminate(killWait)
	}
}

func (a *Agent) stepdMessage(j *job, why string) string {
	return fmt.Sprintf("slurmstepd: error: *** JOB %d ON %s CANCELLED AT %s%s ***\n",
		j.id, a.node, time.Now().Format("2006-01-02T15:04:05"), why)
}

func (a *Agent) appendErr(j *job, msg string) {
	if j.errPath != "" {
		appendFile(j.errPath, msg)
	}
}

// appendFile adds a line to a file the job already opened as its user;
// it never creates files or follows symlinks, since the agent runs as root.
func appendFile(path, msg string) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return
	}
	defer f.Close()
	_, _ = f.WriteString(msg)
}

func cpusOn(j *model.Job, node string) int {
	for _, a := range j.Alloc {
		if a.Node == node {
			return a.CPUs
		}
	}
	return 0
}

func (a *Agent) absConf() string {
	p, err := filepath.Abs(a.confPath)
	if err != nil {
		return a.confPath
	}
	return p
}
