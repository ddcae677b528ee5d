package service

import (
	"context"
	"runtime"

	"github.com/drover-hpc/drover/internal/api"
	"github.com/drover-hpc/drover/internal/model"
)

// The service is the controller's implementation of the one API; the
// transport adapters reach it only through these interfaces.
var (
	_ api.Service    = (*Service)(nil)
	_ api.JoinTokens = (*Service)(nil)
)

// DiagSource fills in what the controller's loops measure (scheduler
// cycles, accounting backlog) for sdiag, and starts those figures afresh
// when reset; the daemon that wires the controller sets it.
type DiagSource func(d *api.DiagInfo, reset bool)

// SetDiagSource installs the controller's part of sdiag.
func (s *Service) SetDiagSource(f DiagSource) { s.diag = f }

// SetHost names this controller in scontrol ping's answer.
func (s *Service) SetHost(host string) { s.host = host }

// Ping answers scontrol ping: this controller, up and leading.
func (s *Service) Ping(ctx context.Context) (*api.PingResult, error) {
	if _, err := s.Identify(ctx); err != nil {
		return nil, err
	}
	return &api.PingResult{Controllers: []api.ControllerStatus{{Host: s.host, Primary: true, Up: true, Leader: true}}}, nil
}

// Config returns the running configuration (scontrol show config).
func (s *Service) Config(ctx context.Context) ([]api.KV, error) {
	if _, err := s.Identify(ctx); err != nil {
		return nil, err
	}
	cfg := s.Settings().Config
	out := make([]api.KV, len(cfg))
	for i, kv := range cfg {
		out[i] = api.KV{Key: kv[0], Value: kv[1]}
	}
	return out, nil
}

// Diag returns the controller's statistics (sdiag); reset (operators
// only) starts them afresh after reading. The RPC tables are left to the
// transport adapter, which counts the calls.
func (s *Service) Diag(ctx context.Context, reset bool) (*api.DiagInfo, error) {
	if reset {
		if err := s.ResetStats(ctx); err != nil {
			return nil, err
		}
	} else if _, err := s.Identify(ctx); err != nil {
		return nil, err
	}
	snap := s.store.Snapshot()
	st := snap.Stats()
	d := &api.DiagInfo{
		Now: s.clock.Now().Unix(), Since: st.Since, ServerThreads: runtime.NumGoroutine(), AcctDisabled: !s.AccountingEnabled(),
		JobsSubmitted: st.Submitted, JobsStarted: st.Started, JobsCompleted: st.Completed,
		JobsCanceled: st.Canceled, JobsFailed: st.Failed,
	}
	if s.diag != nil {
		s.diag(d, reset)
	}
	if d.Since == 0 {
		d.Since = d.SchedSince
	}
	snap.EachActive(func(j *model.Job) bool {
		switch j.State {
		case model.JobPending:
			d.JobsPending++
		case model.JobRunning:
			d.JobsRunning++
		}
		return true
	})
	return d, nil
}

// ListReservations answers scontrol show reservation and sinfo -T.
func (s *Service) ListReservations(ctx context.Context) ([]*model.Reservation, int64, error) {
	return s.Reservations(ctx)
}

// Priorities answers sprio and sshare.
func (s *Service) Priorities(ctx context.Context) (*api.PriorityInfo, error) {
	r, err := s.PriorityFactors(ctx)
	if err != nil {
		return nil, err
	}
	w := r.Weights
	out := &api.PriorityInfo{Multifactor: r.Multifactor, FairTree: r.FairTree, WAge: w.Age, WFairShare: w.FairShare,
		WJobSize: w.JobSize, WPart: w.Partition, WQOS: w.QOS, WTRES: r.WeightTRES}
	for _, jp := range r.Jobs {
		j, f := jp.Job, jp.Factors
		p := api.JobPriority{ID: j.DisplayID(), JobID: uint32(j.ID), Partition: j.Partition, User: j.UserName,
			UID: j.UserID, Priority: f.Priority, Age: f.Age, FairShare: f.FairShare, JobSize: f.JobSize, Part: f.Partition,
			QOS: f.QOS, Nice: f.Nice}
		for _, t := range f.TRES {
			p.TRES = append(p.TRES, api.TRESFactor{Name: t.Name, Factor: t.Factor, Weighted: t.Weighted})
		}
		out.Jobs = append(out.Jobs, p)
	}
	for _, sr := range r.Shares {
		out.Shares = append(out.Shares, api.ShareRow{Account: sr.Account, User: sr.User, Depth: sr.Depth, RawShares: sr.RawShares,
			NormShares: sr.NormShares, RawUsage: sr.RawUsage, EffUsage: sr.EffUsage, FairShare: sr.FairShare,
			NormUsage: sr.NormUsage, LevelFS: sr.LevelFS})
	}
	return out, nil
}
