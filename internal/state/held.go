package state

import (
	"sync"

	"github.com/drover-hpc/drover/internal/model"
)

// heldIndex counts, per user, the bytes of batch scripts, argv,
// environments and submit lines that the user's jobs in memory hold
// (pending, running and ended ones not yet purged): the controller keeps
// them in memory where slurmctld keeps them on disk, so a user's 10,000
// jobs with a 2 MiB environment each would be 20 GiB of it. Each distinct
// spec counts once, as it is held once: an array's tasks, and jobs
// submitted alike, share one.
//
// Steps are counted apart (stepUsers): a step's argv, --multi-prog argv
// and environment (up to 2 MiB each) are held while it runs, and the
// per-job step budget alone let a user with many running jobs hold GiBs.
//
// It is an index beside the snapshots, not in them: the service reads it
// to admit a submission, on the leader only, and each replica builds its
// own as it applies the log (shared specs are a replica's own too).
type heldIndex struct {
	mu    sync.Mutex
	specs map[*model.JobSpec]*specRef
	users map[uint32]int64
	// steps is what each job's steps hold (jobs with steps only), and
	// stepUsers their sum per user.
	steps     map[model.JobID]int64
	stepUsers map[uint32]int64
}

// specRef is a distinct spec: the user charged for it and the jobs that
// hold it.
type specRef struct {
	uid   uint32
	jobs  int32
	bytes int64
}

func newHeldIndex() *heldIndex {
	return &heldIndex{specs: map[*model.JobSpec]*specRef{}, users: map[uint32]int64{},
		steps: map[model.JobID]int64{}, stepUsers: map[uint32]int64{}}
}

// add counts job j's spec for its user, unless another job holds it.
func (h *heldIndex) add(j *model.Job) {
	if j == nil || j.Spec == nil {
		return
	}
	if r := h.specs[j.Spec]; r != nil {
		r.jobs++
		return
	}
	n := SpecBytes(j.Spec)
	h.specs[j.Spec] = &specRef{uid: j.UserID, jobs: 1, bytes: n}
	h.users[j.UserID] += n
}

// drop is add undone.
func (h *heldIndex) drop(j *model.Job) {
	if j == nil || j.Spec == nil {
		return
	}
	r := h.specs[j.Spec]
	if r == nil {
		return
	}
	if r.jobs--; r.jobs > 0 {
		return
	}
	delete(h.specs, j.Spec)
	if h.users[r.uid] -= r.bytes; h.users[r.uid] <= 0 {
		delete(h.users, r.uid)
	}
}

// replace moves the count from old (nil: a new job) to j (nil: deleted).
func (h *heldIndex) replace(old, j *model.Job) {
	sameSpec := old != nil && j != nil && old.Spec == j.Spec && old.UserID == j.UserID
	same := sameSteps(old, j)
	if sameSpec && same {
		return // the common change: state, not spec or steps
	}
	h.mu.Lock()
	if !sameSpec {
		h.drop(old)
		h.add(j)
	}
	if !same {
		h.setSteps(old, j)
	}
	h.mu.Unlock()
}

// sameSteps reports whether old and j hold the same steps: step changes
// replace a job's Steps slice, never an element in place.
func sameSteps(old, j *model.Job) bool {
	switch {
	case old == nil && j == nil:
		return true
	case old == nil:
		return len(j.Steps) == 0
	case j == nil:
		return len(old.Steps) == 0
	}
	return old.UserID == j.UserID && len(old.Steps) == len(j.Steps) &&
		(len(j.Steps) == 0 || &old.Steps[0] == &j.Steps[0])
}

// setSteps moves the count of a job's steps from old to j.
func (h *heldIndex) setSteps(old, j *model.Job) {
	if old != nil {
		if n, ok := h.steps[old.ID]; ok {
			delete(h.steps, old.ID)
			if h.stepUsers[old.UserID] -= n; h.stepUsers[old.UserID] <= 0 {
				delete(h.stepUsers, old.UserID)
			}
		}
	}
	if j == nil {
		return
	}
	var n int64
	for _, st := range j.Steps {
		n += StepExecBytes(st.Spec)
	}
	if n > 0 {
		h.steps[j.ID] = n
		h.stepUsers[j.UserID] += n
	}
}

// StepExecBytes is what a step's argv, --multi-prog argv and environment
// hold (a finished step has shed all but its argv).
func StepExecBytes(sp *model.StepSpec) int64 {
	if sp == nil {
		return 0
	}
	var n int64
	for _, l := range append([][]string{sp.Argv, sp.Env}, sp.TaskArgv...) {
		for _, v := range l {
			n += int64(len(v))
		}
	}
	return n
}

// SpecBytes is what a spec's script, argv, environment and submit line
// hold.
func SpecBytes(sp *model.JobSpec) int64 {
	n := int64(len(sp.Script) + len(sp.SubmitLine))
	for _, l := range [][]string{sp.Argv, sp.Env} {
		for _, v := range l {
			n += int64(len(v))
		}
	}
	return n
}

// HeldBytes is what the jobs of uid in memory hold of scripts, argv,
// environments and submit lines (each distinct spec once).
func (s *Store) HeldBytes(uid uint32) int64 {
	s.held.mu.Lock()
	defer s.held.mu.Unlock()
	return s.held.users[uid]
}

// HeldStepBytes is what the steps of uid's jobs in memory hold of argv
// and environments.
func (s *Store) HeldStepBytes(uid uint32) int64 {
	s.held.mu.Lock()
	defer s.held.mu.Unlock()
	return s.held.stepUsers[uid]
}
