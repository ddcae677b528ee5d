package service

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/peer"

	"github.com/drover-hpc/drover/internal/api"
	"github.com/drover-hpc/drover/internal/auth/grpcauth"
	"github.com/drover-hpc/drover/internal/clock"
	"github.com/drover-hpc/drover/internal/fsm"
	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/state"
)

// direct commits straight to an FSM: the service logic without Raft.
type direct struct {
	f     *fsm.FSM
	index uint64
}

func (d *direct) Apply(t fsm.Type, body any) (any, error) {
	data, err := fsm.Encode(t, body)
	if err != nil {
		return nil, err
	}
	d.index++
	res := d.f.Apply(d.index, data)
	if err, ok := res.(error); ok {
		return nil, err
	}
	return res, nil
}

type notes struct {
	kicks                 int
	terminated, signalled []model.JobID
	launched              []model.StepID
	stepSignals           []string
}

func (n *notes) LaunchStep(_ *model.Job, st *model.Step) { n.launched = append(n.launched, st.ID) }
func (n *notes) SignalStep(j *model.Job, st *model.Step, sig int, term bool) {
	n.stepSignals = append(n.stepSignals, fmt.Sprintf("%d.%d sig=%d term=%v", j.ID, st.ID, sig, term))
}
func (n *notes) AttachStep(*model.Job, *model.Step, string, string) {}
func (n *notes) Reconfigure(string)                                 {}
func (n *notes) StepStats(context.Context, *model.Job, model.StepID, bool) ([]api.StepStat, []string, error) {
	return nil, nil, nil
}

func (n *notes) Fetch(_ context.Context, j *model.Job, _ api.BroadcastRequest) ([]string, error) {
	return j.NodeNames(), nil
}

func (n *notes) Terminate(j []model.JobID, _ string) { n.terminated = append(n.terminated, j...) }
func (n *notes) Signal(j []model.JobID, _ int, _ SignalScope) {
	n.signalled = append(n.signalled, j...)
}
func (n *notes) Kick()                       { n.kicks++ }
func (n *notes) Suspend([]model.JobID, bool) {}

func setup(t *testing.T) (*Service, *direct, *notes) {
	t.Helper()
	store := state.New(1)
	d := &direct{f: fsm.New(store, nil)}
	n := &notes{}
	st := &Settings{
		ClusterName: "c", MaxArraySize: 1001, FirstJobID: 1, KillWait: 30, SlurmdTimeout: 300, MinJobAge: 300,
		Nodes: []*model.Node{{Name: "n1", CPUs: 4, Memory: 8000}, {Name: "n2", CPUs: 4, Memory: 8000}},
		Partitions: []*model.Partition{
			{Name: "debug", Nodes: []string{"n1", "n2"}, Default: true, MaxTime: model.Unlimited, DefaultTime: model.Unset, MaxNodes: model.Unlimited},
			{Name: "short", Nodes: []string{"n1"}, MaxTime: 600, DefaultTime: 60, MaxNodes: model.Unlimited},
		},
	}
	svc := New(nil, store, d, clock.NewFake(time.Unix(1000, 0)), n, st)
	if err := svc.InstallConfig(st); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"n1", "n2"} {
		if _, err := d.Apply(fsm.TypeNodeRegister, &fsm.NodeRegister{Node: name, CPUs: 4, Memory: 8000, Now: 1000}); err != nil {
			t.Fatal(err)
		}
	}
	return svc, d, n
}

// as returns a context whose caller is a local user with this uid, as
// the gRPC adapter would build it from the peer's credentials.
func as(uid uint32) context.Context {
	return verified(peer.NewContext(context.Background(), &peer.Peer{
		Addr:     &net.UnixAddr{Name: "@", Net: "unix"},
		AuthInfo: grpcauth.PeerInfo{Local: true, UID: uid, GID: uid},
	}))
}

// verified puts the identity the verifier finds in ctx into it, or
// leaves ctx anonymous.
func verified(ctx context.Context) context.Context {
	id, err := grpcauth.NewVerifier("tok").Identify(ctx)
	if err != nil {
		return ctx
	}
	return api.WithIdentity(ctx, id)
}

