package state

import (
	"cmp"

	"github.com/drover-hpc/drover/internal/model"
)

// Typed comparers for the sorted maps: without one the library compares
// keys through reflection, which showed as a good part of a priority
// recalculation over 100,000 jobs (every job looked up by id).
type (
	jobIDs  struct{}
	seqs    struct{}
	strKeys struct{}
)

func (jobIDs) Compare(a, b model.JobID) int { return cmp.Compare(a, b) }
func (seqs) Compare(a, b uint64) int        { return cmp.Compare(a, b) }
func (strKeys) Compare(a, b string) int     { return cmp.Compare(a, b) }
