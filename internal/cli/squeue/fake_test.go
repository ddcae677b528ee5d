package squeue

import (
	"bytes"
	"context"
	"io"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/drover-hpc/drover/internal/cli"
	"github.com/drover-hpc/drover/internal/cli/clitest"
	"github.com/drover-hpc/drover/internal/model"
)

func TestMain(m *testing.M) {
	time.Local = time.UTC // timestamps in goldens are UTC
	os.Exit(m.Run())
}

// fakeClient serves a fixed job list and records the queries it gets.
type fakeClient struct {
	clitest.Unimplemented
	jobs    []*model.Job
	now     int64
	err     error
	queries []cli.JobQuery
}

var _ cli.Client = (*fakeClient)(nil)

func (f *fakeClient) ListJobs(_ context.Context, q cli.JobQuery) (*cli.JobList, error) {
	f.queries = append(f.queries, q)
	if f.err != nil {
		return nil, f.err
	}
	out := &cli.JobList{Now: f.now}
	for _, j := range f.jobs {
		if len(q.IDs) > 0 && !slices.Contains(q.IDs, j.ID) && !slices.Contains(q.IDs, j.ArrayJobID) {
			continue
		}
		if !q.IncludeAll && j.Finished() {
			continue
		}
		out.Jobs = append(out.Jobs, j)
	}
	return out, nil
}

// refNow is the moment of the reference outputs: Sun Nov 22 05:10:05 2026.
var refNow = time.Date(2026, 11, 22, 5, 10, 5, 0, time.UTC)

// runSqueue runs squeue against client with extra environment variables.
func runSqueue(t testing.TB, client cli.Client, environ []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return runSqueueOn(t, nil, client, environ, args...)
}

// runSqueueOn runs squeue on a faked host (nil: the real one).
func runSqueueOn(t testing.TB, host *cli.Host, client cli.Client, environ []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	env := &cli.Env{Host: host,
		Prog: "squeue", Stdin: bytes.NewReader(nil), Stdout: &out, Stderr: &errb,
		Environ: environ, Now: func() time.Time { return refNow }, Version: "22.05.8",
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

// discardEnv is an Env writing nowhere, for benchmarks.
func discardEnv(client cli.Client) *cli.Env {
	return &cli.Env{
		Prog: "squeue", Stdout: io.Discard, Stderr: io.Discard,
		Now:  func() time.Time { return refNow },
		Dial: func() (cli.Client, error) { return client, nil },
	}
}
