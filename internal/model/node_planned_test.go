package model

import "testing"

// A node backfill holds for a later start shows as 22.05 shows it.
func TestPlannedDisplayState(t *testing.T) {
	for _, c := range []struct {
		n           Node
		long, short string
	}{
		{Node{State: NodeUp, CPUs: 4, Responding: true, Planned: true}, "PLANNED", "plnd"},
		{Node{State: NodeUp, CPUs: 4, AllocCPUs: 2, Responding: true, Planned: true}, "MIXED-", "mix-"},
		{Node{State: NodeUp, CPUs: 4, AllocCPUs: 4, Responding: true, Planned: true}, "ALLOCATED", "alloc"},
		{Node{State: NodeUp, CPUs: 4, Planned: true}, "IDLE*", "idle*"},
		{Node{State: NodeUp, CPUs: 4, Responding: true, Planned: true, Resv: "RESERVED"}, "RESERVED", "resv"},
		{Node{State: NodeUp, CPUs: 4, AllocCPUs: 2, Responding: true, Planned: true, Resv: "RESERVED"}, "MIXED-", "mix-"},
		{Node{State: NodeUp, CPUs: 4, AllocCPUs: 2, Responding: true, Planned: true, Resv: "MAINT"}, "MIXED$", "mix$"},
	} {
		if long, short := c.n.DisplayState(); long != c.long || short != c.short {
			t.Errorf("%+v: %s/%s, want %s/%s", c.n, long, short, c.long, c.short)
		}
	}
}
