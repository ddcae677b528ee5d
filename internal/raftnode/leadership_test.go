package raftnode

import "testing"

// A single voter leads once open and names itself as the leader; closed,
// it neither leads nor knows a leader.
func TestLeadershipOfASingleVoter(t *testing.T) {
	n, _ := open(t, t.TempDir())
	if !n.IsLeader() {
		t.Fatal("an open single voter does not lead")
	}
	if got := n.Leader(); got != "t" {
		t.Fatalf("Leader() = %q, want the member's own address t", got)
	}
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	if n.IsLeader() || n.Leader() != "" {
		t.Fatalf("a closed member leads (%v) or names a leader (%q)", n.IsLeader(), n.Leader())
	}
}
