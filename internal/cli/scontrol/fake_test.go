package scontrol

import (
	"bytes"
	"context"
	"errors"
	"os/user"
	"strings"
	"testing"
	"time"

	"github.com/drover-hpc/drover/internal/cli"
	"github.com/drover-hpc/drover/internal/cli/clitest"
	"github.com/drover-hpc/drover/internal/model"
)

// fakeClient implements cli.Client over fixed data and records requests.
type fakeClient struct {
	clitest.Unimplemented
	jobs     []*model.Job
	now      int64
	nodes    []*model.Node
	parts    []*model.Partition
	config   []cli.KV
	ping     *cli.PingResult
	err      error             // returned by every call when set
	jobErrs  map[string]string // per-target errors for Control/UpdateJob
	nodesErr error

	controls []controlCall
	updates  []updateCall
	nodeUpd  []nodeUpdate
	reconfig int
	queries  []cli.JobQuery
}

type controlCall struct {
	sel    cli.JobSelection
	action string
}

type updateCall struct {
	sel    cli.JobSelection
	fields map[string]string
}

type nodeUpdate struct {
	nodes  []string
	fields map[string]string
}

func (f *fakeClient) SubmitJob(context.Context, *model.JobSpec) (model.JobID, error) {
	return 0, errors.New("unused")
}

func (f *fakeClient) ListJobs(_ context.Context, q cli.JobQuery) (*cli.JobList, error) {
	f.queries = append(f.queries, q)
	if f.err != nil {
		return nil, f.err
	}
	var out []*model.Job
	for _, j := range f.jobs {
		if len(q.IDs) == 0 || j.ID == q.IDs[0] || j.ArrayJobID == q.IDs[0] {
			out = append(out, j)
		}
	}
	return &cli.JobList{Jobs: out, Now: f.now}, nil
}

func (f *fakeClient) WatchJobs(context.Context, []model.JobID, func([]*model.Job) bool) error {
	return errors.New("unused")
}

func (f *fakeClient) ListNodes(context.Context) ([]*model.Node, error) { return f.nodes, f.err }

func (f *fakeClient) ListPartitions(context.Context) ([]*model.Partition, error) {
	return f.parts, f.err
}

func (f *fakeClient) Signal(context.Context, cli.JobSelection, cli.SignalRequest) ([]cli.JobResult, error) {
	return nil, errors.New("unused")
}

func (f *fakeClient) results(sel cli.JobSelection) []cli.JobResult {
	var out []cli.JobResult
	for _, t := range sel.Targets {
		out = append(out, cli.JobResult{Job: t.Raw, Error: f.jobErrs[t.Raw]})
	}
	if sel.Name != "" {
		out = append(out, cli.JobResult{Job: "77", Error: f.jobErrs[sel.Name]})
	}
	return out
}

func (f *fakeClient) Control(_ context.Context, sel cli.JobSelection, action string) ([]cli.JobResult, error) {
	f.controls = append(f.controls, controlCall{sel, action})
	if f.err != nil {
		return nil, f.err
	}
	return f.results(sel), nil
}

func (f *fakeClient) UpdateJob(_ context.Context, sel cli.JobSelection, fields map[string]string) ([]cli.JobResult, error) {
	f.updates = append(f.updates, updateCall{sel, fields})
	if f.err != nil {
		return nil, f.err
	}
	return f.results(sel), nil
}

func (f *fakeClient) UpdateNodes(_ context.Context, nodes []string, fields map[string]string) error {
	f.nodeUpd = append(f.nodeUpd, nodeUpdate{nodes, fields})
	return f.nodesErr
}

func (f *fakeClient) Ping(context.Context) (*cli.PingResult, error) {
	if f.err != nil {
		return nil, f.err
	}
	return f.ping, nil
}

func (f *fakeClient) Config(context.Context) ([]cli.KV, error) { return f.config, f.err }

func (f *fakeClient) Reconfigure(context.Context) error {
	f.reconfig++
	return f.err
}

func (f *fakeClient) Close() error { return nil }

// testNow is the clock every test runs at: 2026-11-22T05:10:14 UTC.
var testNow = time.Date(2026, 11, 22, 5, 10, 14, 0, time.UTC)

type result struct {
	code           int
	stdout, stderr string
	dialled        bool
}

// run runs scontrol against fc (nil = no controller reachable).
func run(t *testing.T, fc *fakeClient, environ []string, args ...string) result {
	t.Helper()
	return runIn(t, fc, environ, "", args...)
}

func runIn(t *testing.T, fc *fakeClient, environ []string, stdin string, args ...string) result {
	t.Helper()
	return runOn(t, testHost(1000), fc, environ, stdin, args...)
}

// runOn runs scontrol on host.
func runOn(t *testing.T, host *cli.Host, fc *fakeClient, environ []string, stdin string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	dialled := false
	env := &cli.Env{
		Host: host, Prog: "scontrol", Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb,
		Environ: environ, Now: func() time.Time { return testNow }, Version: "22.05.8",
		Dial: func() (cli.Client, error) {
			dialled = true
			if fc == nil {
				return nil, cli.ErrNoController
			}
			return fc, nil
		},
	}
	code := Run(context.Background(), env, args)
	return result{code, out.String(), errb.String(), dialled}
}

func init() {
	time.Local = time.UTC
}

// testHost is a host where the caller is uid and only root has a name.
func testHost(uid int) *cli.Host {
	return &cli.Host{
		Getuid: func() int { return uid },
		LookupUserID: func(id string) (*user.User, error) {
			if id == "0" {
				return &user.User{Uid: "0", Username: "root"}, nil
			}
			return nil, errors.New("unknown")
		},
		LookupGroupID: func(id string) (*user.Group, error) {
			if id == "0" {
				return &user.Group{Gid: "0", Name: "root"}, nil
			}
			return nil, errors.New("unknown")
		},
	}
}

func ts(s string) int64 {
	t, err := time.Parse("2006-01-02T15:04:05", s)
	if err != nil {
		panic(err)
	}
	return t.Unix()
}
