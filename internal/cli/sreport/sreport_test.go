package sreport

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/drover-hpc/drover/internal/acct"
	"github.com/drover-hpc/drover/internal/acctmgr"
	"github.com/drover-hpc/drover/internal/cli"
	"github.com/drover-hpc/drover/internal/cli/clitest"
	"github.com/drover-hpc/drover/internal/model"
)

type fake struct {
	clitest.Unimplemented
	jobs []*acct.Job
	db   *model.AcctDB
	q    acct.Query
}

func (f *fake) AcctJobs(_ context.Context, q acct.Query) ([]*acct.Job, error) {
	f.q = q
	return f.jobs, nil
}
func (f *fake) AcctDB(context.Context) (*model.AcctDB, error) { return f.db, nil }
func (f *fake) ListNodes(context.Context) ([]*model.Node, error) {
	return []*model.Node{{Name: "n1", CPUs: 4, Gres: "gpu:2"}, {Name: "n2", CPUs: 4}}, nil
}

var day = time.Date(2026, 11, 21, 0, 0, 0, 0, time.Local)

func setup(t *testing.T) *fake {
	db := acctmgr.Init("spice")
	for _, words := range [][]string{{"account", "lab"}, {"account", "sub", "parent=lab"}} {
		req := &acctmgr.Request{Verb: acctmgr.VerbAdd, Entity: words[0]}
		for _, w := range words[1:] {
			req.Set = append(req.Set, acctmgr.SplitOption(w))
		}
		next, _, err := acctmgr.Apply(db, req, "spice")
		if err != nil || next == nil {
			t.Fatal(err)
		}
		db = next
	}
	h := func(n int) int64 { return day.Add(time.Duration(n) * time.Hour).Unix() }
	return &fake{db: db, jobs: []*acct.Job{
		// 2 CPUs for 6 hours, 1 GPU.
		{Cluster: "spice", JobID: 1, User: "alice", Account: "lab", NCPUs: 2, AllocTRES: "billing=2,cpu=2,gres/gpu=1,mem=1G,node=1", Start: h(2), End: h(8)},
		// 4 CPUs, started the day before: 3 hours count.
		{Cluster: "spice", JobID: 2, User: "bob", Account: "sub", NCPUs: 4, AllocTRES: "cpu=4,node=1", Start: h(-5), End: h(3)},
		// Never ran.
		{Cluster: "spice", JobID: 3, User: "bob", Account: "sub", NCPUs: 100, End: h(1)},
	}}
}

func run(f *fake, args ...string) (string, string, int) {
	var out, errb bytes.Buffer
	env := &cli.Env{Prog: "sreport", Stdout: &out, Stderr: &errb, Version: "22.05.8",
		Now:  func() time.Time { return day.Add(36 * time.Hour) },
		Dial: func() (cli.Client, error) { return f, nil }}
	code := Run(context.Background(), env, args)
	return out.String(), errb.String(), code
}

func TestClusterUtilization(t *testing.T) {
	f := setup(t)
	out, errOut, code := run(f, "cluster", "utilization")
	// Capacity 8 CPUs x 1440 min = 11520; used 2x360 + 4x180 = 1440.
	want := strings.Repeat("-", 80) + "\n" +
		"Cluster Utilization 2026-11-21T00:00:00 - 2026-11-21T23:59:59\n" +
		"Usage reported in CPU Minutes\n" +
		strings.Repeat("-", 80) + "\n" +
		"  Cluster     Allocated      Down PLND Down          Idle   Planned      Reported \n" +
		"--------- ------------- --------- --------- ------------- --------- ------------- \n" +
		"    spice          1440         0         0         10080         0         11520 \n"
	if code != 0 || errOut != "" || out != want {
		t.Errorf("exit %d %q\n%s\nwant:\n%s", code, errOut, out, want)
	}
	if f.q.Start != day.Unix() || f.q.End != day.Add(24*time.Hour).Unix()-1 {
		t.Errorf("window %d-%d", f.q.Start, f.q.End)
	}
	out, _, _ = run(f, "-nP", "-t", "percent", "cluster", "utilization", "start=2026-11-21", "end=2026-11-22")
	if out != "spice|12.50%|0.00%|0.00%|87.50%|0.00%|100.00%\n" {
		t.Errorf("-t percent: %q", out)
	}
	out, _, _ = run(f, "-nP", "--tres=gres/gpu", "-t", "hours", "cluster", "utilization")
	if out != "spice|gres/gpu|6|0|0|42|0|48\n" {
		t.Errorf("--tres=gres/gpu: %q", out)
	}
}

func TestAccountReports(t *testing.T) {
	f := setup(t)
	out, _, _ := run(f, "-nP", "cluster", "AccountUtilizationByUser")
	want := "spice|root|||1440|0\n" +
		"spice| lab|||1440|0\n" +
		"spice|  lab|alice||720|0\n" +
		"spice|  sub|||720|0\n" +
		"spice|   sub|bob||720|0\n"
	if out != want {
		t.Errorf("AccountUtilizationByUser:\n%s\nwant:\n%s", out, want)
	}
	out, _, _ = run(f, "-nP", "user", "TopUsage", "TopCount=1")
	if out != "spice|alice||lab|720|0\n" {
		t.Errorf("TopUsage: %q", out)
	}
	out, _, _ = run(f, "-P", "job", "SizesByAccount", "Grouping=4")
	want = "Cluster|Account|0-3 CPUs|>= 4 CPUs|% of cluster\nspice|lab|720|720|100.00%\n"
	if out != want {
		t.Errorf("SizesByAccount:\n%s\nwant:\n%s", out, want)
	}
}

func TestErrors(t *testing.T) {
	f := setup(t)
	for _, args := range [][]string{{"cluster"}, {"cluster", "nosuch"}, {"-t", "fortnights", "cluster", "utilization"},
		{"cluster", "utilization", "start=garbage"}, {"cluster", "utilization", "bogus"}, {"--frob"}} {
		if _, errOut, code := run(f, args...); code != 1 || errOut == "" {
			t.Errorf("%v: exit %d %q", args, code, errOut)
		}
	}
}
