package fsm

import (
	"errors"

	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/state"
)

// Reservation creates (Create), replaces or deletes (Delete) one advance
// reservation. The service validated it against a snapshot; the checks
// that two racing commands could both pass (a duplicate name, an overlap
// without OVERLAP) are made again here, where the order is final.
type Reservation struct {
	Resv   *model.Reservation `json:"resv,omitempty"`
	Create bool               `json:"create,omitempty"`
	Delete string             `json:"delete,omitempty"`
}

// Errors Apply returns for a refused Reservation command, in Slurm's words.
var (
	ErrResvDup     = errors.New(model.MsgResvDup)
	ErrResvOverlap = errors.New(model.MsgResvOverlap)
	ErrResvInvalid = errors.New(model.MsgResvInvalid)
)

func applyReservation(txn *state.Txn, c *Reservation) any {
	snap := txn.Snapshot()
	if c.Delete != "" {
		if snap.Reservation(c.Delete) == nil {
			return ErrResvInvalid
		}
		txn.DeleteReservation(c.Delete)
		return nil
	}
	r := c.Resv
	if r == nil || r.Name == "" {
		return ErrResvInvalid
	}
	exists := snap.Reservation(r.Name) != nil
	switch {
	case c.Create && exists:
		return ErrResvDup
	case !c.Create && !exists:
		return ErrResvInvalid
	}
	if model.ResvConflict(snap.Reservations(), r) != nil {
		return ErrResvOverlap
	}
	txn.PutReservation(r)
	return nil
}
