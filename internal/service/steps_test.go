package service

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/peer"

	"github.com/drover-hpc/drover/internal/api"
	"github.com/drover-hpc/drover/internal/auth"
	"github.com/drover-hpc/drover/internal/auth/grpcauth"
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
	res, err := svc.Signal(as(1000), api.JobSelection{UID: -1, Targets: []api.JobTarget{{ID: id, HasStep: true, Step: 2, Raw: "x"}}}, api.SignalRequest{})
	if err != nil || len(res) != 1 || res[0].Error != "" || len(n.stepSignals) != 1 || !strings.Contains(n.stepSignals[0], "term=true") {
		t.Errorf("cancel step: %v %+v %v", err, res, n.stepSignals)
	}
	res, _ = svc.Signal(as(1000), api.JobSelection{UID: -1, Targets: []api.JobTarget{{ID: id, HasStep: true, Step: 9, Raw: "x"}}}, api.SignalRequest{})
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
	if _, _, err := svc.CreateJoinToken(as(1000), api.TokenSpec{TTL: time.Hour, Nodes: "n2"}); err == nil {
		t.Error("an ordinary user made a join token")
	}
	// A token names the nodes it is for, each defined in slurm.conf.
	for _, bad := range []api.TokenSpec{{}, {Nodes: "n[1-9]"}, {Nodes: "n["}, {Nodes: "n2", Uses: -1}} {
		if _, _, err := svc.CreateJoinToken(as(0), bad); err == nil {
			t.Errorf("token %+v accepted", bad)
		}
	}
	tok, exp, err := svc.CreateJoinToken(as(0), api.TokenSpec{TTL: time.Hour, Nodes: "n2"})
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
	// Bound to n2: n1 (defined, but not named) is refused.
	if _, _, _, err := svc.Join(sec.ID, sec.Secret, "n1", csr); err == nil || !strings.Contains(err.Error(), "is for nodes n2") {
		t.Errorf("join as a node the token does not name: %v", err)
	}
	cert, caPEM, conf, err := svc.Join(sec.ID, sec.Secret, "n2", csr)
	if err != nil || len(cert) == 0 || string(caPEM) != string(ca.CertPEM) || conf != "ClusterName=c\n" {
		t.Fatalf("join: %v", err)
	}
	// Single use: the same token cannot make a second certificate.
	if _, _, _, err := svc.Join(sec.ID, sec.Secret, "n2", csr); err == nil || !strings.Contains(err.Error(), "used up") {
		t.Errorf("second join with a one-use token: %v", err)
	}

	// ALL with two uses: any defined node, each once, two joins in all.
	tok, _, err = svc.CreateJoinToken(as(0), api.TokenSpec{TTL: time.Hour, Nodes: "ALL", Uses: 2})
	if err != nil {
		t.Fatal(err)
	}
	sec, _ = auth.ParseJoinSecret(tok)
	if _, _, _, err := svc.Join(sec.ID, sec.Secret, "n1", csr); err != nil {
		t.Fatalf("first join with ALL: %v", err)
	}
	if _, _, _, err := svc.Join(sec.ID, sec.Secret, "n1", csr); err == nil || !strings.Contains(err.Error(), "already joined") {
		t.Errorf("the same name twice: %v", err)
	}
	if _, _, _, err := svc.Join(sec.ID, sec.Secret, "n2", csr); err != nil {
		t.Errorf("second join with ALL: %v", err)
	}
	svc.clock.(interface{ Advance(time.Duration) }).Advance(2 * time.Hour)
	tok, _, _ = svc.CreateJoinToken(as(0), api.TokenSpec{TTL: time.Hour, Nodes: "n[1-2]"})
	sec, _ = auth.ParseJoinSecret(tok)
	svc.clock.(interface{ Advance(time.Duration) }).Advance(2 * time.Hour)
	if _, _, _, err := svc.Join(sec.ID, sec.Secret, "n2", csr); err == nil {
		t.Error("join with an expired token")
	}
}

// A node certificate is the node protocol's, not the API's: it lists,
// cancels and administers nothing.
func TestNodeCertificateIsNoUser(t *testing.T) {
	svc, _, _ := setup(t)
	if _, err := svc.SubmitJob(as(1000), spec()); err != nil {
		t.Fatal(err)
	}
	node := peer.NewContext(context.Background(), &peer.Peer{
		Addr:     &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1},
		AuthInfo: credentials.TLSInfo{State: nodeCertState(t, "n2")},
	})
	if got, err := grpcauth.NewVerifier("tok").Identify(node); err != nil || got.Node != "n2" || got.Privileged(0) {
		t.Fatalf("node certificate identity: %+v %v", got, err)
	}
	node = verified(node)
	if got := api.IdentityFrom(node); got == nil || got.Node != "n2" {
		t.Fatalf("node certificate identity in the context: %+v", got)
	}
	if _, _, err := listJobs(node, svc, nil, false); err == nil {
		t.Error("a node certificate listed jobs")
	}
	if rs, err := svc.Signal(node, api.JobSelection{UID: -1}, api.SignalRequest{}); err == nil {
		t.Errorf("a node certificate cancelled jobs: %+v", rs)
	}
	if _, _, err := svc.CreateJoinToken(node, api.TokenSpec{Nodes: "ALL"}); err == nil {
		t.Error("a node certificate made a join token")
	}
}

