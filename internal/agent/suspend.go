package agent

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"time"

	pb "github.com/drover-hpc/drover/api/drover/v1"
)

// suspend freezes (scontrol suspend) or thaws (resume) every process of
// the job on this node through its cgroup's freezer, which stops them all
// at once, forks included; without a freezer it falls back to SIGSTOP and
// SIGCONT to the job's process groups, as Slurm does. The time limit's
// clock stops while the job is suspended.
func (a *Agent) suspend(j *job, freeze bool) {
	j.mu.Lock()
	if j.suspended == freeze {
		j.mu.Unlock()
		return
	}
	j.suspended = freeze
	now := time.Now()
	if freeze {
		j.frozenAt = now
		if j.limit != nil {
			j.limit.Stop()
			j.limit = nil
		}
	} else {
		j.pausedFor += now.Sub(j.frozenAt)
		if !j.deadline.IsZero() {
			j.deadline = j.deadline.Add(now.Sub(j.frozenAt))
			j.limit = time.AfterFunc(time.Until(j.deadline), func() { a.timedOut(j) })
		}
	}
	if j.supervised || j.alloc {
		a.saveSuspension(j)
	}
	cg, proc := j.cg, j.proc
	var steps []*stepRun
	for _, st := range j.steps {
		steps = append(steps, st)
	}
	j.mu.Unlock()

	if cg != nil {
		err := cg.Freeze(freeze)
		if err == nil {
			a.log.Info("job suspended", "job", j.id, "frozen", freeze)
			return
		}
		a.log.Debug("no freezer, signalling instead", "job", j.id, "err", err)
	}
	sig := syscall.SIGCONT
	if freeze {
		sig = syscall.SIGSTOP
	}
	if proc != nil {
		_ = proc.Signal(sig)
	}
	for _, st := range steps {
		st.signal(sig)
	}
}

// newTimeLimit re-arms a running job's time limit after scontrol update
// TimeLimit=: the deadline moves by the change, so time already spent
// suspended stays out of the run time.
func (a *Agent) newTimeLimit(j *job, limit int64) {
	j.mu.Lock()
	defer j.mu.Unlock()
	old := j.model.TimeLimit
	if j.limitSet {
		old = j.limitSecs
	}
	j.limitSecs, j.limitSet = limit, true
	hadLimit := old > 0
	if j.deadline.IsZero() && (hadLimit || j.proc == nil || j.ending) {
		return // not armed yet, or ended
	}
	if j.limit != nil {
		j.limit.Stop()
		j.limit = nil
	}
	if limit <= 0 {
		j.deadline = time.Time{} // UNLIMITED
		return
	}
	if j.deadline.IsZero() {
		// It had no limit: count from its start, less time suspended.
		j.deadline = time.Unix(j.model.StartTime+limit+j.model.SuspendedSecs, 0).Add(j.pausedFor)
		if j.suspended {
			j.deadline = j.deadline.Add(time.Since(j.frozenAt))
		}
	} else {
		j.deadline = j.deadline.Add(time.Duration(limit-old) * time.Second)
	}
	if !j.suspended {
		j.limit = time.AfterFunc(time.Until(j.deadline), func() { a.timedOut(j) })
	}
	a.log.Info("time limit changed", "job", j.id, "limit", limit)
}

// A job that outlives the agent (supervised, or an allocation) may be
// suspended when it stops. Its processes stay frozen, and the next agent
// must know: its time limit must not count on, and a resume must thaw it
// (before, the new agent took it for running, counted its limit and
// ignored the resume). So the suspension goes with the job's record.

// suspendFile is where a job's suspension is kept, in its supervisor
// directory.
const suspendFile = "suspend.json"

type suspension struct {
	// FrozenAt is when the current suspension began (Unix ns); 0: the
	// job runs.
	FrozenAt int64 `json:"frozen_at,omitempty"`
	// PausedNs is the time suspended since the job's record was written,
	// not counting the current suspension.
	PausedNs int64 `json:"paused_ns,omitempty"`
}

// saveSuspension writes j's suspension for a later agent (j.mu held).
func (a *Agent) saveSuspension(j *job) {
	s := suspension{PausedNs: int64(j.pausedFor)}
	if j.suspended {
		s.FrozenAt = j.frozenAt.UnixNano()
	}
	b, _ := json.Marshal(&s)
	path := filepath.Join(a.superDir(j.id), suspendFile)
	// Whole or not at all: a torn file would lose the suspension.
	err := os.WriteFile(path+".tmp", b, 0o600)
	if err == nil {
		err = os.Rename(path+".tmp", path)
	}
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		a.log.Warn("the job's suspension is not recorded: a restarted agent would not know it", "job", j.id, "err", err)
	}
}

// loadSuspension restores the suspension an earlier agent recorded in dir.
func loadSuspension(j *job, dir string) {
	b, err := os.ReadFile(filepath.Join(dir, suspendFile))
	if err != nil {
		return
	}
	var s suspension
	if json.Unmarshal(b, &s) != nil {
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	j.pausedFor = time.Duration(s.PausedNs)
	if s.FrozenAt != 0 {
		j.suspended, j.frozenAt = true, time.Unix(0, s.FrozenAt)
	}
}

// matchSuspension freezes the expected jobs the controller holds
// suspended and thaws the others, at registration: a suspend or resume
// sent while this agent was away (or restarting) reached nobody.
// suspend does nothing to a job already as asked.
func (a *Agent) matchSuspension(expected, suspended []uint32) {
	frozen := map[uint32]bool{}
	for _, id := range suspended {
		frozen[id] = true
	}
	for _, id := range expected {
		a.mu.Lock()
		j := a.jobs[id]
		a.mu.Unlock()
		if j != nil {
			a.suspend(j, frozen[id])
		}
	}
}

// matchTimeLimits takes, at registration, the time limits the controller
// holds for the node's jobs: a scontrol update TimeLimit= sent while this
// agent was away reached nobody, and a restarted agent knows only the
// limit its job record had at launch.
func (a *Agent) matchTimeLimits(runs []*pb.JobRun) {
	for _, r := range runs {
		a.mu.Lock()
		j := a.jobs[r.JobId]
		a.mu.Unlock()
		if j == nil {
			continue
		}
		j.mu.Lock()
		have := j.model.TimeLimit
		if j.limitSet {
			have = j.limitSecs
		}
		j.mu.Unlock()
		if have != r.TimeLimit {
			a.newTimeLimit(j, r.TimeLimit)
		}
	}
}
