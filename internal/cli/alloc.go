package cli

import (
	"context"
	"fmt"
	"os"

	"github.com/drover-hpc/drover/internal/model"
)

// WaitForAllocation waits until job id runs, saying so the way srun and
// salloc do ("job N queued and waiting for resources", "job N has been
// allocated resources"). A signal on sigs while waiting gives the job back.
// It returns the running job, or an error when the job ended first.
// pending, when not empty, is said before the queued line (salloc's
// "Pending job allocation N"). A job counts as queued once the scheduler
// gave it a reason to wait: a job that starts in the first cycle says
// nothing.
func WaitForAllocation(ctx context.Context, env *Env, c Client, id model.JobID, sigs <-chan os.Signal, pending string) (*model.Job, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	revoked := fmt.Errorf("Job allocation %d has been revoked.", id)
	type result struct {
		job *model.Job
		err error
	}
	res := make(chan result, 1)
	go func() {
		queued := false
		var out result
		err := c.WatchJobs(ctx, []model.JobID{id}, func(jobs []*model.Job) bool {
			if len(jobs) == 0 {
				out.err = revoked
				return false
			}
			j := jobs[0]
			switch {
			case j.State == model.JobPending:
				if !queued && (j.Reason != model.ReasonNone || j.HoldUser || j.HoldAdmin) {
					queued = true
					if pending != "" {
						env.Infof("%s", pending)
					}
					env.Infof("job %d queued and waiting for resources", id)
				}
				return true
			case j.State == model.JobRunning && !j.Completing:
				if queued {
					env.Infof("job %d has been allocated resources", id)
				}
				out.job = j
				return false
			}
			out.err = revoked
			return false
		})
		if out.job == nil && out.err == nil {
			out.err = err
			if err == nil {
				out.err = revoked
			}
		}
		res <- out
	}()
	select {
	case r := <-res:
		if r.job != nil {
			// The watch carries no spec details; fetch the full record.
			if l, err := c.ListJobs(ctx, JobQuery{IDs: []model.JobID{id}}); err == nil && len(l.Jobs) == 1 {
				r.job = l.Jobs[0]
			}
		}
		return r.job, r.err
	case <-sigs:
		_ = c.CompleteJob(context.Background(), id, 0, 0)
		return nil, revoked
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
