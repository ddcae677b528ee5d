package state

import (
	"testing"

	"github.com/drover-hpc/drover/internal/model"
)

// A user's held bytes count each distinct spec once, follow spec changes
// and deletions, and are rebuilt by a restore.
func TestHeldBytes(t *testing.T) {
	s := New(1)
	put := func(j *model.Job) {
		txn := s.Begin()
		txn.PutJob(j)
		txn.Commit(uint64(j.ID))
	}
	shared := &model.JobSpec{Script: "#!/bin/sh\n", Env: []string{"A=1234"}} // 16 bytes
	other := &model.JobSpec{Script: "x", Argv: []string{"ab"}, SubmitLine: "sbatch"}
	put(&model.Job{ID: 1, UserID: 7, Spec: shared, State: model.JobPending})
	put(&model.Job{ID: 2, UserID: 7, Spec: shared, State: model.JobPending})
	put(&model.Job{ID: 3, UserID: 8, Spec: other, State: model.JobPending})
	if got := s.HeldBytes(7); got != 16 {
		t.Fatalf("two jobs sharing a 16-byte spec: %d", got)
	}
	if got := s.HeldBytes(8); got != 9 {
		t.Fatalf("user 8: %d, want 9", got)
	}
	// A state change keeps the count; a new spec moves it.
	put(&model.Job{ID: 1, UserID: 7, Spec: shared, State: model.JobRunning})
	put(&model.Job{ID: 2, UserID: 7, Spec: &model.JobSpec{Script: "y"}, State: model.JobPending})
	if got := s.HeldBytes(7); got != 17 {
		t.Fatalf("after job 2's spec changed: %d, want 17", got)
	}
	txn := s.Begin()
	txn.DeleteJob(1)
	txn.DeleteJob(3)
	txn.Commit(10)
	if a, b := s.HeldBytes(7), s.HeldBytes(8); a != 1 || b != 0 {
		t.Fatalf("after deletes: %d %d, want 1 0", a, b)
	}
	txn = s.Begin()
	l := txn.LoadJobs()
	l.Put(&model.Job{ID: 5, UserID: 8, Spec: other})
	l.Put(&model.Job{ID: 6, UserID: 8, Spec: other})
	l.Done()
	txn.Commit(11)
	if a, b := s.HeldBytes(7), s.HeldBytes(8); a != 0 || b != 9 {
		t.Fatalf("after a restore: %d %d, want 0 9", a, b)
	}
}

// The steps of a user's jobs are counted apart: a new Steps slice
// recounts the job's, a deleted job gives its steps' share back, and a
// restore counts them again.
func TestHeldStepBytes(t *testing.T) {
	s := New(1)
	put := func(j *model.Job) {
		txn := s.Begin()
		txn.PutJob(j)
		txn.Commit(uint64(j.ID))
	}
	step := func(env string) *model.Step {
		return &model.Step{Spec: &model.StepSpec{Argv: []string{"ab"}, Env: []string{env}}}
	}
	j := &model.Job{ID: 1, UserID: 7, State: model.JobRunning}
	put(j)
	if got := s.HeldStepBytes(7); got != 0 {
		t.Fatalf("no steps: %d", got)
	}
	j = j.Clone()
	j.Steps = []*model.Step{step("A=1234")}
	put(j)
	j = j.Clone()
	j.Steps = append([]*model.Step{}, j.Steps[0], step("B=12"))
	put(j)
	if got := s.HeldStepBytes(7); got != 14 {
		t.Fatalf("two steps: %d, want 14", got)
	}
	j = j.Clone() // a state change keeps the steps
	j.State = model.JobCompleted
	put(j)
	if got, jobs := s.HeldStepBytes(7), s.HeldBytes(7); got != 14 || jobs != 0 {
		t.Fatalf("after a state change: steps %d jobs %d, want 14 0", got, jobs)
	}
	txn := s.Begin()
	l := txn.LoadJobs()
	l.Put(j)
	l.Done()
	txn.Commit(5)
	if got := s.HeldStepBytes(7); got != 14 {
		t.Fatalf("after a restore: %d, want 14", got)
	}
	txn = s.Begin()
	txn.DeleteJob(1)
	txn.Commit(6)
	if got := s.HeldStepBytes(7); got != 0 {
		t.Fatalf("after the delete: %d", got)
	}
}
