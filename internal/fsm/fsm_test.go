package fsm

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/state"
)

type harness struct {
	t     *testing.T
	f     *FSM
	index uint64
}

func newHarness(t *testing.T) *harness {
	h := &harness{t: t, f: New(state.New(1), nil)}
	h.apply(TypeSetConfig, &SetConfig{
		Nodes: []*model.Node{
			{Name: "n1", CPUs: 4, Memory: 4000},
			{Name: "n2", CPUs: 4, Memory: 4000},
		},
		Partitions: []*model.Partition{{Name: "p", Nodes: []string{"n1", "n2"}, Default: true, MaxTime: model.Unlimited}},
	})
	for _, n := range []string{"n1", "n2"} {
		h.apply(TypeNodeRegister, &NodeRegister{Node: n, CPUs: 4, Memory: 4000, Now: 100})
	}
	return h
}

func (h *harness) apply(t Type, body any) any {
	h.t.Helper()
	data, err := Encode(t, body)
	if err != nil {
		h.t.Fatal(err)
	}
	h.index++
	prev := h.snap()
	before := published(prev)
	res := h.f.Apply(h.index, data)
	if err, ok := res.(error); ok {
		h.t.Fatalf("apply %d: %v", t, err)
	}
	if m := mutated(prev, before); len(m) > 0 {
		h.t.Errorf("command %d changed the published snapshot in place: %v", t, m)
	}
	return res
}

func (h *harness) snap() *state.Snapshot { return h.f.Store().Snapshot() }

func spec() *model.JobSpec {
	return &model.JobSpec{Name: "j", Script: "#!/bin/sh\ntrue\n", WorkDir: "/tmp", TimeLimit: model.Unset,
		MinNodes: model.Unset, NTasks: model.Unset, CPUsPerTask: model.Unset, MemPerNode: model.Unset}
}

func TestSubmitAssignsIncreasingIDs(t *testing.T) {
	h := newHarness(t)
	a := h.apply(TypeSubmit, &Submit{Spec: spec(), Partition: "p", Now: 1}).(SubmitResult)
	arr := spec()
	arr.Array = &model.ArraySpec{Raw: "0-2", TaskIDs: []int{0, 1, 2}}
	b := h.apply(TypeSubmit, &Submit{Spec: arr, Partition: "p", Now: 2}).(SubmitResult)
	c := h.apply(TypeSubmit, &Submit{Spec: spec(), Partition: "p", Now: 3}).(SubmitResult)
	if a.JobID != 1 || b.JobID != 2 || c.JobID != 5 {
		t.Fatalf("ids %d %d %d", a.JobID, b.JobID, c.JobID)
	}
	tasks := h.snap().ArrayTasks(2)
	if len(tasks) != 3 || tasks[2].ArrayTaskID != 2 || tasks[2].ID != 4 || tasks[0].Spec != tasks[2].Spec {
		t.Fatalf("array tasks %+v", tasks)
	}
}

func TestScheduleEndAndCancel(t *testing.T) {
	h := newHarness(t)
	h.apply(TypeSubmit, &Submit{Spec: spec(), Partition: "p", Now: 1})
	h.apply(TypeSubmit, &Submit{Spec: spec(), Partition: "p", Now: 1})
	alloc := []model.NodeAlloc{{Node: "n1", CPUs: 3, Mem: 100}}
	res := h.apply(TypeSchedule, &Schedule{Now: 5, Starts: []StartEntry{{Job: 1, Alloc: alloc}, {Job: 2, Alloc: alloc}},
		Reasons: map[model.JobID]string{2: model.ReasonResources}}).(ScheduleResult)
	// The second start no longer fits on n1 once the first is placed.
	if len(res.Started) != 1 || res.Started[0] != 1 {
		t.Fatalf("started %v", res.Started)
	}
	if n := h.snap().Node("n1"); n.AllocCPUs != 3 || n.AllocMem != 100 {
		t.Fatalf("node alloc %d/%d", n.AllocCPUs, n.AllocMem)
	}
	if j := h.snap().Job(2); j.Reason != model.ReasonResources || j.State != model.JobPending {
		t.Fatalf("job 2 %v %s", j.State, j.Reason)
	}
	h.apply(TypeJobEnded, &JobEnded{Job: 1, ExitCode: 3, Now: 9})
	j := h.snap().Job(1)
	if j.State != model.JobFailed || j.ExitCode != 3 || j.EndTime != 9 || j.Reason != model.ReasonNonZeroExit {
		t.Fatalf("ended job %+v", j)
	}
	if n := h.snap().Node("n1"); n.AllocCPUs != 0 || n.AllocMem != 0 {
		t.Fatal("resources not released")
	}
	// A repeated end report changes nothing.
	h.apply(TypeJobEnded, &JobEnded{Job: 1, ExitCode: 0, Now: 10})
	if h.snap().Job(1).State != model.JobFailed {
		t.Fatal("duplicate end report applied")
	}
	// Cancel: running → completing until the node confirms.
	h.apply(TypeSchedule, &Schedule{Now: 11, Starts: []StartEntry{{Job: 2, Alloc: alloc}}})
	cr := h.apply(TypeCancel, &Cancel{Jobs: []model.JobID{2}, By: 0, Now: 12}).(CancelResult)
	if len(cr.Terminate) != 1 || !h.snap().Job(2).Completing {
		t.Fatal("running job not completing after cancel")
	}
	h.apply(TypeJobEnded, &JobEnded{Job: 2, Signal: 15, Now: 13})
	if j := h.snap().Job(2); j.State != model.JobCancelled || j.Completing {
		t.Fatalf("cancelled job %v completing=%v", j.State, j.Completing)
	}
}

