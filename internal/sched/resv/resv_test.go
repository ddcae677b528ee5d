package resv

import (
	"slices"
	"testing"

	"github.com/drover-hpc/drover/internal/model"
)

func TestVerdict(t *testing.T) {
	list := []*model.Reservation{
		{Name: "maint", Start: 100, End: 200, Flags: model.ResvMaint, Nodes: []string{"n1"}},
		{Name: "lab", Start: 50, End: 150, Nodes: []string{"n2", "n3"}},
		{Name: "flex", Start: 0, End: 1000, Flags: model.ResvFlex, Nodes: []string{"n4"}},
		{Name: "later", Start: 500, End: 600, Nodes: []string{"n5"}},
	}
	s := New(list, 60)
	tests := []struct {
		own   string
		end   int64
		wait  string
		only  []string
		deny  []string
		maint bool
	}{
		// A short job outside any reservation avoids only what is active
		// before it ends.
		{"", 90, "", nil, []string{"n2", "n3", "n4"}, false},
		{"", 120, "", nil, []string{"n1", "n2", "n3", "n4"}, true},
		{"", Never, "", nil, []string{"n1", "n2", "n3", "n4", "n5"}, true},
		{"lab", 90, "", []string{"n2", "n3"}, []string{"n4"}, false},
		{"flex", 90, "", nil, []string{"n2", "n3"}, false},
		{"later", 90, model.ReasonReservation, nil, nil, false},
		{"gone", 90, model.ReasonReservation, nil, nil, false},
	}
	for _, tt := range tests {
		v := s.For(tt.own, tt.end)
		if v.Wait != tt.wait || !slices.Equal(v.Only, tt.only) || !slices.Equal(v.Deny, tt.deny) || v.Maint != tt.maint {
			t.Errorf("For(%q, %d) = %+v", tt.own, tt.end, v)
		}
	}
	if !s.Allowed("", "n5", 60, 400) || s.Allowed("", "n5", 60, 501) || s.Allowed("lab", "n1", 60, 90) ||
		!s.Allowed("lab", "n2", 60, 1000) || s.Allowed("later", "n5", 60, 90) || !s.Allowed("flex", "n9", 60, 90) {
		t.Error("Allowed disagrees with the rules")
	}
	if !New(nil, 0).Empty() || New(list, 0).Empty() {
		t.Error("Empty")
	}
}

func TestAllows(t *testing.T) {
	tests := []struct {
		r             model.Reservation
		user, account string
		want          bool
	}{
		{model.Reservation{Users: []string{"alice"}}, "alice", "", true},
		{model.Reservation{Users: []string{"alice"}}, "bob", "", false},
		{model.Reservation{Users: []string{"bob"}, UsersNot: true}, "bob", "", false},
		{model.Reservation{Users: []string{"bob"}, UsersNot: true}, "alice", "", true},
		{model.Reservation{Accounts: []string{"phys"}}, "bob", "phys", true},
		{model.Reservation{Accounts: []string{"phys"}}, "bob", "chem", false},
		{model.Reservation{Users: []string{"alice"}, Accounts: []string{"phys"}}, "bob", "phys", true},
		{model.Reservation{Users: []string{"bob"}, UsersNot: true, Accounts: []string{"phys"}}, "bob", "phys", false},
		{model.Reservation{}, "alice", "", false},
	}
	for _, tt := range tests {
		if got := tt.r.Allows(tt.user, tt.account); got != tt.want {
			t.Errorf("%+v.Allows(%s, %s) = %v", tt.r, tt.user, tt.account, got)
		}
	}
}

// A MAINT reservation's jobs ignore every other reservation, an OVERLAP
// one's every other but MAINT ones (Slurm's job_test_resv), in verdicts
// and in Allowed alike.
func TestShadows(t *testing.T) {
	list := []*model.Reservation{
		{Name: "maint", Start: 0, End: 1000, Flags: model.ResvMaint, Nodes: []string{"n1", "n2"}},
		{Name: "ovl", Start: 0, End: 1000, Flags: model.ResvOverlap, Nodes: []string{"n2", "n3"}},
		{Name: "lab", Start: 0, End: 1000, Nodes: []string{"n3", "n4"}},
	}
	s := New(list, 10)
	for _, tt := range []struct {
		own  string
		deny []string
	}{
		{"maint", nil},
		{"ovl", []string{"n1", "n2"}},
		{"lab", []string{"n1", "n2", "n3"}},
	} {
		if v := s.For(tt.own, 500); !slices.Equal(v.Deny, tt.deny) {
			t.Errorf("For(%q) denies %v, want %v", tt.own, v.Deny, tt.deny)
		}
	}
	if !s.Allowed("maint", "n2", 10, 500) || s.Allowed("ovl", "n2", 10, 500) || !s.Allowed("ovl", "n3", 10, 500) ||
		s.Allowed("lab", "n3", 10, 500) {
		t.Error("Allowed disagrees with Shadows")
	}
}
