package fsm

import (
	"bytes"
	"errors"
	"reflect"
	"testing"

	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/state"
)

func maintResv() *model.Reservation {
	return &model.Reservation{Name: "maint", Start: 100, End: 200, Flags: model.ResvMaint | model.ResvSpecNodes,
		Nodes: []string{"n1"}, CoreCnt: 4, CPUs: 4, Users: []string{"root"}}
}

func TestReservationCreateRefusesDuplicateAndOverlap(t *testing.T) {
	h := newHarness(t)
	first := maintResv()
	first.Flags = model.ResvSpecNodes
	h.apply(TypeReservation, &Reservation{Resv: first, Create: true})
	data, _ := Encode(TypeReservation, &Reservation{Resv: maintResv(), Create: true})
	if res := h.f.Apply(99, data); !errors.Is(res.(error), ErrResvDup) {
		t.Errorf("duplicate name: %v", res)
	}
	other := maintResv()
	other.Name, other.Flags = "other", 0
	data, _ = Encode(TypeReservation, &Reservation{Resv: other, Create: true})
	if res := h.f.Apply(100, data); !errors.Is(res.(error), ErrResvOverlap) {
		t.Errorf("overlap: %v", res)
	}
	other.Flags |= model.ResvOverlap
	h.apply(TypeReservation, &Reservation{Resv: other, Create: true})
	if n := len(h.snap().Reservations()); n != 2 {
		t.Errorf("%d reservations, want 2", n)
	}
	h.apply(TypeReservation, &Reservation{Delete: "other"})
	if h.snap().Reservation("other") != nil {
		t.Error("delete left the reservation")
	}
}

// Reservations are in the snapshot: a restored replica has them as they were.
func TestReservationSnapshotRestore(t *testing.T) {
	h := newHarness(t)
	r := maintResv()
	r.Accounts, r.AccountsNot, r.GPUs, r.Partition = []string{"bob"}, true, 2, "p"
	h.apply(TypeReservation, &Reservation{Resv: r, Create: true})
	var buf bytes.Buffer
	if err := WriteSnapshot(h.snap(), &buf); err != nil {
		t.Fatal(err)
	}
	g := New(state.New(1), nil)
	g.Store().Begin().Commit(1) // a store with state to replace
	if err := g.Restore(&buf, 7); err != nil {
		t.Fatal(err)
	}
	if got := g.Store().Snapshot().Reservation("maint"); !reflect.DeepEqual(got, r) {
		t.Errorf("restored %+v, want %+v", got, r)
	}
}

// At a window's end running jobs in it time out, pending ones are held
// (ReservationDeleted) and the reservation goes; a recurring one moves on
// and keeps its pending jobs waiting.
func TestReservationEnded(t *testing.T) {
	for _, recur := range []bool{false, true} {
		h := newHarness(t)
		h.apply(TypeReservation, &Reservation{Resv: maintResv(), Create: true})
		in := spec()
		in.Reservation = "maint"
		run := h.apply(TypeSubmit, &Submit{Spec: in, Partition: "p", Now: 100}).(SubmitResult).JobID
		wait := h.apply(TypeSubmit, &Submit{Spec: in, Partition: "p", Now: 100}).(SubmitResult).JobID
		outside := h.apply(TypeSubmit, &Submit{Spec: spec(), Partition: "p", Now: 100}).(SubmitResult).JobID
		h.apply(TypeSchedule, &Schedule{Now: 110, Starts: []StartEntry{
			{Job: run, Alloc: []model.NodeAlloc{{Node: "n1", CPUs: 4, Mem: 100}}},
			{Job: outside, Alloc: []model.NodeAlloc{{Node: "n2", CPUs: 1, Mem: 100}}},
		}})
		cmd := &Reservation{Ended: true, Name: "maint"}
		if recur {
			next := maintResv()
			next.Start, next.End = 100+86400, 200+86400
			cmd.Resv = next
		}
		res := h.apply(TypeReservation, cmd).(ReservationResult)
		if !reflect.DeepEqual(res.Terminate, []model.JobID{run}) {
			t.Errorf("recur=%v: terminate %v, want [%d]", recur, res.Terminate, run)
		}
		s := h.snap()
		if j := s.Job(run); !j.Completing || j.EndState != model.JobTimeout {
			t.Errorf("recur=%v: running job completing=%v end=%v", recur, j.Completing, j.EndState)
		}
		if j := s.Job(outside); j.Completing {
			t.Errorf("recur=%v: a job outside the reservation was ended", recur)
		}
		w := s.Job(wait)
		if recur {
			if w.HoldAdmin || s.Reservation("maint") == nil || s.Reservation("maint").Start != 100+86400 {
				t.Errorf("recurring: held=%v resv=%+v", w.HoldAdmin, s.Reservation("maint"))
			}
		} else if !w.HoldAdmin || w.Reason != ReasonResvDeleted || s.Reservation("maint") != nil {
			t.Errorf("ended: held=%v reason=%q resv=%v", w.HoldAdmin, w.Reason, s.Reservation("maint"))
		}
	}
}