func TestNodeDownFailsJobs(t *testing.T) {
	h := newHarness(t)
	h.apply(TypeSubmit, &Submit{Spec: spec(), Partition: "p", Now: 1})
	h.apply(TypeSchedule, &Schedule{Now: 2, Starts: []StartEntry{{Job: 1, Alloc: []model.NodeAlloc{{Node: "n2", CPUs: 1}}}}})
	h.apply(TypeNodeDown, &NodeDown{Node: "n2", Reason: ReasonNotResponding, Now: 50})
	if j := h.snap().Job(1); j.State != model.JobNodeFail {
		t.Fatalf("job state %v", j.State)
	}
	n := h.snap().Node("n2")
	if n.State != model.NodeDown || n.Responding || n.AllocCPUs != 0 {
		t.Fatalf("node %+v", n)
	}
	// The agent coming back revives a node that was only unresponsive.
	h.apply(TypeNodeRegister, &NodeRegister{Node: "n2", CPUs: 4, Memory: 4000, Now: 60})
	if n := h.snap().Node("n2"); !n.Usable() {
		t.Fatalf("node after re-register %+v", n)
	}
}

func TestHoldReleaseRequeue(t *testing.T) {
	h := newHarness(t)
	h.apply(TypeSubmit, &Submit{Spec: spec(), Partition: "p", Priority: 1, Now: 1})
	h.apply(TypeControl, &Control{Jobs: []model.JobID{1}, Action: "hold-admin"})
	if j := h.snap().Job(1); !j.HoldAdmin || j.Reason != model.ReasonHeldAdmin || j.Priority != 0 {
		t.Fatalf("held %+v", j)
	}
	h.apply(TypeControl, &Control{Jobs: []model.JobID{1}, Action: "release-user"})
	if !h.snap().Job(1).HoldAdmin {
		t.Fatal("user release cleared an admin hold")
	}
	h.apply(TypeControl, &Control{Jobs: []model.JobID{1}, Action: "release"})
	h.apply(TypeSchedule, &Schedule{Now: 2, Starts: []StartEntry{{Job: 1, Alloc: []model.NodeAlloc{{Node: "n1", CPUs: 1}}}}})
	h.apply(TypeControl, &Control{Jobs: []model.JobID{1}, Action: "requeue", Now: 3})
	h.apply(TypeJobEnded, &JobEnded{Job: 1, Signal: 15, Now: 4})
	if j := h.snap().Job(1); j.State != model.JobPending || j.Restarts != 1 || len(j.Alloc) != 0 {
		t.Fatalf("requeued %+v", j)
	}
}

func TestSnapshotRoundTrip(t *testing.T) {
	h := newHarness(t)
	arr := spec()
	arr.Array = &model.ArraySpec{Raw: "1-3", TaskIDs: []int{1, 2, 3}}
	h.apply(TypeSubmit, &Submit{Spec: arr, Partition: "p", Now: 1})
	h.apply(TypeSchedule, &Schedule{Now: 2, Starts: []StartEntry{{Job: 1, Alloc: []model.NodeAlloc{{Node: "n1", CPUs: 1}}}}})
	var buf bytes.Buffer
	if err := WriteSnapshot(h.snap(), &buf); err != nil {
		t.Fatal(err)
	}
	g := New(state.New(1), nil)
	if err := g.Restore(&buf, 7); err != nil {
		t.Fatal(err)
	}
	s := g.Store().Snapshot()
	if s.NextJobID != 4 || s.NumJobs() != 3 || s.NumActive() != 3 || s.Node("n1").AllocCPUs != 1 {
		t.Fatalf("restored next=%d jobs=%d active=%d", s.NextJobID, s.NumJobs(), s.NumActive())
	}
	if s.Job(3).Spec != s.Job(1).Spec || s.Job(3).Spec.Array.Raw != "1-3" {
		t.Fatal("array tasks do not share the restored spec")
	}
}

