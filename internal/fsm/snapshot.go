package fsm

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unique"

	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/state"
)

// A snapshot is a stream of JSON values: one header, then one record per
// spec and per job. Streaming keeps the controller's memory flat: encoding
// the whole state as one document needed a buffer as large as the state.
// Jobs that share a spec share one spec record (see record).
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

// A snapshot opens with the header as one JSON value. In version 4 (see
// jobcodec.go) the jobs follow in binary: spec records numbered in stream
// order (1, 2, ...), and each job names its spec by that number, so that
// every job sharing a spec — the tasks of an array, and separate jobs
// submitted alike (see shareSpec) — shares one record: 100,000 jobs from
// one shell are one spec and 100,000 short job records, not 100,000
// copies of the environment (291 MiB of JSON and 15 s to restore in
// version 2). Versions 2 (specs keyed by SpecID) and 3 (the numbered
// records as JSON) still restore, as JSON records.
type record struct {
	SpecID  model.JobID    `json:"spec_id,omitempty"` // version 2
	Spec    *model.JobSpec `json:"spec,omitempty"`
	Job     *model.Job     `json:"job,omitempty"`
	SpecRef uint32         `json:"spec_ref,omitempty"` // version 3: the job's spec record
}

const snapshotVersion = 4

// WriteSnapshot serialises an immutable snapshot; safe to run concurrently
// with Apply because snapshots never change.
func WriteSnapshot(snap *state.Snapshot, w io.Writer) error {
	bw := bufio.NewWriterSize(w, 256<<10)
	h := &header{Version: snapshotVersion, NextJobID: snap.NextJobID,
		Nodes: snap.Nodes(), Partitions: snap.Partitions(), Tokens: snap.Tokens(), AcctSeq: snap.OutboxSeq()}
	snap.Outbox(0, func(e state.OutboxEntry) bool { h.Outbox = append(h.Outbox, e); return true })
	h.AcctDB, h.AcctDBVer = snap.AcctDB()
	h.Usage, h.UsageAt = snap.Usage()
	h.Stats = snap.Stats()
	h.Reservations = snap.Reservations()
	if err := json.NewEncoder(bw).Encode(h); err != nil {
		return err
	}
	jw, err := newJobWriter(bw)
	if err != nil {
		return err
	}
	written := map[*model.JobSpec]uint32{}
	snap.EachJob(func(j *model.Job) bool {
		ref, ok := written[j.Spec]
		if !ok {
			ref = uint32(len(written) + 1)
			written[j.Spec] = ref
			sp := j.Spec
			if sp == nil {
				sp = &model.JobSpec{}
			}
			if err = jw.spec(sp); err != nil {
				return false
			}
		}
		err = jw.job(j, ref)
		return err == nil
	})
	if err != nil {
		return err
	}
	if err := jw.end(); err != nil {
		return err
	}
	return bw.Flush()
}

// Restore replaces the store's content with a snapshot.
func (f *FSM) Restore(r io.Reader, index uint64) error {
	br := bufio.NewReaderSize(r, 256<<10)
	dec := json.NewDecoder(br)
	var h header
	if err := dec.Decode(&h); err != nil {
		return fmt.Errorf("snapshot header: %w", err)
	}
	var next func() (*model.JobSpec, *model.Job, uint32, model.JobID, error)
	switch h.Version {
	case 2, 3:
		next = func() (*model.JobSpec, *model.Job, uint32, model.JobID, error) {
			var rec record
			err := dec.Decode(&rec)
			return rec.Spec, rec.Job, rec.SpecRef, rec.SpecID, err
		}
	case 4:
		// The decoder read ahead of the header: go on from what it holds,
		// after the newline the encoder ends the header with.
		rest := bufio.NewReaderSize(io.MultiReader(dec.Buffered(), br), 256<<10)
		if c, err := rest.ReadByte(); err != nil || c != '\n' {
			return fmt.Errorf("snapshot: no newline after the header (%q, %v)", c, err)
		}
		jr, err := newJobReader(rest)
		if err != nil {
			return fmt.Errorf("snapshot: %w", err)
		}
		next = func() (*model.JobSpec, *model.Job, uint32, model.JobID, error) {
			sp, j, ref, err := jr.next()
			return sp, j, ref, 0, err
		}
	default:
		return fmt.Errorf("snapshot version %d, want 2 to %d", h.Version, snapshotVersion)
	}
	txn := f.store.Begin()
	old := txn.Snapshot()
	jobs := txn.LoadJobs()
	for _, n := range old.Nodes() {
		txn.DeleteNode(n.Name)
	}
	specs := map[model.JobID]*model.JobSpec{} // version 2, by SpecID
	var refs []*model.JobSpec                 // later versions, in stream order
	for {
		sp, j, ref, specID, err := next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			txn.Abort()
			return fmt.Errorf("snapshot record: %w", err)
		}
		switch {
		case sp != nil:
			sp = shareSpec(sp)
			refs = append(refs, sp)
			specs[specID] = sp
		case j != nil:
			if h.Version == 2 {
				j.Spec = specs[j.SpecID]
			} else if n := int(ref); n > 0 && n <= len(refs) {
				j.Spec = refs[n-1]
			}
			if j.Spec == nil {
				j.Spec = &model.JobSpec{}
			}
			internJob(j)
			jobs.Put(j)
		}
	}
	jobs.Done()
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

// internJob shares the strings every job of a queue repeats.
func internJob(j *model.Job) {
	j.Name = unique.Make(j.Name).Value()
	j.UserName = unique.Make(j.UserName).Value()
	j.Partition = unique.Make(j.Partition).Value()
	j.Reason = unique.Make(j.Reason).Value()
}
