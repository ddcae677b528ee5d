package state

import "github.com/drover-hpc/drover/internal/model"

// JobStats counts job transitions since Since (sdiag's "Jobs submitted",
// "started", ...). They are derived from the committed changes, so every
// replica agrees and a failover keeps them.
type JobStats struct {
	Since     int64  `json:"since"`
	Submitted uint64 `json:"submitted"`
	Started   uint64 `json:"started"`
	Completed uint64 `json:"completed"`
	Canceled  uint64 `json:"canceled"`
	Failed    uint64 `json:"failed"`
}

// count updates the counters for a job going from old (nil: new) to j.
func (s *JobStats) count(old, j *model.Job) {
	if old == nil {
		s.Submitted++
	}
	if j.StartTime != 0 && (old == nil || old.StartTime != j.StartTime) {
		s.Started++
	}
	if j.Finished() && (old == nil || !old.Finished()) {
		switch j.State {
		case model.JobCompleted:
			s.Completed++
		case model.JobCancelled:
			s.Canceled++
		default:
			s.Failed++
		}
	}
}

// Stats returns the job counters.
func (s *Snapshot) Stats() JobStats { return s.stats }

// SetStats replaces the job counters (reset, restore).
func (t *Txn) SetStats(st JobStats) { t.snap.stats = st }
