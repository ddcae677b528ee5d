package service

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/drover-hpc/drover/internal/auth"
	"github.com/drover-hpc/drover/internal/fsm"
	"github.com/drover-hpc/drover/internal/model"
)

// running submits a job as uid and starts it on the given allocation.
func running(t *testing.T, svc *Service, d *direct, uid uint32, alloc ...model.NodeAlloc) model.JobID {
	t.Helper()
	s := spec()
	s.Interactive, s.Script = true, ""
	id, err := svc.SubmitJob(as(uid), s)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Apply(fsm.TypeSchedule, &fsm.Schedule{Starts: []fsm.StartEntry{{Job: id, Alloc: alloc}}, Now: 1000}); err != nil {
		t.Fatal(err)
	}
	return id
}

func stepSpec(mod func(*model.StepSpec)) *model.StepSpec {
	s := &model.StepSpec{Argv: []string{"true"}, NTasks: model.Unset, MinNodes: model.Unset, MaxNodes: model.Unset,
		TasksPerNode: model.Unset, CPUsPerTask: model.Unset}
	if mod != nil {
		mod(s)
	}
	return s
}

func TestStepLifecycle(t *testing.T) {
	svc, d, n := setup(t)
	id := running(t, svc, d, 1000, model.NodeAlloc{Node: "n1", CPUs: 2}, model.NodeAlloc{Node: "n2", CPUs: 2})

	// Another user may not create steps in the job; a pending job has none.
	if _, _, err := svc.CreateStep(as(1001), id, stepSpec(nil)); err == nil || err.Error() != "Access/permission denied" {
		t.Errorf("foreign step: %v", err)
	}
	_, st, err := svc.CreateStep(as(1000), id, stepSpec(func(s *model.StepSpec) { s.NTasks = 4 }))
	if err != nil {
		t.Fatal(err)
	}
	if st.ID != 0 || st.NTasks != 4 || len(st.Layout) != 2 || len(n.launched) != 1 {
		t.Fatalf("step %+v, launched %v", st, n.launched)
	}
	// The default step holds every CPU: the next one waits, --overlap does not.
	if _, _, err := svc.CreateStep(as(1000), id, stepSpec(nil)); !errors.Is(err, ErrStepBusy) {
		t.Errorf("second step while the first runs: %v", err)
	}
	if _, st2, err := svc.CreateStep(as(1000), id, stepSpec(func(s *model.StepSpec) { s.Overlap = true })); err != nil || st2.ID != 1 {
		t.Errorf("overlapping step: %v %+v", err, st2)
	}
	// Steps asking for more than the job holds fail for good.
	if _, _, err := svc.CreateStep(as(1000), id, stepSpec(func(s *model.StepSpec) { s.NTasks = 5 })); err == nil || errors.Is(err, ErrStepBusy) {
		t.Errorf("oversized step: %v", err)
	}
	// Both nodes report: the step completes with the highest exit code,
	// and the waiting step fits.
	for i, node := range []string{"n1", "n2"} {
		if _, err := d.Apply(fsm.TypeStepEnded, &fsm.StepEnded{Job: id, Step: 0, Node: node, ExitCode: int32(i * 3), Now: 1010}); err != nil {
			t.Fatal(err)
		}
	}
	j := svc.store.Snapshot().Job(id)
	if s0 := j.Step(0); s0.State != model.JobFailed || s0.ExitCode != 3 || s0.EndTime != 1010 {
		t.Errorf("finished step %+v", s0)
	}
	if _, st3, err := svc.CreateStep(as(1000), id, stepSpec(nil)); err != nil || st3.ID != 2 {
		t.Fatalf("step after the first ended: %v", err)
	}
	// scancel JOB.STEP marks the step and tells its nodes.
	res, err := svc.Signal(as(1000), Selection{UID: -1, Targets: []Target{{ID: id, HasStep: true, Step: 2, Raw: "x"}}}, 0, ScopeSteps)
	if err != nil || len(res) != 1 || res[0].Error != "" || len(n.stepSignals) != 1 || !strings.Contains(n.stepSignals[0], "term=true") {
		t.Errorf("cancel step: %v %+v %v", err, res, n.stepSignals)
	}
	res, _ = svc.Signal(as(1000), Selection{UID: -1, Targets: []Target{{ID: id, HasStep: true, Step: 9, Raw: "x"}}}, 0, ScopeSteps)
	if res[0].Error != "Invalid job id specified" {
		t.Errorf("unknown step: %+v", res)
	}

	// Releasing the allocation keeps its holder's status through the
	// node's end report, and closes the running steps.
	if err := svc.CompleteJob(as(1000), id, 7, 0); err != nil {
		t.Fatal(err)
	}
	if len(n.terminated) != 1 {
		t.Errorf("release did not terminate the nodes: %v", n.terminated)
	}
	if _, err := d.Apply(fsm.TypeJobEnded, &fsm.JobEnded{Job: id, Now: 1020}); err != nil {
		t.Fatal(err)
	}
	j = svc.store.Snapshot().Job(id)
	if j.State != model.JobFailed || j.ExitCode != 7 || len(j.RunningSteps()) != 0 {
		t.Errorf("released job: state %s exit %d running steps %d", j.State, j.ExitCode, len(j.RunningSteps()))
	}
	if _, _, err := svc.CreateStep(as(1000), id, stepSpec(nil)); err == nil {
		t.Error("step in a finished job")
	}
}

func TestJoinTokens(t *testing.T) {
	svc, _, _ := setup(t)
	ca, err := auth.LoadOrCreateCA(t.TempDir(), "c")
	if err != nil {
		t.Fatal(err)
	}
	svc.SetCA(ca, func() (string, error) { return "ClusterName=c\n", nil })
	if _, _, err := svc.CreateJoinToken(as(1000), time.Hour); err == nil {
		t.Error("an ordinary user made a join token")
	}
	tok, exp, err := svc.CreateJoinToken(as(0), time.Hour)
	if err != nil || exp != 1000+3600 {
		t.Fatalf("token: %v %d", err, exp)
	}
	sec, err := auth.ParseJoinSecret(tok)
	if err != nil || sec.CAHash != ca.Fingerprint() {
		t.Fatalf("token %q: %v", tok, err)
	}
	_, csr, err := auth.NewNodeKey("n2")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := svc.Join(sec.ID, "wrong"+sec.Secret[5:], "n2", csr); err == nil {
		t.Error("join with a wrong secret")
	}
	if _, _, _, err := svc.Join(sec.ID, sec.Secret, "n9", csr); err == nil {
		t.Error("join as an unknown node")
	}
	cert, caPEM, conf, err := svc.Join(sec.ID, sec.Secret, "n2", csr)
	if err != nil || len(cert) == 0 || string(caPEM) != string(ca.CertPEM) || conf != "ClusterName=c\n" {
		t.Fatalf("join: %v", err)
	}
	svc.clock.(interface{ Advance(time.Duration) }).Advance(2 * time.Hour)
	if _, _, _, err := svc.Join(sec.ID, sec.Secret, "n2", csr); err == nil {
		t.Error("join with an expired token")
	}
}
