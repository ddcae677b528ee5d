package agent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	pb "github.com/drover-hpc/drover/api/drover/v1"
	"github.com/drover-hpc/drover/internal/cgroups"
	"github.com/drover-hpc/drover/internal/executor"
	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/wire"
)

// job is one job on this node. The primary record (on the job's first
// node) runs the batch script, or holds an allocation for salloc/srun
// until it is released, and reports the job's end. Other nodes hold a
// secondary record, created by the job's first step there; it only runs
// steps and goes away silently when the controller says the job is over.
type job struct {
	id         uint32
	model      *model.Job
	primary    bool
	supervised bool // the batch script runs under a supervisor (outlives the agent)
	alloc      bool // an allocation recorded for a later agent
	stale      bool // an earlier run of a requeued job: ends without a report
	proc       executor.Process
	dir        string        // spool directory of the job
	errPath    string        // where slurmstepd-style messages go
	cg         cgroups.Group // the job's cgroup here; nil until created
	batch      *sampler      // the batch step's usage
	prologDone bool          // Prolog ran here (or was tried)
	prologErr  error         // and failed: the job goes back to the queue

	mu       sync.Mutex
	ending   bool
	timedOut bool
	// limit is the armed time limit (nil: none); suspended/frozenAt track
	// scontrol suspend, which stops the clock of the limit.
	limit     *time.Timer
	deadline  time.Time
	suspended bool
	frozenAt  time.Time
	// pausedFor is the time suspended here since the job's record was
	// written (model.SuspendedSecs holds what came before): the deadline
	// moves by it. Kept on disk with suspended and frozenAt (suspend.go).
	pausedFor time.Duration
	// limitSecs is the time limit scontrol update set while the job ran
	// (limitSet: there was one; the model's is the limit at launch).
	limitSecs int64
	limitSet  bool
	steps     map[model.StepID]*stepRun
	stepWG    sync.WaitGroup
	released  chan struct{} // closed when the job is told to end
}

// run is the job's run this record belongs to (model.Job.Run).
func (j *job) run() uint32 {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.model.Run()
}

func newJob(id uint32, mj *model.Job, primary bool) *job {
	return &job{id: id, model: mj, primary: primary, steps: map[model.StepID]*stepRun{}, released: make(chan struct{})}
}

func (a *Agent) launch(l *pb.Launch) {
	mj := wire.JobFromPB(l.Job)
	a.mu.Lock()
	if j := a.jobs[l.Job.Id]; j != nil {
		if !j.primary {
			// A step got here first: this node is the job's first node.
			j.mu.Lock()
			j.primary, j.model = true, mj
			j.mu.Unlock()
			a.mu.Unlock()
			go a.run(j)
			return
		}
		if cur := j.run(); cur > mj.Run() || (cur == mj.Run() && j.model.StartTime > mj.StartTime) {
			a.mu.Unlock()
			a.log.Warn("dropping the launch of an earlier run of the job", "job", j.id, "run", mj.Run(), "here", cur)
			return
		} else if cur != mj.Run() || j.model.StartTime != mj.StartTime {
			// A new run of a requeued job while the old one still runs
			// here (the node was cut off meanwhile): end the old run,
			// then start the new one.
			a.mu.Unlock()
			a.replaceStale(j, func() { a.launch(l) })
			return
		}
		a.mu.Unlock()
		return
	}
	if e := a.ends[l.Job.Id]; e != nil {
		if (e.StartTime == mj.StartTime || e.StartTime == 0) && (e.Run == mj.Run() || e.Run == 0) {
			// It already ran here: never twice. Tell the controller again.
			a.mu.Unlock()
			a.report(&pb.AgentMessage{Msg: &pb.AgentMessage_JobEnded{JobEnded: e}})
			return
		}
		delete(a.ends, l.Job.Id) // the end of an earlier run: moot now
	}
	j := newJob(l.Job.Id, mj, true)
	a.jobs[j.id] = j
	a.mu.Unlock()
	if l.KillWait > 0 {
		a.setKillWait(time.Duration(l.KillWait) * time.Second)
	}
	go a.run(j)
}

