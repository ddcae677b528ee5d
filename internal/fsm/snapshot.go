package fsm

import (
	"encoding/json"
	"io"

	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/state"
)

// image is the persisted form of the whole state. Array tasks share one
// spec, stored once under its SpecID.
type image struct {
	NextJobID  model.JobID                    `json:"next_job_id"`
	Specs      map[model.JobID]*model.JobSpec `json:"specs"`
	Jobs       []*model.Job                   `json:"jobs"`
	Nodes      []*model.Node                  `json:"nodes"`
	Partitions []*model.Partition             `json:"partitions"`
}

// WriteSnapshot serialises an immutable snapshot; safe to run concurrently
// with Apply because snapshots never change.
func WriteSnapshot(snap *state.Snapshot, w io.Writer) error {
	img := image{NextJobID: snap.NextJobID, Specs: map[model.JobID]*model.JobSpec{},
		Nodes: snap.Nodes(), Partitions: snap.Partitions()}
	snap.EachJob(func(j *model.Job) bool {
		img.Jobs = append(img.Jobs, j)
		if _, ok := img.Specs[j.SpecID]; !ok {
			img.Specs[j.SpecID] = j.Spec
		}
		return true
	})
	return json.NewEncoder(w).Encode(&img)
}

// Restore replaces the store's content with a snapshot image.
func (f *FSM) Restore(r io.Reader, index uint64) error {
	var img image
	if err := json.NewDecoder(r).Decode(&img); err != nil {
		return err
	}
	txn := f.store.Begin()
	old := txn.Snapshot()
	var ids []model.JobID
	old.EachJob(func(j *model.Job) bool { ids = append(ids, j.ID); return true })
	for _, id := range ids {
		txn.DeleteJob(id)
	}
	for _, n := range old.Nodes() {
		txn.DeleteNode(n.Name)
	}
	for _, j := range img.Jobs {
		j.Spec = img.Specs[j.SpecID]
		if j.Spec == nil {
			j.Spec = &model.JobSpec{}
		}
		txn.PutJob(j)
	}
	for _, n := range img.Nodes {
		txn.PutNode(n)
	}
	txn.SetPartitions(img.Partitions)
	txn.SetNextJobID(img.NextJobID)
	txn.Commit(index)
	return nil
}
