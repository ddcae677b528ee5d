package service

import (
	"context"

	"github.com/drover-hpc/drover/internal/api"
	"github.com/drover-hpc/drover/internal/model"
)

// StepStats asks the nodes of a running job for the current usage of its
// steps (one step when hasStep); the owner and administrators may ask.
// failed lists the nodes that did not answer in time.
func (s *Service) StepStats(ctx context.Context, jobID model.JobID, step model.StepID, hasStep bool) ([]api.StepStat, []string, error) {
	id, err := s.Identify(ctx)
	if err != nil {
		return nil, nil, err
	}
	j, err := s.runningJob(id, jobID)
	if err != nil {
		return nil, nil, err
	}
	if hasStep && step != model.StepBatch {
		if st := j.Step(step); st == nil || st.Finished() {
			return nil, nil, invalid("Job step not found")
		}
	}
	return s.notify.StepStats(ctx, j, step, hasStep)
}
