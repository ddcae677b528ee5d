package agent

import (
	"context"
	"time"

	"github.com/drover-hpc/drover/internal/executor"
)

// A node without its job supervisor runs batch scripts directly: they end
// with the agent. One attempt at the agent's start is not enough (a
// supervisor slow to come up on a loaded node, its socket path blocked for
// a while, one killed later), so the agent keeps trying, with backoff,
// for as long as it runs; jobs started once one answers go supervised.
// Jobs already running stay as they are: a running program cannot be
// handed to a supervisor.

// supervisorRetryMin and supervisorRetryMax bound the wait between two
// attempts to reach a supervisor; each attempt is itself bounded
// (executor.SupervisorAnswerTimeout).
const (
	supervisorRetryMin = time.Second
	supervisorRetryMax = time.Minute
)

// keepSupervisor reaches a supervisor when the agent has none, and again
// whenever the one it has is lost, until ctx ends.
func (a *Agent) keepSupervisor(ctx context.Context) {
	backoff := supervisorRetryMin
	attempts := 0
	for ctx.Err() == nil {
		if sup := a.supervisor(); sup != nil {
			select {
			case <-ctx.Done():
				return
			case <-sup.Lost():
			}
			a.mu.Lock()
			if a.sup == sup {
				a.sup = nil
			}
			a.mu.Unlock()
			if ctx.Err() != nil {
				return
			}
			// At once: the jobs it held are followed without it
			// (suplost.go); the next ones need a new one.
			a.log.Warn("the node's job supervisor is gone; starting another")
			backoff, attempts = supervisorRetryMin, 0
		} else {
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
		}
		attempts++
		sup, err := executor.ConnectSupervisor(supervisorSocket(a.spool))
		if err != nil {
			backoff = min(backoff*2, supervisorRetryMax)
			a.log.Warn("no job supervisor: batch jobs will not outlive this agent; retrying",
				"attempt", attempts, "err", err, "retry_in", backoff)
			continue
		}
		if ctx.Err() != nil {
			sup.Close()
			return
		}
		a.mu.Lock()
		a.sup = sup
		a.mu.Unlock()
		a.log.Info("job supervisor reached: batch jobs started from now on outlive this agent", "attempt", attempts)
		backoff, attempts = supervisorRetryMin, 0
	}
}
