package fsm

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/state"
)

// A snapshot is a stream of JSON values: one header, then one record per
// spec and per job. Streaming keeps the controller's memory flat: encoding
// the whole state as one document needed a buffer as large as the state.
// Array tasks share one spec, written once under its SpecID before them.
type header struct {
	Version    int                `json:"version"`
	NextJobID  model.JobID        `json:"next_job_id"`
	Nodes      []*model.Node      `json:"nodes"`
	Partitions []*model.Partition `json:"partitions"`
	Tokens     []*model.JoinToken `json:"tokens,omitempty"`
	// The accounting outbox (absent in snapshots of older versions).
	AcctSeq uint64              `json:"acct_seq,omitempty"`
	Outbox  []state.OutboxEntry `json:"outbox,omitempty"`
	// The accounting configuration (sacctmgr) and its version.
	AcctDB    *model.AcctDB `json:"acct_db,omitempty"`
	AcctDBVer uint64        `json:"acct_db_version,omitempty"`
	// Usage is the fair-share usage (model of sshare's RawUsage).
	Usage   map[string]float64 `json:"usage,omitempty"`
	UsageAt int64              `json:"usage_at,omitempty"`
	Stats   state.JobStats     `json:"stats"`
	// Reservations (scontrol create reservation).
	Reservations []*model.Reservation `json:"reservations,omitempty"`
}

type record struct {
	SpecID model.JobID    `json:"spec_id,omitempty"`
	Spec   *model.JobSpec `json:"spec,omitempty"`
	Job    *model.Job     `json:"job,omitempty"`
}

const snapshotVersion = 2

// WriteSnapshot serialises an immutable snapshot; safe to run concurrently
// with Apply because snapshots never change.
func WriteSnapshot(snap *state.Snapshot, w io.Writer) error {
	bw := bufio.NewWriterSize(w, 256<<10)
	enc := json.NewEncoder(bw)
	h := &header{Version: snapshotVersion, NextJobID: snap.NextJobID,
		Nodes: snap.Nodes(), Partitions: snap.Partitions(), Tokens: snap.Tokens(), AcctSeq: snap.OutboxSeq()}
	snap.Outbox(0, func(e state.OutboxEntry) bool { h.Outbox = append(h.Outbox, e); return true })
	h.AcctDB, h.AcctDBVer = snap.AcctDB()
	h.Usage, h.UsageAt = snap.Usage()
	h.Stats = snap.Stats()
	h.Reservations = snap.Reservations()
	if err := enc.Encode(h); err != nil {
		return err
	}
	var err error
	written := map[model.JobID]bool{}
	snap.EachJob(func(j *model.Job) bool {
		if !written[j.SpecID] {
			written[j.SpecID] = true
			if err = enc.Encode(&record{SpecID: j.SpecID, Spec: j.Spec}); err != nil {
				return false
			}
		}
		err = enc.Encode(&record{Job: j})
		return err == nil
	})
	if err != nil {
		return err
	}
	return bw.Flush()
}

// Restore replaces the store's content with a snapshot.
func (f *FSM) Restore(r io.Reader, index uint64) error {
	dec := json.NewDecoder(bufio.NewReaderSize(r, 256<<10))
	var h header
	if err := dec.Decode(&h); err != nil {
		return fmt.Errorf("snapshot header: %w", err)
	}
	if h.Version != snapshotVersion {
		return fmt.Errorf("snapshot version %d, want %d", h.Version, snapshotVersion)
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
	specs := map[model.JobID]*model.JobSpec{}
	for {
		var rec record
		err := dec.Decode(&rec)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			txn.Abort()
			return fmt.Errorf("snapshot record: %w", err)
		}
		switch {
		case rec.Spec != nil:
			intern(rec.Spec)
			specs[rec.SpecID] = rec.Spec
		case rec.Job != nil:
			j := rec.Job
			if j.Spec = specs[j.SpecID]; j.Spec == nil {
				j.Spec = &model.JobSpec{}
			}
			txn.PutJob(j)
		}
	}
	for _, n := range h.Nodes {
		txn.PutNode(n)
	}
	txn.SetPartitions(h.Partitions)
	txn.SetNextJobID(h.NextJobID)
	for _, t := range old.Tokens() {
		txn.DeleteToken(t.ID)
	}
	for _, t := range h.Tokens {
		txn.PutToken(t)
	}
	txn.RestoreOutbox(h.AcctSeq, h.Outbox)
	txn.SetAcctDB(h.AcctDB, h.AcctDBVer)
	txn.SetUsage(h.Usage, h.UsageAt)
	txn.SetStats(h.Stats)
	for _, r := range old.Reservations() {
		txn.DeleteReservation(r.Name)
	}
	for _, r := range h.Reservations {
		txn.PutReservation(r)
	}
	txn.Commit(index)
	return nil
}
