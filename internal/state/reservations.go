package state

import (
	"slices"
	"strings"

	"github.com/drover-hpc/drover/internal/model"
)

// Reservations live in a small map replaced on each change (a cluster has
// a handful): readers of an older snapshot keep the map they saw.

// Reservation returns a reservation by name, or nil.
func (s *Snapshot) Reservation(name string) *model.Reservation { return s.resvs[name] }

// Reservations lists the reservations by start time, then name (the order
// scontrol show reservation prints them in).
func (s *Snapshot) Reservations() []*model.Reservation {
	out := make([]*model.Reservation, 0, len(s.resvs))
	for _, r := range s.resvs {
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b *model.Reservation) int {
		if a.Start != b.Start {
			if a.Start < b.Start {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out
}

// PutReservation adds or replaces a reservation.
func (t *Txn) PutReservation(r *model.Reservation) {
	m := make(map[string]*model.Reservation, len(t.snap.resvs)+1)
	for k, v := range t.snap.resvs {
		m[k] = v
	}
	m[r.Name] = r
	t.snap.resvs = m
}

// DeleteReservation removes a reservation.
func (t *Txn) DeleteReservation(name string) {
	if _, ok := t.snap.resvs[name]; !ok {
		return
	}
	m := make(map[string]*model.Reservation, len(t.snap.resvs))
	for k, v := range t.snap.resvs {
		if k != name {
			m[k] = v
		}
	}
	t.snap.resvs = m
}