// replaceStale ends j, an earlier run of a job than one the controller
// assigned here now, without reporting its end (the controller has moved
// on from it), and calls then once its record is gone.
func (a *Agent) replaceStale(j *job, then func()) {
	j.mu.Lock()
	j.stale = true
	j.mu.Unlock()
	a.log.Warn("ending a stale run of a requeued job", "job", j.id, "run", j.run())
	a.terminateJob(j, "", 0)
	go func() {
		deadline := time.Now().Add(a.getKillWait() + 10*time.Second)
		for {
			a.mu.Lock()
			gone := a.jobs[j.id] != j
			a.mu.Unlock()
			if gone {
				break
			}
			if time.Now().After(deadline) {
				a.log.Error("a stale run of the job does not end; the new run goes ahead", "job", j.id)
				a.mu.Lock()
				if a.jobs[j.id] == j {
					delete(a.jobs, j.id)
				}
				a.mu.Unlock()
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		then()
	}()
}

func (a *Agent) run(j *job) {
	res := a.start(j)
	a.finish(j, res)
}

// start prepares the job's launch with its hooks (batchHooks), then
// launches its program and waits for it, or holds its allocation.
func (a *Agent) start(j *job) executor.Result {
	return a.startWith(j, batchHooks())
}

func (a *Agent) startWith(j *job, hooks []batchHook) executor.Result {
	bc := &batchCtx{a: a, j: j, mj: j.model}
	for _, h := range hooks {
		if err := h.Prestart(context.Background(), bc); err != nil {
			return executor.Result{ExitCode: 1, Err: err}
		}
	}
	if bc.interactive() {
		a.reportStarted(j, 0)
		return a.holdAllocation(j)
	}
	proc, err := a.startSupervised(j, bc.es)
	if err != nil {
		return executor.Result{ExitCode: 1, Err: err}
	}
	j.mu.Lock()
	j.proc = proc
	ending := j.ending
	j.mu.Unlock()
	a.reportStarted(j, proc.Pid())
	if ending { // cancelled while starting
		proc.Terminate(a.getKillWait())
	}
	a.timeLimit(j)
	res := a.outliveSupervisor(j, proc.Wait())
	for _, f := range bc.onExit {
		f(res)
	}
	j.stopLimit()
	return res
}

// startedAfter is how long a batch job runs before its start is reported.
// A job that ends sooner is reported by its end alone (JobEnded says it
// ran): short jobs cost the agent and the controller two messages less
// each. Nothing waits for the start report; it tells a controller whose
// node re-registers without the job that the job did run here (lost, not
// requeued), which only a node that died within this time leaves unsaid,
// as if the launch had not arrived.
const startedAfter = 100 * time.Millisecond

// reportStarted tells the controller the job's program runs (or its
// allocation is held), until it confirms; a batch script only if it still
// runs after startedAfter.
func (a *Agent) reportStarted(j *job, pid int) {
	run := j.run()
	send := func() {
		a.reportReliable(reportKey{job: j.id, run: run, started: true},
			&pb.AgentMessage{Msg: &pb.AgentMessage_JobStarted{JobStarted: &pb.JobStarted{JobId: j.id, Pid: int32(pid), Run: run}}})
	}
	if pid == 0 { // an allocation: no program that could end soon
		send()
		return
	}
	time.AfterFunc(startedAfter, func() {
		j.mu.Lock()
		ending := j.ending // its end report is coming
		j.mu.Unlock()
		if !ending {
			send()
		}
	})
}

// timeLimit arms the job's time limit: TIMEOUT, and the kill sequence.
func (a *Agent) timeLimit(j *job) {
	mj := j.model
	j.mu.Lock()
	defer j.mu.Unlock()
	limit := mj.TimeLimit
	if j.limitSet {
		// scontrol update TimeLimit= reached the node before the job's
		// launch armed its limit (the job is RUNNING from its allocation
		// on): the new limit counts.
		limit = j.limitSecs
	}
	if limit <= 0 {
		return
	}
	// Time spent suspended before this agent took the job is not run time.
	deadline := time.Unix(mj.StartTime+limit+mj.SuspendedSecs, 0).Add(j.pausedFor)
	j.deadline = deadline
	if !j.suspended {
		j.limit = time.AfterFunc(time.Until(deadline), func() { a.timedOut(j) })
	}
}

func (a *Agent) timedOut(j *job) {
	j.mu.Lock()
	j.timedOut = true
	j.mu.Unlock()
	a.terminateJob(j, a.stepdMessage(j, " DUE TO TIME LIMIT"), model.JobTimeout)
}

// stopLimit disarms the time limit once the job ended.
func (j *job) stopLimit() {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.limit != nil {
		j.limit.Stop()
	}
	j.deadline = time.Time{}
}

// holdAllocation is the primary record of an salloc/srun allocation: no
// program of its own, it lasts until the holder releases the job, the job
// is cancelled or its time runs out.
func (a *Agent) holdAllocation(j *job) executor.Result {
	if err := a.recordAllocation(j); err != nil {
		a.log.Warn("allocation not recorded: it will not outlive this agent", "job", j.id, "err", err)
	}
	a.timeLimit(j)
	<-j.released
	j.stopLimit()
	return executor.Result{}
}

// finish ends the job's remaining steps, reports the end and cleans the
// spool directory.
func (a *Agent) finish(j *job, res executor.Result) {
	a.endSteps(j)
	end := &pb.JobEnded{JobId: j.id, ExitCode: int32(res.ExitCode), Signal: int32(res.Signal), EndTime: time.Now().Unix(),
		StartTime: j.model.StartTime, Run: j.run()}
	j.mu.Lock()
	timedOut, batch, cg := j.timedOut, j.batch, j.cg
	j.mu.Unlock()
	var ooms uint64
	recycled := false
	replaced := a.replaced(j)
	if batch != nil {
		batch.close()
		if u := batch.usage(a.node, nodeAlloc(j.model, a.node).GPUs); u != nil {
			end.Usage = wire.UsageToPB(u)
		}
		ooms = batch.ooms()
		if replaced {
			// The job's groups are the new run's now (removeJobGroup).
		} else if r, ok := cg.(cgroups.Recycler); ok && batch.g != nil && ooms == 0 && !a.isStopping() && r.Recycle() {
			// Empty: kept, batch step included, for a later job
			// (cgroups.Recycler).
			recycled = true
			j.mu.Lock()
			j.cg = nil
			j.mu.Unlock()
		} else if batch.g != nil {
			// The leaf first: the job's group then goes with one rmdir
			// per hierarchy instead of being listed to find it.
			_ = batch.g.Delete()
		}
	} else if cg != nil && j.model.Spec != nil && j.model.Spec.Interactive {
		if st, err := cg.Stats(); err == nil {
			ooms = st.OOMKills
		}
	}
	// Its processes are gone with its cgroup: its spool directory may serve
	// the user's next job (jobdirs.go).
	gone := recycled || a.removeJobGroup(j)
	j.mu.Lock()
	prologErr := j.prologErr
	j.mu.Unlock()
	if prologErr == nil {
		a.epilog(j)
	}
	switch {
	case prologErr != nil:
		// Slurm's rule: the node drains (done by prolog) and the job goes
		// back to the queue, held unless SchedulerParameters has
		// nohold_on_prolog_fail.
		end.Requeue, end.Reason, end.ExitCode, end.Signal = true, model.ReasonLaunchFailedHeld, 0, 0
		if a.noHoldOnPrologFail() {
			end.Reason = ""
		}
		if j.model.Spec != nil && j.model.Spec.Interactive { // srun/salloc wait for it: fail
			end.Requeue = false
			end.State, end.Reason, end.ExitCode = uint32(model.JobFailed), model.ReasonLaunchFailed, 1
		}
	case ooms > 0 && res.Err == nil && !timedOut:
		// The kernel killed some of the job's processes for memory: the
		// job ends OUT_OF_MEMORY whatever its script returned after.
		a.appendErr(j, a.oomMessage(ooms, j.id, "batch"))
		end.State, end.Reason = uint32(model.JobOOM), model.ReasonOutOfMemory
		end.ExitCode, end.Signal = 0, oomSignal
	case errors.Is(res.Err, executor.ErrSupervisorLost):
		a.log.Warn("job ended with its supervisor lost", "job", j.id)
		st, reason := supervisorLostEnd()
		end.State, end.Reason, end.ExitCode, end.Signal = uint32(st), reason, 0, 0
		a.appendErr(j, fmt.Sprintf("slurmstepd: error: %v\n", res.Err))
	case res.Err != nil && errors.Is(res.Err, syscall.ENOSPC) && (j.model.Spec == nil || !j.model.Spec.Interactive) && a.diskCheck() != "":
		// The node's own disk is full (its spool or temporary directory,
		// as the health check measures: not a full filesystem the job
		// named). Drained at once, before the end goes out, and the job
		// back to the queue to run elsewhere, as slurmctld does for a
		// node's launch failure ("batch job complete failure"). Failed,
		// every job placed here until the next health round failed too.
		a.log.Warn("job launch failed: the node's disk is full; draining, the job goes back to the queue", "job", j.id, "err", res.Err)
		a.setHealth(ReasonDiskFull)
		end.Requeue, end.Reason, end.ExitCode, end.Signal = true, "", 0, 0
	case res.Err != nil:
		a.log.Warn("job launch failed", "job", j.id, "err", res.Err)
		end.State, end.Reason = uint32(model.JobFailed), model.ReasonLaunchFailed
		end.ExitCode, end.Signal = 1, 0
		a.appendErr(j, fmt.Sprintf("slurmstepd: error: %v\n", res.Err))
	case timedOut:
		end.State, end.Reason = uint32(model.JobTimeout), model.ReasonTimeLimit
		end.ExitCode, end.Signal = 0, int32(syscall.SIGTERM)
	}
	a.discardJobDir(j.dir, j.model.UserID, j.model.GroupID, gone)
	a.mu.Lock()
	if a.jobs[j.id] == j {
		delete(a.jobs, j.id)
	}
	j.mu.Lock()
	stale := j.stale
	j.mu.Unlock()
	stopping := a.stopping || stale
	if stopping {
		// Killed with the agent (KillJobsOnExit): nothing for the next
		// agent to take back.
		removeSuperDir(a.superDir(j.id))
	}
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
	if j != nil && s.Run != 0 && j.run() != s.Run {
		// Meant for another run of the job than the one here: never act
		// on a run the controller did not name.
		a.log.Info("ignoring a signal for another run of the job", "job", s.JobId, "run", s.Run, "here", j.run())
		return
	}
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
	if s.Suspend || s.Resume {
		a.suspend(j, s.Suspend)
		return
	}
	if limit, ok := wire.TimeLimitOf(s); ok {
		a.newTimeLimit(j, limit)
		return
	}
	if s.Terminate {
		// A frozen job cannot act on signals: thaw it first.
		a.suspend(j, false)
		msg, endAs := "", model.JobState(0)
		switch s.Message {
		case "CANCELLED":
			msg, endAs = a.stepdMessage(j, ""), model.JobCancelled
		case "PREEMPTED":
			msg, endAs = a.stepdMessage(j, " DUE TO PREEMPTION"), model.JobCancelled
		}
		a.terminateJob(j, msg, endAs)
		return
	}
	j.mu.Lock()
	p := j.proc
	if s.StepsOnly {
		p = nil
	}
	var steps []*stepRun
	if !s.BatchOnly {
		for _, st := range j.steps {
			steps = append(steps, st)
		}
	}
	j.mu.Unlock()
	if p != nil {
		_ = p.Signal(syscall.Signal(s.Signal))
	}
	for _, st := range steps {
		st.signal(syscall.Signal(s.Signal))
	}
}

// terminateJob ends everything the job runs here; its steps end as
// stepsAs (0: quietly). A secondary record leaves once its steps are gone,
// without a report: the job's first node reports the end.
func (a *Agent) terminateJob(j *job, msg string, stepsAs model.JobState) {
	if !j.terminate(a.getKillWait(), msg, stepsAs) {
		return
	}
	j.mu.Lock()
	primary := j.primary
	j.mu.Unlock()
	if primary {
		return
	}
	go func() {
		a.endSteps(j)
		a.removeJobGroup(j)
		j.mu.Lock()
		ran := j.prologDone && j.prologErr == nil
		j.mu.Unlock()
		if ran || a.conf().Prolog == "" {
			a.epilog(j)
		}
		a.mu.Lock()
		if a.jobs[j.id] == j && !j.primary {
			delete(a.jobs, j.id)
		}
		a.mu.Unlock()
	}()
}

// endSteps terminates the job's steps and waits for them to end.
func (a *Agent) endSteps(j *job) {
	j.mu.Lock()
	j.ending = true // no new steps from now on
	var steps []*stepRun
	for _, st := range j.steps {
		steps = append(steps, st)
	}
	j.mu.Unlock()
	for _, st := range steps {
		st.terminate(a.getKillWait(), 0)
	}
	j.stepWG.Wait()
}

// terminate starts the kill sequence once, after writing msg to the job's
// error file; it reports whether this call started it.
func (j *job) terminate(killWait time.Duration, msg string, stepsAs model.JobState) bool {
	j.mu.Lock()
	if j.ending {
		j.mu.Unlock()
		return false
	}
	j.ending = true
	p, errPath := j.proc, j.errPath
	var steps []*stepRun
	for _, st := range j.steps {
		steps = append(steps, st)
	}
	j.mu.Unlock()
	if msg != "" && errPath != "" {
		appendFile(j, errPath, msg)
	}
	if p != nil {
		p.Terminate(killWait)
	}
	for _, st := range steps {
		st.terminate(killWait, stepsAs)
	}
	// Released last: an allocation's holder then ends the steps quietly
	// (finish), and must not get there before they were told why.
	close(j.released)
	return true
}

func (a *Agent) stepdMessage(j *job, why string) string {
	return fmt.Sprintf("slurmstepd: error: *** JOB %d ON %s CANCELLED AT %s%s ***\n",
		j.id, a.node, time.Now().Format("2006-01-02T15:04:05"), why)
}

func (a *Agent) appendErr(j *job, msg string) {
	if j.errPath != "" {
		appendFile(j, j.errPath, msg)
	}
}

// appendFile adds one line to a file the job names, with the job user's
// rights (never root's: the path is the user's choice), without creating
// it or following a final symlink. Newlines inside msg (from user-chosen
// paths quoted in errors) are flattened so one line stays one line.
func appendFile(j *job, path, msg string) {
	msg = strings.ReplaceAll(strings.TrimRight(msg, "\n"), "\n", " ") + "\n"
	j.mu.Lock()
	uid, gid, groups := j.model.UserID, j.model.GroupID, j.model.Groups
	j.mu.Unlock()
	_ = executor.AsUser(uid, gid, groups, func() error {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|syscall.O_NOFOLLOW, 0)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = f.WriteString(msg)
		return err
	})
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

// umaskOf is the umask a job's programs run with: the submitter's
// (SLURM_UMASK), or -1 for the agent's own when the job carries none.
func umaskOf(spec *model.JobSpec) int {
	if spec == nil || spec.Umask == nil {
		return -1
	}
	return int(*spec.Umask & 0o777)
}
