// Package sbatch is the sbatch command: it builds a job from options,
// #SBATCH directives and SBATCH_* variables (package jobspec), submits it,
// and prints "Submitted batch job N" only once the job is committed.
package sbatch

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/drover-hpc/drover/internal/cli"
	"github.com/drover-hpc/drover/internal/jobspec"
	"github.com/drover-hpc/drover/internal/model"
)

// Run is the sbatch entry point.
func Run(ctx context.Context, env *cli.Env, args []string) int {
	opts, code, done := cli.ParseJob(env, jobspec.Sbatch, args)
	if done {
		return code
	}
	c, err := env.Client()
	if err != nil {
		env.Errorf("Batch job submission failed: %v", err)
		return env.ExitError()
	}
	id, err := submit(ctx, env, c, opts.Spec)
	if err != nil {
		env.Errorf("Batch job submission failed: %v", err)
		return env.ExitError()
	}
	switch {
	case opts.Parsable:
		fmt.Fprintf(env.Stdout, "%d\n", id)
	case !opts.Quiet:
		fmt.Fprintf(env.Stdout, "Submitted batch job %d\n", id)
	}
	if !opts.Wait {
		return 0
	}
	return waitJob(ctx, env, c, id)
}

// maxRetries is how often sbatch retries a submission refused for now,
// waiting one second longer each time (about two minutes in all), as
// Slurm's sbatch does.
const maxRetries = 15

// submit submits spec, retrying while the controller says to try again.
func submit(ctx context.Context, env *cli.Env, c cli.Client, spec *model.JobSpec) (model.JobID, error) {
	for retries := 0; ; retries++ {
		id, err := c.SubmitJob(ctx, spec)
		if !errors.Is(err, cli.ErrTryAgain) || retries >= maxRetries {
			return id, err
		}
		if retries == 0 {
			env.Errorf("Slurm temporarily unable to accept job, sleeping and retrying")
		}
		t := time.NewTimer(time.Duration(retries+1) * time.Second)
		select {
		case <-ctx.Done():
			t.Stop()
			return 0, ctx.Err()
		case <-t.C:
		}
	}
}

// waitJob blocks until every record of the job (all array tasks) ended and
// returns the highest exit code, 1 for a job killed by a signal.
func waitJob(ctx context.Context, env *cli.Env, c cli.Client, id model.JobID) int {
	code := 0
	err := c.WatchJobs(ctx, []model.JobID{id}, func(jobs []*model.Job) bool {
		code = 0
		for _, j := range jobs {
			if !j.Finished() {
				return true
			}
			jc := int(j.ExitCode)
			if j.Signal != 0 || j.State == model.JobCancelled || j.State == model.JobTimeout || j.State == model.JobNodeFail {
				jc = max(jc, 1)
			}
			code = max(code, jc)
		}
		return false
	})
	if err != nil {
		env.Errorf("%v", err)
		return env.ExitError()
	}
	return code
}
