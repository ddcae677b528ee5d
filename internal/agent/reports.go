package agent

import (
	"context"
	"time"

	pb "github.com/drover-hpc/drover/api/drover/v1"
)

// A step's end on this node and a batch script's start are reports the
// controller must not miss: a lost StepEnded leaves the step RUNNING (and
// its CPUs held) until the node re-registers, a lost JobStarted makes a
// node restart requeue a job that did run. Like JobEnded, they are kept
// until the controller confirms them (ReportAck), resent after every
// registration and, while connected, when unconfirmed for resendAfter.
// The controller applies both idempotently, so a resend is harmless. An
// older controller confirms nothing (Registered.acks_reports is false):
// then each is sent once more after registration and forgotten, as
// before.

// reportKey names one report: a step's end (started false) or a job's
// start, of one run of the job.
type reportKey struct {
	job     uint32
	step    int32
	run     uint32
	started bool
}

type pendingReport struct {
	m    *pb.AgentMessage
	sent time.Time
}

// maxPending bounds the reports kept for a controller that never confirms
// them; past it the oldest are forgotten (and the node's next registration
// settles what they said: lost steps end as NODE_FAIL).
const maxPending = 10000

// reportReliable queues m for the controller and keeps it until confirmed.
func (a *Agent) reportReliable(k reportKey, m *pb.AgentMessage) {
	a.mu.Lock()
	if len(a.pending) >= maxPending {
		var oldest reportKey
		var at time.Time
		for k, p := range a.pending {
			if at.IsZero() || p.sent.Before(at) {
				oldest, at = k, p.sent
			}
		}
		delete(a.pending, oldest)
		a.log.Warn("too many unconfirmed reports; forgetting the oldest", "job", oldest.job, "step", oldest.step)
	}
	a.pending[k] = &pendingReport{m: m, sent: time.Now()}
	a.mu.Unlock()
	a.report(m)
}

// acked forgets a confirmed report.
func (a *Agent) acked(r *pb.ReportAck) {
	k := reportKey{job: r.JobId, step: r.StepId, run: r.Run, started: r.Started}
	if r.Started {
		k.step = 0
	}
	a.mu.Lock()
	delete(a.pending, k)
	a.mu.Unlock()
}

// resendAfter is how long a report may stay unconfirmed on a live stream
// before it is sent again.
func (a *Agent) resendAfter() time.Duration {
	return max(3*a.msgTimeout(), 3*a.heartbeatEvery())
}

// resendReports sends the unconfirmed reports sent longer than older ago
// (0: all). To a controller that does not confirm, they go once and are
// forgotten.
func (a *Agent) resendReports(stream agentStream, cancel context.CancelFunc, older time.Duration) error {
	acks := a.acksReports.Load()
	if older > 0 && !acks {
		return nil
	}
	now := time.Now()
	a.mu.Lock()
	var due []*pb.AgentMessage
	for k, p := range a.pending {
		if older > 0 && now.Sub(p.sent) < older {
			continue
		}
		due = append(due, p.m)
		p.sent = now
		if !acks {
			delete(a.pending, k)
		}
	}
	a.mu.Unlock()
	for _, m := range due {
		if err := a.sendWithin(stream, cancel, m); err != nil {
			return err
		}
	}
	return nil
}

// pendingCount is how many reports await confirmation.
func (a *Agent) pendingCount() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.pending)
}
