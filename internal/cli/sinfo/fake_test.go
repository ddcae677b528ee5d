package sinfo

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/user"
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

// testHost names root and slurm only.
var testHost = &cli.Host{LookupUserID: func(uid string) (*user.User, error) {
	switch uid {
	case "0":
		return &user.User{Uid: uid, Username: "root"}, nil
	case "64030":
		return &user.User{Uid: uid, Username: "slurm"}, nil
	}
	return nil, errors.New("unknown user")
}}

// fakeClient serves fixed partitions and nodes.
type fakeClient struct {
	clitest.Unimplemented
	parts    []*model.Partition
	nodes    []*model.Node
	partErr  error
	nodeErr  error
	listings int
	resvs    []*model.Reservation
	now      int64
}

func (f *fakeClient) ListReservations(context.Context) ([]*model.Reservation, int64, error) {
	return f.resvs, f.now, nil
}

var _ cli.Client = (*fakeClient)(nil)

func (f *fakeClient) ListPartitions(context.Context) ([]*model.Partition, error) {
	f.listings++
	return f.parts, f.partErr
}

func (f *fakeClient) ListNodes(context.Context) ([]*model.Node, error) { return f.nodes, f.nodeErr }

// refNow is the moment of sinfo_N_l.txt: Sun Nov 22 05:10:14 2026.
var refNow = time.Date(2026, 11, 22, 5, 10, 14, 0, time.UTC)

func runSinfo(t testing.TB, client cli.Client, environ []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	env := &cli.Env{
		Host: testHost, Prog: "sinfo", Stdout: &out, Stderr: &errb, Environ: environ,
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
