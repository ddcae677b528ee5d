package model

import (
	"testing"
	"time"
)

func TestNextWindow(t *testing.T) {
	// Friday 2026-11-27 09:00-10:00 UTC.
	fri := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC).Unix()
	tests := []struct {
		flags ResvFlags
		now   int64
		want  int64 // next start; 0: does not recur
	}{
		{0, fri + 3600, 0},
		{ResvHourly, fri + 3600, fri + 3600},
		{ResvDaily, fri + 3600, fri + 86400},
		{ResvDaily, fri + 3*86400, fri + 3*86400}, // missed windows are skipped
		{ResvWeekly, fri + 3600, fri + 7*86400},
		{ResvWeekday, fri + 3600, fri + 3*86400}, // Monday
		{ResvWeekend, fri + 3600, fri + 86400},   // Saturday
		{ResvWeekend, fri + 86400 + 3600, fri + 2*86400},
	}
	for _, tt := range tests {
		r := &Reservation{Start: fri, End: fri + 3600, Flags: tt.flags}
		start, end, ok := r.NextWindow(tt.now, time.UTC)
		if ok != (tt.want != 0) || start != tt.want || (ok && end != start+3600) {
			t.Errorf("flags %s now %d: %d %d %v, want %d", r.FlagString(), tt.now-fri, start-fri, end-fri, ok, tt.want-fri)
		}
	}
}

func TestResvConflictAndNodeState(t *testing.T) {
	a := &Reservation{Name: "a", Start: 0, End: 100, Nodes: []string{"n1", "n2"}}
	b := &Reservation{Name: "b", Start: 50, End: 150, Nodes: []string{"n2"}}
	c := &Reservation{Name: "c", Start: 100, End: 200, Nodes: []string{"n1"}}
	if ResvConflict([]*Reservation{a}, b) != a || ResvConflict([]*Reservation{a}, c) != nil {
		t.Error("overlap on a shared node during a shared time is the only conflict")
	}
	b.Flags = ResvOverlap
	if ResvConflict([]*Reservation{a}, b) != nil {
		t.Error("OVERLAP allows it")
	}
	b.Flags = 0
	a.Flags = ResvMaint
	if ResvConflict([]*Reservation{a}, b) != nil {
		t.Error("a MAINT reservation may be overlapped")
	}
	list := []*Reservation{a, b}
	if ResvNodeState(list, "n2", 60) != "MAINT" || ResvNodeState(list, "n2", 120) != "RESERVED" || ResvNodeState(list, "n3", 60) != "" {
		t.Error("ResvNodeState")
	}
	if got := (&Reservation{Flags: ResvMaint | ResvSpecNodes | ResvPurgeComp}).FlagString(); got != "MAINT,SPEC_NODES,PURGE_COMP" {
		t.Errorf("FlagString %q", got)
	}
}
