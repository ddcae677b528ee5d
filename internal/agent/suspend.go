package agent

import (
	"syscall"
	"time"
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
	} else if !j.deadline.IsZero() {
		j.deadline = j.deadline.Add(now.Sub(j.frozenAt))
		j.limit = time.AfterFunc(time.Until(j.deadline), func() { a.timedOut(j) })
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
		j.deadline = time.Unix(j.model.StartTime+limit+j.model.SuspendedSecs, 0)
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
