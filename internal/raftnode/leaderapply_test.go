package raftnode

import (
	"bytes"
	"testing"

	"github.com/drover-hpc/drover/internal/fsm"
	"github.com/drover-hpc/drover/internal/model"
)

// TestLeaderAppliesItsOwnBodyAndReplayAgrees: the leader applies the
// Submit it holds (no decode of its own bytes); a restart replays the same
// entries from the log by decoding them and must reach the same state.
func TestLeaderAppliesItsOwnBodyAndReplayAgrees(t *testing.T) {
	dir := t.TempDir()
	n, store := open(t, dir)
	var specs []*model.JobSpec
	for i := 0; i < 4; i++ {
		s := spec()
		s.Env = []string{"PATH=/bin", "I=" + string(rune('a'+i))}
		s.Hold = i%2 == 0
		specs = append(specs, s)
		if _, err := n.Apply(fsm.TypeSubmit, &fsm.Submit{Spec: s, UID: 1000, Groups: []uint32{7}, User: "u",
			Partition: "p", TimeLimit: 5, Now: int64(10 + i)}); err != nil {
			t.Fatal(err)
		}
	}
	before := store.Snapshot()
	if got := n.adapter.direct.Load(); got != uint64(len(specs)) {
		t.Errorf("the leader applied %d of its %d Submits from the bodies it held", got, len(specs))
	}
	if len(n.adapter.own) != 0 {
		t.Errorf("%d bodies left held after their commits", len(n.adapter.own))
	}
	var want bytes.Buffer
	if err := fsm.WriteSnapshot(before, &want); err != nil {
		t.Fatal(err)
	}
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	n2, store2 := open(t, dir)
	defer n2.Close()
	after := store2.Snapshot()
	if got := n2.adapter.direct.Load(); got != 0 {
		t.Errorf("replay applied %d entries from held bodies", got)
	}
	var got bytes.Buffer
	if err := fsm.WriteSnapshot(after, &got); err != nil {
		t.Fatal(err)
	}
	if got.String() != want.String() {
		t.Fatalf("replayed state differs from the leader's:\n%s\n%s", got.String(), want.String())
	}
}
