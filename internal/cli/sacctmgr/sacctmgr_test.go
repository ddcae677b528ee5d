package sacctmgr

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/drover-hpc/drover/internal/acctmgr"
	"github.com/drover-hpc/drover/internal/cli"
	"github.com/drover-hpc/drover/internal/cli/clitest"
	"github.com/drover-hpc/drover/internal/model"
)

// fake keeps the configuration as the controller would: Apply on
// commit, a description only otherwise.
type fake struct {
	clitest.Unimplemented
	db      *model.AcctDB
	commits int
}

func (f *fake) AcctDB(context.Context) (*model.AcctDB, error) { return f.db, nil }

func (f *fake) AcctModify(_ context.Context, req *acctmgr.Request, commit bool) (string, error) {
	next, text, err := acctmgr.Apply(f.db, req, "spice")
	if err != nil {
		return text, err
	}
	if commit && next != nil {
		f.db = next
		f.commits++
	}
	return text, nil
}

func (f *fake) Config(context.Context) ([]cli.KV, error) {
	return []cli.KV{{Key: "ClusterName", Value: "spice"}, {Key: "SlurmctldHost[0]", Value: "ctl(127.0.0.1)"},
		{Key: "SlurmctldPort", Value: "6817"}}, nil
}

func run(f *fake, stdin string, args ...string) (string, string, int) {
	var out, errb bytes.Buffer
	env := &cli.Env{Prog: "sacctmgr", Stdout: &out, Stderr: &errb, Stdin: strings.NewReader(stdin),
		Now: time.Now, Version: "22.05.8", Dial: func() (cli.Client, error) { return f, nil }}
	code := Run(context.Background(), env, args)
	return out.String(), errb.String(), code
}

func TestImmediate(t *testing.T) {
	f := &fake{db: acctmgr.Init("spice")}
	for _, args := range [][]string{
		{"-i", "add", "account", "test", "Description=test", "Organization=LRI"},
		{"-i", "add", "user", "diviyan", "Account=test"},
		{"-i", "create", "qos", "default", "MaxTresPerUser=gres/gpu=4"},
		{"-i", "modify", "user", "where", "name=diviyan", "set", "qos=default", "defaultqos=default"},
	} {
		out, errOut, code := run(f, "", args...)
		if code != 0 || errOut != "" || out == "" {
			t.Fatalf("sacctmgr %v: %d %q %q", args, code, out, errOut)
		}
	}
	if f.commits != 4 {
		t.Errorf("%d commits, want 4", f.commits)
	}
	out, _, code := run(f, "", "-nP", "show", "assoc", "format=account,user,qos", "where", "user=diviyan")
	if code != 0 || out != "test|diviyan|default\n" {
		t.Errorf("show assoc: %d %q", code, out)
	}
	out, _, code = run(f, "", "list", "qos", "format=name%10,maxtrespu%15", "-P")
	if code != 0 || out != "Name|MaxTRESPU\nnormal|\ndefault|gres/gpu=4\n" {
		t.Errorf("list qos: %d %q", code, out)
	}
}

func TestConfirm(t *testing.T) {
	f := &fake{db: acctmgr.Init("spice")}
	out, _, code := run(f, "n\n", "add", "account", "a1")
	if code != 0 || !strings.Contains(out, "Would you like to commit changes?") || !strings.Contains(out, "Changes Discarded") {
		t.Errorf("declined: %d %q", code, out)
	}
	if f.commits != 0 {
		t.Fatal("committed a declined change")
	}
	if _, _, code = run(f, "y\n", "add", "account", "a1"); code != 0 || f.commits != 1 || f.db.Accounts["a1"] == nil {
		t.Errorf("accepted: %d commits=%d", code, f.commits)
	}
}

func TestErrors(t *testing.T) {
	f := &fake{db: acctmgr.Init("spice")}
	if _, errOut, code := run(f, "", "--bogus"); code != 1 || !strings.Contains(errOut, "unrecognized option '--bogus'") {
		t.Errorf("bad option: %d %q", code, errOut)
	}
	if _, errOut, code := run(f, "", "frobnicate"); code == 0 || !strings.Contains(errOut, "invalid keyword: frobnicate") {
		t.Errorf("bad keyword: %d %q", code, errOut)
	}
	if _, _, code := run(f, "", "-i", "add", "user", "bob", "Account=nosuch"); code == 0 {
		t.Error("adding a user to a missing account succeeded")
	}
	if f.commits != 0 {
		t.Error("a failed command committed")
	}
}

func TestInteractive(t *testing.T) {
	f := &fake{db: acctmgr.Init("spice")}
	out, _, code := run(f, "add account a2\ny\nlist account format=account -n -P\nexit\n")
	if code != 0 || f.db.Accounts["a2"] == nil {
		t.Fatalf("interactive: %d %q", code, out)
	}
}
