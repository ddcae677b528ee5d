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
	// Ended: this is the end of a window (the controller's timer). The
	// reservation's running jobs end TIMEOUT (not under FLEX), as in
	// Slurm; when it is deleted (it does not recur) its pending jobs are
	// held with reason ReservationDeleted, or under
	// NO_HOLD_JOBS_AFTER_END let go of it. Resv, if set, is the next
	// window of a recurring reservation.
	Ended bool   `json:"ended,omitempty"`
	Name  string `json:"name,omitempty"` // the reservation that ended
}

// ReservationResult lists the running jobs whose nodes must now kill them.
type ReservationResult struct {
	Terminate []model.JobID
}

// ReasonResvDeleted is the pending reason of a job whose reservation
// ended and is gone.
const ReasonResvDeleted = "ReservationDeleted"

// Errors Apply returns for a refused Reservation command, in Slurm's words.
var (
	ErrResvDup     = errors.New(model.MsgResvDup)
	ErrResvOverlap = errors.New(model.MsgResvOverlap)
	ErrResvInvalid = errors.New(model.MsgResvInvalid)
)

func applyReservation(txn *state.Txn, c *Reservation) any {
	snap := txn.Snapshot()
	if c.Ended {
		return applyResvEnded(txn, c)
	}
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

func applyResvEnded(txn *state.Txn, c *Reservation) any {
	snap := txn.Snapshot()
	old := snap.Reservation(c.Name)
	if old == nil {
		return ErrResvInvalid
	}
	deleted := c.Resv == nil
	var res ReservationResult
	var jobs []*model.Job
	snap.EachActive(func(j *model.Job) bool {
		if j.Spec != nil && j.Spec.Reservation == c.Name {
			jobs = append(jobs, j)
		}
		return true
	})
	for _, j := range jobs {
		switch {
		case j.State == model.JobRunning && !j.Completing && old.Flags&model.ResvFlex == 0:
			j = j.Clone()
			j.Completing, j.EndState, j.Reason = true, model.JobTimeout, model.ReasonTimeLimit
			res.Terminate = append(res.Terminate, j.ID)
		case j.State == model.JobPending && deleted && old.Flags&model.ResvNoHoldJobsAfterEnd != 0:
			j = j.Clone()
			spec := *j.Spec
			spec.Reservation = ""
			j.Spec = &spec
		case j.State == model.JobPending && deleted:
			j = j.Clone()
			j.HoldAdmin, j.Priority, j.Reason = true, 0, ReasonResvDeleted
		default:
			continue
		}
		txn.PutJob(j)
	}
	if deleted {
		txn.DeleteReservation(c.Name)
	} else if model.ResvConflict(snap.Reservations(), c.Resv) == nil {
		txn.PutReservation(c.Resv)
	} else {
		// The next window would overlap a reservation made meanwhile:
		// the recurring one ends here rather than double-book nodes.
		txn.DeleteReservation(c.Name)
	}
	return res
}

// resvPermits is the plan check Apply makes for reservations, as
// allocFits is for resources: a reservation committed after the plan was
// made must not find a job of the plan started on its nodes. A job in a
// reservation needs it active and (unless FLEX) its nodes; any job needs
// its alloc free of other reservations over [now, now+limit).
func resvPermits(snap *state.Snapshot, j *model.Job, alloc []model.NodeAlloc, now int64) bool {
	own := ""
	if j.Spec != nil {
		own = j.Spec.Reservation
	}
	if own == "" && snap.NumReservations() == 0 {
		return true
	}
	// The job's limit as the scheduler reads it (sched.jobLimit): its
	// own, else the partition's DefaultTime, else MaxTime.
	limit := j.TimeLimit
	if p := snap.Partition(j.Partition); limit <= 0 && limit != model.Unlimited && p != nil {
		if limit = p.DefaultTime; limit <= 0 && limit != model.Unlimited {
			limit = p.MaxTime
		}
	}
	end := int64(1 << 62)
	if limit > 0 {
		end = now + limit
	}
	var mine *model.Reservation
	if own != "" {
		mine = snap.Reservation(own)
		if mine == nil || !mine.Active(now) {
			return false
		}
		for _, a := range alloc {
			if mine.Flags&model.ResvFlex == 0 && !mine.HasNode(a.Node) {
				return false
			}
		}
	}
	for _, r := range snap.Reservations() {
		if r.Name == own || !r.Overlaps(now, end) || (mine != nil && mine.Shadows(r)) {
			continue
		}
		for _, a := range alloc {
			if r.HasNode(a.Node) {
				return false
			}
		}
	}
	return true
}
