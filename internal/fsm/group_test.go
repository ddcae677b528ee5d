package fsm

import (
	"errors"
	"testing"

	"github.com/drover-hpc/drover/internal/model"
)

func encoded(t *testing.T, typ Type, body any) []byte {
	t.Helper()
	b, err := Encode(typ, body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestGroupAppliesInOrderWithOwnResults: a group's commands see each
// other's effects in order (the job submitted first is started by the
// next command, then ended), each result is the command's own, and a
// failing or nested command fails alone.
func TestGroupAppliesInOrderWithOwnResults(t *testing.T) {
	h := newHarness(t)
	start := &Schedule{Now: 200, Starts: []StartEntry{{Job: 1, Alloc: []model.NodeAlloc{{Node: "n1", CPUs: 1}}}}}
	inner := NewGroup([][]byte{encoded(t, TypeAcctAck, &AcctAck{Seq: 1})}, nil)
	entries := [][]byte{
		encoded(t, TypeSubmit, &Submit{Spec: spec(), Partition: "p", Now: 100}),
		encoded(t, TypeSchedule, start),
		encoded(t, TypeSetAcctDB, &SetAcctDB{DB: &model.AcctDB{}, Base: 42}),
		encoded(t, TypeGroup, inner),
		encoded(t, TypeJobEnded, &JobEnded{Job: 1, Run: 1, Now: 300}),
	}
	res := h.apply(TypeGroup, NewGroup(entries, nil)).(GroupResult)
	if len(res.Results) != len(entries) {
		t.Fatalf("%d results for %d commands", len(res.Results), len(entries))
	}
	if r, ok := res.Results[0].(SubmitResult); !ok || r.JobID != 1 {
		t.Errorf("submit's result %#v, want job 1", res.Results[0])
	}
	if r, ok := res.Results[1].(ScheduleResult); !ok || len(r.Started) != 1 || r.Started[0] != 1 {
		t.Errorf("schedule's result %#v, want job 1 started", res.Results[1])
	}
	if err, _ := res.Results[2].(error); !errors.Is(err, ErrAcctDBChanged) {
		t.Errorf("SetAcctDB's result %#v, want ErrAcctDBChanged", res.Results[2])
	}
	if res.Results[3] != errNestedGroup {
		t.Errorf("a nested group's result %#v, want a refusal", res.Results[3])
	}
	if j := h.snap().Job(1); j == nil || j.State != model.JobCompleted || j.StartTime != 200 {
		t.Errorf("job 1 after the group: %+v, want COMPLETED, started at 200", j)
	}
}

// TestGroupLeaderBodiesOnlyWhereEquivalent: the leader's group keeps the
// bodies of the commands that decode back to the same value (Submit) and
// decodes the others.
func TestGroupLeaderBodiesOnlyWhereEquivalent(t *testing.T) {
	sub := &Submit{Spec: spec(), Partition: "p", Now: 100}
	end := &JobEnded{Job: 1, Run: 1, Now: 300}
	g := NewGroup([][]byte{encoded(t, TypeSubmit, sub), encoded(t, TypeJobEnded, end)}, []any{sub, end})
	if len(g.held) != 2 || g.held[0] != sub || g.held[1] != nil {
		t.Fatalf("held bodies %#v, want the Submit only", g.held)
	}
	_, body, err := Decode(encoded(t, TypeGroup, g))
	if err != nil {
		t.Fatal(err)
	}
	if d := body.(*Group); d.held != nil || len(d.Entries) != 2 {
		t.Fatalf("decoded group %#v: want its two entries and no held bodies", d)
	}
}
