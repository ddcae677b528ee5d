package service

import (
	"context"
	"errors"
	"strings"

	"github.com/drover-hpc/drover/internal/acct"
	"github.com/drover-hpc/drover/internal/api"
	"github.com/drover-hpc/drover/internal/fsm"
	"github.com/drover-hpc/drover/internal/state"
)

// ErrAcctDisabled answers accounting queries on a cluster that keeps no
// accounting (AccountingStorageType=accounting_storage/none).
var ErrAcctDisabled = api.ErrAcctDisabled

// SetAccounting installs the accounting store queries read (nil: none).
func (s *Service) SetAccounting(st acct.Store) { s.acct = st }

// AcctChunk is how many records AcctJobs hands over at a time, so that a
// query over months of jobs streams instead of building one huge reply.
const AcctChunk = 2000

// AcctJobs reads job records from the accounting database and passes them
// to fn in chunks. Every authenticated user may read every record, as in
// Slurm without PrivateData; sacct itself narrows to the caller's jobs.
func (s *Service) AcctJobs(ctx context.Context, q acct.Query, fn func([]*acct.Job) error) error {
	if _, err := s.Identify(ctx); err != nil {
		return err
	}
	if s.acct == nil {
		return ErrAcctDisabled
	}
	q.Clusters = s.acctClusters(q.Clusters)
	jobs, err := s.acct.Jobs(ctx, q)
	if err != nil {
		if errors.Is(err, acct.ErrUnavailable) {
			return &Error{Code: CodeUnavailable, Msg: "Unable to contact the accounting storage: " + err.Error()}
		}
		return err
	}
	for len(jobs) > 0 {
		n := min(len(jobs), AcctChunk)
		if err := fn(jobs[:n]); err != nil {
			return err
		}
		jobs = jobs[n:]
	}
	return nil
}

// acctClusters resolves sacct's -M: no list is the local cluster,
// "all" (or the old "-1") every cluster the database holds.
func (s *Service) acctClusters(list []string) []string {
	if len(list) == 0 {
		return []string{s.Settings().ClusterName}
	}
	for _, c := range list {
		if strings.EqualFold(c, "all") || c == "-1" {
			return nil
		}
	}
	return list
}

// AccountingEnabled reports whether the cluster keeps accounting records.
func (s *Service) AccountingEnabled() bool { return s.acct != nil }

// Snapshot is the current state, for read-only reports.
func (s *Service) Snapshot() *state.Snapshot { return s.store.Snapshot() }

// ResetStats zeroes the job counters (sdiag -r); administrators only.
func (s *Service) ResetStats(ctx context.Context) error {
	id, err := s.Identify(ctx)
	if err != nil {
		return err
	}
	if !s.privileged(id) {
		return &Error{Code: CodeDenied, Msg: "Access/permission denied"}
	}
	_, err = s.raft.Apply(fsm.TypeResetStats, &fsm.ResetStats{Now: s.clock.Now().Unix()})
	return err
}
