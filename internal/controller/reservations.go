package controller

import (
	"time"

	"github.com/drover-hpc/drover/internal/fsm"
	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/state"
)

// Reservation transitions. A window's start needs no commit: the
// scheduler reads the reservations with the clock on every pass (at least
// once a second) and lets the reservation's jobs start. Its end does: the
// housekeeping loop commits it (fsm.Reservation Ended) once the clock
// passes End, which times out the jobs still running in it, moves a
// recurring window on, or deletes the reservation and holds its pending
// jobs. PURGE_COMP reservations go once their jobs are done.

// reservationTick commits the reservation transitions due at now.
func (c *Controller) reservationTick(now time.Time) {
	snap := c.store.Snapshot()
	t := now.Unix()
	for _, r := range snap.Reservations() {
		var cmd *fsm.Reservation
		switch {
		case r.End <= t:
			cmd = &fsm.Reservation{Ended: true, Name: r.Name}
			if start, end, ok := r.NextWindow(t, time.Local); ok {
				next := r.Clone()
				next.Start, next.End = start, end
				cmd.Resv = next
			}
		case r.Flags&model.ResvPurgeComp != 0 && purgeable(snap, r, t):
			cmd = &fsm.Reservation{Delete: r.Name}
		default:
			continue
		}
		res, err := c.raft.Apply(fsm.TypeReservation, cmd)
		if err != nil {
			c.log.Error("commit reservation end", "reservation", r.Name, "err", err)
			continue
		}
		if rr, ok := res.(fsm.ReservationResult); ok && len(rr.Terminate) > 0 {
			// The FSM marked them TIMEOUT; the agents only need to stop them.
			c.Terminate(rr.Terminate, "")
		}
		c.log.Info("reservation window ended", "reservation", r.Name, "next", cmd.Resv != nil, "purged", cmd.Delete != "")
		c.Kick()
	}
}

// purgeable reports whether a PURGE_COMP reservation has had jobs, has
// none left, and its last one ended at least PurgeComp seconds ago.
func purgeable(snap *state.Snapshot, r *model.Reservation, now int64) bool {
	if !r.Active(now) {
		return false
	}
	delay := r.PurgeComp
	if delay <= 0 {
		delay = model.DefaultPurgeComp
	}
	last, active := int64(0), false
	snap.EachJob(func(j *model.Job) bool {
		if j.Spec == nil || j.Spec.Reservation != r.Name {
			return true
		}
		if !j.Finished() {
			active = true
			return false
		}
		last = max(last, j.EndTime)
		return true
	})
	return !active && last > 0 && last >= r.Start && now-last >= delay
}
