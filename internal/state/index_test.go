package state

import (
	"math/rand"
	"slices"
	"testing"

	"github.com/drover-hpc/drover/internal/model"
)

func ids(each func(func(*model.Job) bool)) []model.JobID {
	var out []model.JobID
	each(func(j *model.Job) bool { out = append(out, j.ID); return true })
	return out
}

// The scheduling indexes and the finished one (the purge's) follow every
// change of state, hold and allocation, and restore-style deletes.
func TestQueuedAllocatedIndexes(t *testing.T) {
	s := New(1)
	put := func(j *model.Job) {
		txn := s.Begin()
		txn.PutJob(j)
		txn.Commit(uint64(j.ID))
	}
	put(&model.Job{ID: 1, State: model.JobPending})
	put(&model.Job{ID: 2, State: model.JobPending, HoldUser: true})
	put(&model.Job{ID: 3, State: model.JobPending, HoldAdmin: true})
	put(&model.Job{ID: 4, State: model.JobRunning, Alloc: []model.NodeAlloc{{Node: "n1"}}})
	check := func(when string, queued, allocated []model.JobID, finished ...model.JobID) {
		t.Helper()
		snap := s.Snapshot()
		if got := ids(snap.EachFinished); !slices.Equal(got, finished) || snap.NumFinished() != len(finished) {
			t.Fatalf("%s: finished %v (%d), want %v", when, got, snap.NumFinished(), finished)
		}
		if got := ids(snap.EachQueued); !slices.Equal(got, queued) {
			t.Fatalf("%s: queued %v, want %v", when, got, queued)
		}
		if snap.NumQueued() != len(queued) {
			t.Fatalf("%s: NumQueued %d, want %d", when, snap.NumQueued(), len(queued))
		}
		if got := ids(snap.EachAllocated); !slices.Equal(got, allocated) {
			t.Fatalf("%s: allocated %v, want %v", when, got, allocated)
		}
	}
	check("submitted", []model.JobID{1}, []model.JobID{4})
	put(&model.Job{ID: 2, State: model.JobPending}) // released
	check("released", []model.JobID{1, 2}, []model.JobID{4})
	put(&model.Job{ID: 1, State: model.JobRunning, Alloc: []model.NodeAlloc{{Node: "n1"}}})
	check("started", []model.JobID{2}, []model.JobID{1, 4})
	put(&model.Job{ID: 4, State: model.JobCompleted, Completing: true, Alloc: []model.NodeAlloc{{Node: "n1"}}})
	check("completing", []model.JobID{2}, []model.JobID{1, 4})
	put(&model.Job{ID: 4, State: model.JobCompleted, Alloc: []model.NodeAlloc{{Node: "n1"}}})
	check("finished", []model.JobID{2}, []model.JobID{1}, 4)
	put(&model.Job{ID: 1, State: model.JobCancelled})
	check("cancelled", []model.JobID{2}, nil, 1, 4)
	txn := s.Begin()
	txn.DeleteJob(2)
	txn.DeleteJob(4)
	txn.Commit(99)
	check("deleted", nil, nil, 1)
}

// A snapshot's NodeSet stays while only jobs change and moves with any
// node's change.
func TestNodeSet(t *testing.T) {
	s := New(1)
	txn := s.Begin()
	txn.PutNode(&model.Node{Name: "n1", CPUs: 4})
	txn.Commit(1)
	before := s.Snapshot().NodeSet()
	txn = s.Begin()
	txn.PutJob(&model.Job{ID: 1, State: model.JobPending})
	txn.Commit(2)
	if s.Snapshot().NodeSet() != before {
		t.Error("a job's submission changed the NodeSet")
	}
	txn = s.Begin()
	txn.PutNode(&model.Node{Name: "n1", CPUs: 8})
	txn.Commit(3)
	if s.Snapshot().NodeSet() == before {
		t.Error("a node's change left the NodeSet as it was")
	}
}

// The index walks (each) step through the job map beside the index: the
// jobs they give are the map's, for indexes that are runs, scattered ids
// and everything between.
func TestIndexWalksMatchLookups(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for round := range 50 {
		s := New(1)
		txn := s.Begin()
		id := model.JobID(0)
		for range rng.Intn(3000) {
			id += model.JobID(1 + rng.Intn([]int{1, 2, 30}[round%3]))
			j := &model.Job{ID: id, State: model.JobCompleted}
			switch rng.Intn([]int{2, 5, 50}[rng.Intn(3)]) {
			case 0:
				j.State = model.JobPending
			case 1:
				j.State, j.Alloc = model.JobRunning, []model.NodeAlloc{{Node: "n1"}}
			}
			txn.PutJob(j)
		}
		txn.Commit(1)
		snap := s.Snapshot()
		var queued, allocated, finished []model.JobID
		snap.EachJob(func(j *model.Job) bool {
			switch j.State {
			case model.JobPending:
				queued = append(queued, j.ID)
			case model.JobRunning:
				allocated = append(allocated, j.ID)
			default:
				finished = append(finished, j.ID)
			}
			return true
		})
		// A restore builds the same indexes in bulk.
		loaded := New(1)
		ltxn := loaded.Begin()
		l := ltxn.LoadJobs()
		snap.EachJob(func(j *model.Job) bool { l.Put(j); return true })
		l.Done()
		ltxn.Commit(1)
		lsnap := loaded.Snapshot()
		for _, c := range []struct {
			each func(func(*model.Job) bool)
			want []model.JobID
		}{{snap.EachQueued, queued}, {snap.EachAllocated, allocated}, {snap.EachFinished, finished},
			{lsnap.EachQueued, queued}, {lsnap.EachAllocated, allocated}, {lsnap.EachFinished, finished}} {
			var got []model.JobID
			c.each(func(j *model.Job) bool {
				if j == nil || (j != snap.Job(j.ID) && j != lsnap.Job(j.ID)) {
					t.Fatalf("round %d: walk gave %v, not the map's job", round, j)
				}
				got = append(got, j.ID)
				return true
			})
			if !slices.Equal(got, c.want) {
				t.Fatalf("round %d: walk gave %d ids, want %d", round, len(got), len(c.want))
			}
		}
	}
}