// nodeCertState is the TLS state of a caller presenting a node
// certificate the cluster CA signed.
func nodeCertState(t *testing.T, node string) tls.ConnectionState {
	t.Helper()
	ca, err := auth.LoadOrCreateCA(t.TempDir(), "c")
	if err != nil {
		t.Fatal(err)
	}
	_, csr, err := auth.NewNodeKey(node)
	if err != nil {
		t.Fatal(err)
	}
	certPEM, err := ca.SignNode(csr, node)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := pem.Decode(certPEM)
	leaf, err := x509.ParseCertificate(b.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return tls.ConnectionState{VerifiedChains: [][]*x509.Certificate{{leaf}}}
}

// Admins list tokens (no secret hashes) and revoke one; a revoked token
// joins nothing.
func TestJoinTokenListDelete(t *testing.T) {
	svc, _, _ := setup(t)
	ca, err := auth.LoadOrCreateCA(t.TempDir(), "c")
	if err != nil {
		t.Fatal(err)
	}
	svc.SetCA(ca, nil)
	tok, _, err := svc.CreateJoinToken(as(0), api.TokenSpec{TTL: time.Hour, Nodes: "n[1-2]"})
	if err != nil {
		t.Fatal(err)
	}
	sec, _ := auth.ParseJoinSecret(tok)
	if _, err := svc.ListJoinTokens(as(1000)); err == nil {
		t.Error("an ordinary user listed join tokens")
	}
	if err := svc.DeleteJoinToken(as(1000), sec.ID); err == nil {
		t.Error("an ordinary user deleted a join token")
	}
	list, err := svc.ListJoinTokens(as(0))
	if err != nil || len(list) != 1 || list[0].ID != sec.ID || list[0].SecretHash != "" || list[0].MaxUses() != 2 || list[0].Nodes != "n[1-2]" {
		t.Fatalf("list: %+v %v", list, err)
	}
	if err := svc.DeleteJoinToken(as(0), "zzzzzz"); err == nil {
		t.Error("deleting a token that does not exist")
	}
	if err := svc.DeleteJoinToken(as(0), sec.ID); err != nil {
		t.Fatal(err)
	}
	_, csr, _ := auth.NewNodeKey("n1")
	if _, _, _, err := svc.Join(sec.ID, sec.Secret, "n1", csr); err == nil {
		t.Error("join with a deleted token")
	}
	if list, _ := svc.ListJoinTokens(as(0)); len(list) != 0 {
		t.Errorf("after delete: %+v", list)
	}
}

// interleaved commits another srun's step just before the first step
// creation it sees: the two sruns laid out on the same snapshot.
type interleaved struct {
	*direct
	other func()
}

func (c *interleaved) Apply(t fsm.Type, body any) (any, error) {
	if t == fsm.TypeCreateStep && c.other != nil {
		other := c.other
		c.other = nil
		other()
	}
	return c.direct.Apply(t, body)
}

// TestConcurrentExactStepsTakeFreeCPUs: two --exact steps of one CPU each
// asked for at once in a two-CPU job both run, on different CPUs. The
// second one's layout (chosen before the first committed) names the
// first's CPU; it is laid out again instead of answered busy, which made
// srun wait for the first step to end and reuse its core.
func TestConcurrentExactStepsTakeFreeCPUs(t *testing.T) {
	svc, d, _ := setup(t)
	id := running(t, svc, d, 1000, model.NodeAlloc{Node: "n1", CPUs: 2, CPUIDs: model.BitmapOf(0, 1)})
	exact := func() *model.StepSpec {
		return stepSpec(func(s *model.StepSpec) { s.Exact, s.NTasks, s.CPUsPerTask = true, 1, 1 })
	}
	var first *model.Step
	c := &interleaved{direct: d}
	c.other = func() {
		var err error
		if _, first, err = svc.CreateStep(as(1000), id, exact()); err != nil {
			t.Errorf("first step: %v", err)
		}
	}
	svc.raft = c
	_, second, err := svc.CreateStep(as(1000), id, exact())
	if err != nil || first == nil {
		t.Fatalf("second step while the first runs on the other CPU: %v", err)
	}
	a, b := first.Layout[0].CPUIDs, second.Layout[0].CPUIDs
	if a.Count() != 1 || b.Count() != 1 || a.Intersects(b) {
		t.Errorf("steps' CPUs %v and %v: want one each, different", a.IDs(), b.IDs())
	}
}