func spec() *model.JobSpec {
	return &model.JobSpec{Script: "#!/bin/sh\ntrue\n", WorkDir: "/tmp", TimeLimit: model.Unset, TimeMin: model.Unset,
		MinNodes: model.Unset, MaxNodes: model.Unset, NTasks: model.Unset, CPUsPerTask: model.Unset,
		TasksPerNode: model.Unset, MemPerNode: model.Unset, MemPerCPU: model.Unset}
}

func TestSubmitAdmission(t *testing.T) {
	svc, _, _ := setup(t)
	st := *svc.Settings()
	st.EnforcePartLimits = "ALL"
	if err := svc.InstallConfig(&st); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		edit func(*model.JobSpec)
		want string
	}{
		{"empty script", func(s *model.JobSpec) { s.Script = "  " }, "Batch script is empty"},
		{"relative dir", func(s *model.JobSpec) { s.WorkDir = "rel" }, "Invalid working directory"},
		{"no partition", func(s *model.JobSpec) { s.Partition = "nope" }, "Invalid partition name specified"},
		{"over MaxTime", func(s *model.JobSpec) { s.Partition = "short"; s.TimeLimit = 601 }, "Requested time limit is invalid"},
		{"unlimited over MaxTime", func(s *model.JobSpec) { s.Partition = "short"; s.TimeLimit = model.Unlimited }, "Requested time limit is invalid"},
		{"too many cpus", func(s *model.JobSpec) { s.CPUsPerTask = 5 }, "Requested node configuration is not available"},
		{"too many nodes", func(s *model.JobSpec) { s.MinNodes = 3 }, "Node count specification invalid"},
		{"too much memory", func(s *model.JobSpec) { s.MemPerNode = 9000 }, "Requested node configuration is not available"},
		{"array too large", func(s *model.JobSpec) { s.Array = &model.ArraySpec{Raw: "0-1001", TaskIDs: []int{0, 1001}} }, "Invalid job array specification"},
		{"afterok unknown", func(s *model.JobSpec) {
			s.Dependency = &model.Dependency{Raw: "afterok:77", Terms: []model.DepTerm{{Type: model.DepAfterOK, Job: 77, Task: model.NoArrayTask}}}
		}, "Job dependency problem"},
	}
	for _, tc := range cases {
		s := spec()
		tc.edit(s)
		if _, err := svc.SubmitJob(as(1000), s); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err %v, want %q", tc.name, err, tc.want)
		}
	}
	// EnforcePartLimits=NO (the default) queues what is over the
	// partition's size and time limits.
	st.EnforcePartLimits = "NO"
	if err := svc.InstallConfig(&st); err != nil {
		t.Fatal(err)
	}
	for _, edit := range []func(*model.JobSpec){
		func(s *model.JobSpec) { s.MinNodes = 3 },
		func(s *model.JobSpec) { s.Partition = "short"; s.TimeLimit = 601 },
	} {
		s := spec()
		edit(s)
		if _, err := svc.SubmitJob(as(1000), s); err != nil {
			t.Errorf("EnforcePartLimits=NO: %v", err)
		}
	}
	// A valid job gets the partition default time and the caller's identity.
	s := spec()
	s.Partition = "nope,short"
	id, err := svc.SubmitJob(as(1000), s)
	if err != nil {
		t.Fatal(err)
	}
	jobs, _, _ := listJobs(as(0), svc, []model.JobID{id}, false)
	if len(jobs) != 1 || jobs[0].Partition != "short" || jobs[0].TimeLimit != 60 || jobs[0].UserID != 1000 {
		t.Fatalf("job %+v", jobs[0])
	}
	if _, err := svc.SubmitJob(context.Background(), spec()); err == nil || err.Error() != "Access/permission denied" {
		t.Errorf("unauthenticated submit: %v", err)
	}
}

