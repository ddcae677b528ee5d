package state

import (
	"testing"

	"github.com/drover-hpc/drover/internal/model"
)

// BenchmarkEachActive100k walks 100,000 unfinished jobs (and a few
// finished ones), as a listing of a big queue does.
func BenchmarkEachActive100k(b *testing.B) {
	s := New(1)
	txn := s.Begin()
	for i := 1; i <= 100000; i++ {
		st := model.JobPending
		if i%100 == 0 {
			st = model.JobCompleted
		}
		txn.PutJob(&model.Job{ID: model.JobID(i), State: st})
	}
	txn.Commit(1)
	snap := s.Snapshot()
	for b.Loop() {
		n := 0
		snap.EachActive(func(*model.Job) bool { n++; return true })
		if n != 99000 {
			b.Fatal(n)
		}
	}
}
