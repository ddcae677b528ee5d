package fsm

import (
	"bytes"
	"testing"

	"github.com/drover-hpc/drover/internal/model"
)

// A join spends one use of its token for one named node: the log decides
// between racing joins, a name joins once, and the record survives a
// snapshot.
func TestJoinTokenUses(t *testing.T) {
	h := newHarness(t)
	h.apply(TypeJoinToken, &JoinToken{Token: &model.JoinToken{ID: "aaaaaa", Nodes: "n[1-2]", Uses: 2, Expires: 500}, Now: 1})
	id := "aaaaaa"
	use := func(node string, now int64) any {
		data, err := Encode(TypeJoinToken, &JoinToken{Use: id, Node: node, Now: now})
		if err != nil {
			t.Fatal(err)
		}
		h.index++
		return h.f.Apply(h.index, data)
	}
	if err, _ := use("n3", 2).(error); err == nil {
		t.Error("a node outside the token's names joined")
	}
	if res := use("n1", 2); res != nil {
		t.Fatalf("first join: %v", res)
	}
	if err, _ := use("n1", 2).(error); err == nil {
		t.Error("the same name joined twice")
	}
	var buf bytes.Buffer
	if err := WriteSnapshot(h.snap(), &buf); err != nil {
		t.Fatal(err)
	}
	if err := h.f.Restore(&buf, 0); err != nil {
		t.Fatal(err)
	}
	if tok := h.snap().Token("aaaaaa"); tok == nil || len(tok.Joined) != 1 || tok.Joined[0] != "n1" {
		t.Fatalf("after a snapshot: %+v", tok)
	}
	if err, _ := use("n2", 600).(error); err == nil {
		t.Error("an expired token was used")
	}
	if res := use("n2", 3); res != nil {
		t.Fatalf("second join: %v", res)
	}
	if err, _ := use("n2", 3).(error); err == nil {
		t.Error("a used-up token was used")
	}
	id = "zzzzzz"
	if err, _ := use("n1", 3).(error); err != ErrTokenInvalid {
		t.Errorf("unknown token: %v", err)
	}
}
