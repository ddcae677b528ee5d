package service

import (
	"slices"
	"strings"
	"testing"

	"github.com/drover-hpc/drover/internal/model"
)

func TestReservationCommand(t *testing.T) {
	svc, _, _ := setup(t)
	now := int64(1000)
	create := func(mod func(r *model.ResvRequest)) (string, error) {
		r := &model.ResvRequest{Op: "create", Start: now, HasStart: true, Duration: 3600, HasDuration: true,
			Users: []string{"root"}, HasUsers: true}
		mod(r)
		return svc.ReservationCommand(as(0), r)
	}
	if _, err := svc.ReservationCommand(as(4242), &model.ResvRequest{Op: "create"}); err == nil || err.Error() != "Access/permission denied" {
		t.Errorf("non-admin: %v", err)
	}
	// NodeCnt picks free nodes in order; a third has none left.
	name, err := create(func(r *model.ResvRequest) { r.NodeCnt, r.HasNodeCnt = 1, true })
	if err != nil || name != "root_1" || !slices.Equal(svc.store.Snapshot().Reservation(name).Nodes, []string{"n1"}) {
		t.Fatalf("NodeCnt=1: %q %v", name, err)
	}
	if _, err := create(func(r *model.ResvRequest) { r.Name, r.NodeCnt, r.HasNodeCnt = "b", 1, true }); err != nil ||
		!slices.Equal(svc.store.Snapshot().Reservation("b").Nodes, []string{"n2"}) {
		t.Fatalf("second NodeCnt=1: %v", err)
	}
	bad := []struct {
		what string
		mod  func(r *model.ResvRequest)
		want string
	}{
		{"no node left", func(r *model.ResvRequest) { r.Name, r.NodeCnt, r.HasNodeCnt = "c", 1, true }, model.MsgNodesBusy},
		{"overlap", func(r *model.ResvRequest) { r.Name, r.Nodes, r.HasNodes = "c", "n1", true }, model.MsgResvOverlap},
		{"duplicate", func(r *model.ResvRequest) { r.Name, r.Nodes, r.HasNodes = "b", "n1", true }, model.MsgResvDup},
		{"unknown node", func(r *model.ResvRequest) { r.Name, r.Nodes, r.HasNodes = "c", "n9", true }, model.MsgInvalidNodeName},
		{"past start", func(r *model.ResvRequest) { r.Name, r.Nodes, r.HasNodes, r.Start = "c", "n1", true, now-601 }, model.MsgInvalidTime},
		{"no users", func(r *model.ResvRequest) { r.Name, r.Nodes, r.HasNodes, r.Users = "c", "n1", true, nil }, model.MsgResvEmpty},
		{"long name", func(r *model.ResvRequest) { r.Name, r.Nodes, r.HasNodes = strings.Repeat("x", 1025), "n1", true }, msgTooLong},
		{"bad partition", func(r *model.ResvRequest) { r.Name, r.Partition, r.HasPartition = "c", "nope", true }, "Invalid partition name specified"},
	}
	for _, tc := range bad {
		if _, err := create(tc.mod); err == nil || err.Error() != tc.want {
			t.Errorf("%s: %v, want %q", tc.what, err, tc.want)
		}
	}
	// After both windows a new one fits; OVERLAP may share nodes.
	if _, err := create(func(r *model.ResvRequest) { r.Name, r.Start, r.Nodes, r.HasNodes = "later", now+3600, "n[1-2]", true }); err != nil {
		t.Errorf("after the windows: %v", err)
	}
	if _, err := create(func(r *model.ResvRequest) {
		r.Name, r.Nodes, r.HasNodes, r.Flags, r.HasFlags = "ov", "ALL", true, model.ResvOverlap, true
	}); err != nil {
		t.Errorf("OVERLAP: %v", err)
	} else if r := svc.store.Snapshot().Reservation("ov"); r.CPUs != 8 || r.Flags&model.ResvAllNodes == 0 {
		t.Errorf("Nodes=ALL: %+v", r)
	}
	if _, err := svc.ReservationCommand(as(0), &model.ResvRequest{Op: "delete", Name: "ov"}); err != nil {
		t.Fatal(err)
	}

	// Update: Users+=, Users-=, a new length.
	upd := &model.ResvRequest{Op: "update", Name: "b", Users: []string{"alice"}, HasUsers: true, UsersOp: '+', Duration: 60, HasDuration: true}
	if _, err := svc.ReservationCommand(as(0), upd); err != nil {
		t.Fatal(err)
	}
	if r := svc.store.Snapshot().Reservation("b"); !slices.Equal(r.Users, []string{"root", "alice"}) || r.End != now+60 {
		t.Errorf("after update: %+v", r)
	}
	upd = &model.ResvRequest{Op: "update", Name: "b", Users: []string{"root"}, HasUsers: true, UsersOp: '-'}
	if _, err := svc.ReservationCommand(as(0), upd); err != nil || !slices.Equal(svc.store.Snapshot().Reservation("b").Users, []string{"alice"}) {
		t.Errorf("Users-=root: %v", err)
	}
	if _, err := svc.ReservationCommand(as(0), &model.ResvRequest{Op: "update", Name: "nope"}); err == nil || err.Error() != model.MsgResvInvalid {
		t.Errorf("update unknown: %v", err)
	}

	// --reservation: access, existence; delete refused while a job uses it.
	s := spec()
	s.Reservation = "root_1"
	if _, err := svc.SubmitJob(as(4242), s); err == nil || err.Error() != model.MsgResvAccess {
		t.Errorf("submit by a user not in it: %v", err)
	}
	s = spec()
	s.Reservation = "nope"
	if _, err := svc.SubmitJob(as(0), s); err == nil || err.Error() != model.MsgResvInvalid {
		t.Errorf("submit to an unknown reservation: %v", err)
	}
	s = spec()
	s.Reservation = "root_1"
	if _, err := svc.SubmitJob(as(0), s); err != nil {
		t.Fatalf("submit in the reservation: %v", err)
	}
	if _, err := svc.ReservationCommand(as(0), &model.ResvRequest{Op: "delete", Name: "root_1"}); err == nil || err.Error() != model.MsgResvBusy {
		t.Errorf("delete in use: %v", err)
	}
	if _, err := svc.ReservationCommand(as(0), &model.ResvRequest{Op: "delete", Name: "later"}); err != nil || svc.store.Snapshot().Reservation("later") != nil {
		t.Errorf("delete: %v", err)
	}
}