// A plan made before a reservation was committed cannot start a job on
// its nodes: Apply re-checks starts against the reservations.
func TestScheduleRespectsReservations(t *testing.T) {
	h := newHarness(t)
	h.apply(TypeReservation, &Reservation{Resv: maintResv(), Create: true})
	out := h.apply(TypeSubmit, &Submit{Spec: spec(), Partition: "p", Now: 100}).(SubmitResult).JobID
	in := spec()
	in.Reservation = "maint"
	inside := h.apply(TypeSubmit, &Submit{Spec: in, Partition: "p", Now: 100}).(SubmitResult).JobID
	res := h.apply(TypeSchedule, &Schedule{Now: 110, Starts: []StartEntry{
		{Job: out, Alloc: []model.NodeAlloc{{Node: "n1", CPUs: 1, Mem: 100}}},
		{Job: inside, Alloc: []model.NodeAlloc{{Node: "n2", CPUs: 1, Mem: 100}}},
	}}).(ScheduleResult)
	if len(res.Started) != 0 {
		t.Errorf("started %v on nodes their reservations forbid", res.Started)
	}
	res = h.apply(TypeSchedule, &Schedule{Now: 110, Starts: []StartEntry{
		{Job: out, Alloc: []model.NodeAlloc{{Node: "n2", CPUs: 1, Mem: 100}}},
		{Job: inside, Alloc: []model.NodeAlloc{{Node: "n1", CPUs: 1, Mem: 100}}},
	}}).(ScheduleResult)
	if len(res.Started) != 2 {
		t.Errorf("started %v, want both", res.Started)
	}
}

// A job of a MAINT reservation may run on nodes another reservation
// holds (Slurm: MAINT reservations' jobs ignore the others); a job of a
// plain one may not.
func TestScheduleMaintJobIgnoresOtherReservations(t *testing.T) {
	h := newHarness(t)
	h.apply(TypeReservation, &Reservation{Resv: maintResv(), Create: true})
	lab := &model.Reservation{Name: "lab", Start: 0, End: 5000, Nodes: []string{"n2"}, Users: []string{"alice"}}
	h.apply(TypeReservation, &Reservation{Resv: lab, Create: true})
	m := spec()
	m.Reservation, m.ReqNodes = "maint", nil
	admin := h.apply(TypeSubmit, &Submit{Spec: m, Partition: "p", Now: 100}).(SubmitResult).JobID
	res := h.apply(TypeSchedule, &Schedule{Now: 110, Starts: []StartEntry{
		{Job: admin, Alloc: []model.NodeAlloc{{Node: "n2", CPUs: 1, Mem: 100}}},
	}}).(ScheduleResult)
	if len(res.Started) != 0 {
		t.Fatalf("started %v outside its reservation's nodes", res.Started)
	}
	// maint holds n1 only: widen it to n2, which lab holds too.
	wide := maintResv()
	wide.Nodes = []string{"n1", "n2"}
	h.apply(TypeReservation, &Reservation{Resv: wide})
	res = h.apply(TypeSchedule, &Schedule{Now: 110, Starts: []StartEntry{
		{Job: admin, Alloc: []model.NodeAlloc{{Node: "n2", CPUs: 1, Mem: 100}}},
	}}).(ScheduleResult)
	if len(res.Started) != 1 {
		t.Errorf("the MAINT reservation's job was kept off lab's node: started %v", res.Started)
	}
}
