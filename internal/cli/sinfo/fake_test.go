package sinfo

import (
	"bytes"
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/drover-hpc/drover/internal/cli"
	"github.com/drover-hpc/drover/internal/model"
)

func TestMain(m *testing.M) {
	time.Local = time.UTC // timestamps in goldens are UTC
	lookupUserName = func(uid uint32) (string, bool) {
		switch uid {
		case 0:
			return "root", true
		case 64030:
			return "slurm", true
		}
		return "", false
	}
	os.Exit(m.Run())
}

var errNotImplemented = errors.New("not implemented by the fake")

// fakeClient serves fixed partitions and nodes.
type fakeClient struct {
	parts    []*model.Partition
	nodes    []*model.Node
	partErr  error
	nodeErr  error
	listings int
}

var _ cli.Client = (*fakeClient)(nil)

func (f *fakeClient) ListPartitions(context.Context) ([]*model.Partition, error) {
	f.listings++
	return f.parts, f.partErr
}

func (f *fakeClient) ListNodes(context.Context) ([]*model.Node, error) { return f.nodes, f.nodeErr }

func (f *fakeClient) SubmitJob(context.Context, *model.JobSpec) (model.JobID, error) {
	return 0, errNotImplemented
}
func (f *fakeClient) ListJobs(context.Context, cli.JobQuery) (*cli.JobList, error) {
	return nil, errNotImplemented
}
func (f *fakeClient) WatchJobs(context.Context, []model.JobID, func([]*model.Job) bool) error {
	return errNotImplemented
}
func (f *fakeClient) Signal(context.Context, cli.JobSelection, cli.SignalRequest) ([]cli.JobResult, error) {
	return nil, errNotImplemented
}
func (f *fakeClient) Control(context.Context, cli.JobSelection, string) ([]cli.JobResult, error) {
	return nil, errNotImplemented
}
func (f *fakeClient) UpdateJob(context.Context, cli.JobSelection, map[string]string) ([]cli.JobResult, error) {
	return nil, errNotImplemented
}
func (f *fakeClient) UpdateNodes(context.Context, []string, map[string]string) error {
	return errNotImplemented
}
func (f *fakeClient) Ping(context.Context) (*cli.PingResult, error) { return nil, errNotImplemented }
func (f *fakeClient) Config(context.Context) ([]cli.KV, error)      { return nil, errNotImplemented }
func (f *fakeClient) Reconfigure(context.Context) error             { return errNotImplemented }
func (f *fakeClient) Close() error                                  { return nil }

// refNow is the moment of sinfo_N_l.txt: Sun Nov 22 05:10:14 2026.
var refNow = time.Date(2026, 11, 22, 5, 10, 14, 0, time.UTC)

func runSinfo(t testing.TB, client cli.Client, environ []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	env := &cli.Env{
		Prog: "sinfo", Stdout: &out, Stderr: &errb, Environ: environ,
		Now: func() time.Time { return refNow }, Version: "22.05.8",
		Dial: func() (cli.Client, error) {
			if client == nil {
				return nil, cli.ErrNoController
			}
			return client, nil
		},
	}
	code = Run(context.Background(), env, args)
	return out.String(), errb.String(), code
}