func TestOwnershipRules(t *testing.T) {
	svc, _, n := setup(t)
	mine, _ := svc.SubmitJob(as(1000), spec())
	theirs, _ := svc.SubmitJob(as(1001), spec())
	sel := func(ids ...model.JobID) api.JobSelection {
		s := api.JobSelection{UID: -1}
		for _, id := range ids {
			s.Targets = append(s.Targets, api.JobTarget{ID: id})
		}
		return s
	}
	res, err := svc.Signal(as(1000), sel(mine, theirs, 999), api.SignalRequest{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"", "Access/permission denied", "Invalid job id specified"}
	for i, r := range res {
		if r.Error != want[i] {
			t.Errorf("result %d: %q, want %q", i, r.Error, want[i])
		}
	}
	jobs, _, _ := listJobs(as(1000), svc, nil, true)
	for _, j := range jobs {
		if j.ID == mine && j.State != model.JobCancelled || j.ID == theirs && j.State != model.JobPending {
			t.Errorf("job %d state %v", j.ID, j.State)
		}
	}
	// Root acts on anyone's job; a hold by root is an admin hold a user
	// cannot release.
	if res, _ := svc.Control(as(0), sel(theirs), "hold"); res[0].Error != "" {
		t.Fatal(res[0].Error)
	}
	if res, _ := svc.Control(as(1001), sel(theirs), "release"); res[0].Error != "Access/permission denied" {
		t.Errorf("user released an admin hold: %q", res[0].Error)
	}
	// Filter-only cancels by a user touch only that user's jobs.
	other, _ := svc.SubmitJob(as(1001), spec())
	if _, err := svc.Signal(as(1000), api.JobSelection{UID: -1, Name: ""}, api.SignalRequest{}); err != nil {
		t.Fatal(err)
	}
	if j, _, _ := listJobs(as(0), svc, []model.JobID{other}, false); j[0].State != model.JobPending {
		t.Errorf("user's filter cancel hit another user's job")
	}
	if len(n.terminated) != 0 {
		t.Errorf("pending jobs sent to nodes: %v", n.terminated)
	}
}

func TestUpdateRules(t *testing.T) {
	svc, _, _ := setup(t)
	s := spec()
	s.TimeLimit = 600
	id, _ := svc.SubmitJob(as(1000), s)
	sel := api.JobSelection{UID: -1, Targets: []api.JobTarget{{ID: id}}}
	if res, _ := svc.UpdateJob(as(1000), sel, map[string]string{"TimeLimit": "5"}); res[0].Error != "" {
		t.Errorf("user lowering own limit: %q", res[0].Error)
	}
	if res, _ := svc.UpdateJob(as(1000), sel, map[string]string{"TimeLimit": "60"}); res[0].Error != "Access/permission denied" {
		t.Errorf("user raising own limit: %q", res[0].Error)
	}
	if _, err := svc.UpdateJob(as(1000), sel, map[string]string{"Bogus": "1"}); err == nil {
		t.Error("unknown field accepted")
	}
	// A QOS nobody defined would leave every QOS limit behind.
	if _, err := svc.UpdateJob(as(1000), sel, map[string]string{"QOS": "nosuch"}); err == nil || !strings.Contains(err.Error(), "Invalid qos specification") {
		t.Errorf("update to an unknown QOS: %v", err)
	}
	if res, err := svc.UpdateJob(as(1000), sel, map[string]string{"QOS": "Normal"}); err != nil || res[0].Error != "" {
		t.Errorf("update to QOS normal: %v %v", err, res)
	}
	if err := svc.UpdateNodes(as(1000), []string{"n1"}, map[string]string{"State": "DRAIN", "Reason": "x"}); err == nil {
		t.Error("user drained a node")
	}
	if err := svc.UpdateNodes(as(0), []string{"n[1-2]"}, map[string]string{"State": "DRAIN"}); err == nil || !strings.Contains(err.Error(), "reason") {
		t.Errorf("drain without reason: %v", err)
	}
	if err := svc.UpdateNodes(as(0), []string{"n[1-2]"}, map[string]string{"State": "DRAIN", "Reason": "maint"}); err != nil {
		t.Fatal(err)
	}
	nodes, _ := svc.ListNodes(as(0))
	for _, n := range nodes {
		if !n.Drain || n.Reason != "maint" {
			t.Errorf("node %s not drained: %+v", n.Name, n)
		}
	}
}

func TestNodeListsAreExpanded(t *testing.T) {
	svc, _, _ := setup(t)
	s := spec()
	s.ReqNodes = []string{"n[1-2]"}
	s.MinNodes = 2
	id, err := svc.SubmitJob(as(1000), s)
	if err != nil {
		t.Fatal(err)
	}
	jobs, _, _ := listJobs(as(0), svc, []model.JobID{id}, false)
	if got := jobs[0].Spec.ReqNodes; len(got) != 2 || got[0] != "n1" || got[1] != "n2" {
		t.Errorf("ReqNodes %v", got)
	}
	bad := spec()
	bad.ExcNodes = []string{"n[1-9]"}
	if _, err := svc.SubmitJob(as(1000), bad); err == nil || err.Error() != "Invalid node name specified" {
		t.Errorf("unknown excluded node: %v", err)
	}
}

// listJobs is ListJobs with the ids and IncludeAll of the query.
func listJobs(ctx context.Context, svc *Service, ids []model.JobID, all bool) ([]*model.Job, int64, error) {
	l, err := svc.ListJobs(ctx, api.JobQuery{IDs: ids, IncludeAll: all})
	if err != nil {
		return nil, 0, err
	}
	return l.Jobs, l.Now, nil
}

// A held submission asks for no scheduling pass: nothing can start it
// before its release, which asks for one; any other submission does.
func TestHeldSubmissionAsksNoPass(t *testing.T) {
	svc, _, n := setup(t)
	held := spec()
	held.Hold = true
	id, err := svc.SubmitJob(as(1000), held)
	if err != nil {
		t.Fatal(err)
	}
	if n.kicks != 0 {
		t.Fatalf("a held submission asked for %d passes, want none", n.kicks)
	}
	release := api.JobSelection{UID: -1, Targets: []api.JobTarget{{ID: id}}}
	if res, err := svc.Control(as(1000), release, "release"); err != nil || res[0].Error != "" {
		t.Fatalf("release: %v %v", res, err)
	}
	if n.kicks != 1 {
		t.Fatalf("the release asked for %d passes, want 1", n.kicks)
	}
	if _, err := svc.SubmitJob(as(1000), spec()); err != nil {
		t.Fatal(err)
	}
	if n.kicks != 2 {
		t.Fatalf("a submission to run asked for %d passes in all, want 2", n.kicks)
	}
}

// The partition's nodes and feasibility cluster kept between submissions
// follow a node that changed.
func TestFeasibilityFollowsNodeChanges(t *testing.T) {
	svc, d, _ := setup(t)
	wide := func() *model.JobSpec {
		s := spec()
		s.CPUsPerTask = 8
		return s
	}
	if _, err := svc.SubmitJob(as(1000), wide()); err == nil || !strings.Contains(err.Error(), "Requested node configuration is not available") {
		t.Fatalf("8 CPUs a task on 4-CPU nodes: %v", err)
	}
	// slurm.conf gives n1 8 CPUs (scontrol reconfigure), and it registers them.
	st := *svc.Settings()
	n1 := *st.Nodes[0]
	n1.CPUs = 8
	st.Nodes = []*model.Node{&n1, st.Nodes[1]}
	if err := svc.InstallConfig(&st); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Apply(fsm.TypeNodeRegister, &fsm.NodeRegister{Node: "n1", CPUs: 8, Memory: 8000, Now: 1001}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.SubmitJob(as(1000), wide()); err != nil {
		t.Fatalf("after n1 got 8 CPUs: %v", err)
	}
}

// TestWatchNamesFewJobs: every commit wakes every watch, which looks up
// each job it names: a watch names each job once (a job named again and
// again costs one lookup) and at most maxWatchIDs jobs, past which it is
// refused. The commands watch one job.
func TestWatchNamesFewJobs(t *testing.T) {
	svc, _, _ := setup(t)
	ctx := as(1000)
	id, err := svc.SubmitJob(ctx, spec())
	if err != nil {
		t.Fatal(err)
	}
	many := make([]model.JobID, 100000)
	for i := range many {
		many[i] = id
	}
	var got []*model.Job
	if err := svc.WatchJobs(ctx, many, func(jobs []*model.Job) bool { got = jobs; return false }); err != nil || len(got) != 1 {
		t.Fatalf("one job named 100,000 times: %v, %d jobs", err, len(got))
	}
	distinct := make([]model.JobID, maxWatchIDs+1)
	for i := range distinct {
		distinct[i] = id + model.JobID(i)
	}
	err = svc.WatchJobs(ctx, distinct, func([]*model.Job) bool { return false })
	var ae *api.Error
	if !errors.As(err, &ae) || !strings.Contains(ae.Msg, "Invalid job id specified") {
		t.Fatalf("a watch of %d jobs: %v, want Invalid job id specified", len(distinct), err)
	}
	if err := svc.WatchJobs(ctx, distinct[:maxWatchIDs], func([]*model.Job) bool { return false }); err != nil {
		t.Errorf("a watch of %d jobs: %v", maxWatchIDs, err)
	}
}
