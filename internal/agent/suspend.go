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