func TestUndecodableEntryIsSkipped(t *testing.T) {
	h := newHarness(t)
	if _, ok := h.f.Apply(99, []byte{200, '{'}).(error); !ok {
		t.Fatal("garbage entry not reported")
	}
	if _, ok := h.f.Apply(100, nil).(error); !ok {
		t.Fatal("empty entry not reported")
	}
}

func TestRegisterRequeuesJobsTheNodeDoesNotHave(t *testing.T) {
	h := newHarness(t)
	h.apply(TypeSubmit, &Submit{Spec: spec(), Partition: "p", Now: 1})
	h.apply(TypeSchedule, &Schedule{Now: 2, Starts: []StartEntry{{Job: 1, Alloc: []model.NodeAlloc{{Node: "n1", CPUs: 2}}}}})
	h.apply(TypeNodeRegister, &NodeRegister{Node: "n1", CPUs: 4, Memory: 4000, Requeue: []model.JobID{1}, Now: 9})
	j := h.snap().Job(1)
	if j.State != model.JobPending || j.StartTime != 0 || j.Restarts != 1 || h.snap().Node("n1").AllocCPUs != 0 {
		t.Fatalf("job %+v, node alloc %d", j, h.snap().Node("n1").AllocCPUs)
	}
}

// TestReleasedAtTimeLimit: srun's allocation reaches its time limit, the
// node kills the step, srun gives the job back with the step's status
// (143) and then the node reports the end as TIMEOUT: the job timed out,
// as in Slurm, rather than FAILED with srun's status. A release of its own
// accord keeps srun's status.
func TestReleasedAtTimeLimit(t *testing.T) {
	h := newHarness(t)
	for range 2 {
		s := spec()
		s.Interactive = true
		h.apply(TypeSubmit, &Submit{Spec: s, Partition: "p", Now: 1})
	}
	alloc := []model.NodeAlloc{{Node: "n1", CPUs: 1}}
	h.apply(TypeSchedule, &Schedule{Now: 2, Starts: []StartEntry{{Job: 1, Alloc: alloc}, {Job: 2, Alloc: alloc}}})
	h.apply(TypeRelease, &Release{Job: 1, ExitCode: 143, Now: 5})
	h.apply(TypeJobEnded, &JobEnded{Job: 1, State: model.JobTimeout, Reason: model.ReasonTimeLimit, Signal: 15, Now: 5})
	if j := h.snap().Job(1); j.State != model.JobTimeout || j.Reason != model.ReasonTimeLimit || j.ExitCode != 0 || j.Signal != 15 {
		t.Errorf("timed-out allocation: %v %s %d:%d", j.State, j.Reason, j.ExitCode, j.Signal)
	}
	h.apply(TypeRelease, &Release{Job: 2, ExitCode: 3, Now: 5})
	h.apply(TypeJobEnded, &JobEnded{Job: 2, Now: 5})
	if j := h.snap().Job(2); j.State != model.JobFailed || j.ExitCode != 3 {
		t.Errorf("released allocation: %v %d:%d", j.State, j.ExitCode, j.Signal)
	}
}

// TestEncodeIsMarshal: a log entry is the type byte and exactly the bytes
// json.Marshal gives (older entries replay, EquivalentAfterDecode holds),
// whatever the pooled buffer held before, and it shares no memory with
// the next entry.
func TestEncodeIsMarshal(t *testing.T) {
	bodies := []any{
		&Submit{Spec: &model.JobSpec{Name: "a<b>&", Script: "#!/bin/sh\ntrue\n", Env: []string{"X=\u00e9", "Y=\n"}}, Partition: "p", Now: 1},
		&AcctAck{Seq: 7},
		&Submit{Spec: &model.JobSpec{Name: "b"}},
	}
	var prev []byte
	for i, body := range bodies {
		got, err := Encode(TypeSubmit, body)
		if err != nil {
			t.Fatal(err)
		}
		js, _ := json.Marshal(body)
		if want := append([]byte{byte(TypeSubmit)}, js...); !bytes.Equal(got, want) {
			t.Fatalf("body %d: Encode gave\n%q\nwant\n%q", i, got, want)
		}
		if prev != nil && &prev[0] == &got[0] {
			t.Fatalf("body %d: entries share memory", i)
		}
		prev = got
	}
	if _, err := Encode(TypeSubmit, func() {}); err == nil {
		t.Fatal("a body JSON cannot hold encoded without an error")
	}
}
