package sreport

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/user"
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
	err  error
}

func (f *fake) AcctJobs(_ context.Context, q acct.Query, fn func([]*acct.Job) error) error {
	f.q = q
	if f.err != nil {
		return f.err
	}
	var out []*acct.Job
	for _, j := range f.jobs {
		if len(q.Clusters) == 0 && j.Cluster != "spice" {
			continue
		}
		out = append(out, j)
	}
	return fn(out)
}
func (f *fake) AcctDB(context.Context) (*model.AcctDB, error) { return f.db, nil }
func (f *fake) ListNodes(context.Context) ([]*model.Node, error) {
	return []*model.Node{{Name: "n1", CPUs: 4, Memory: 8000, Gres: "gpu:2"}, {Name: "n2", CPUs: 4, Memory: 8000}}, nil
}
func (f *fake) Config(context.Context) ([]cli.KV, error) {
	return []cli.KV{{Key: "ClusterName", Value: "spice"}}, nil
}

// testHost knows the full names of alice and carol.
var testHost = &cli.Host{LookupUser: func(login string) (*user.User, error) {
	if name, ok := map[string]string{"alice": "Alice Liddell", "carol": "Carol Danvers Longname"}[login]; ok {
		return &user.User{Username: login, Name: name}, nil
	}
	return nil, errors.New("unknown user")
}}

// day is the report period by default: now is noon the next day.
var day = time.Date(2026, 11, 21, 0, 0, 0, 0, time.Local)

func h(n int) int64 { return day.Add(time.Duration(n) * time.Hour).Unix() }

func setup(t *testing.T) *fake {
	t.Helper()
	db := acctmgr.Init("spice")
	for _, words := range [][]string{{"account", "lab"}, {"account", "sub", "parent=lab"}, {"account", "phys"}} {
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
	return &fake{db: db, jobs: []*acct.Job{
		// 2 CPUs and a GPU for 6 hours: 720 CPU minutes.
		{Cluster: "spice", JobID: 1, User: "alice", Account: "lab", NCPUs: 2, AllocTRES: "billing=2,cpu=2,gres/gpu=1,mem=1G,node=1", Start: h(2), End: h(8)},
		// 4 CPUs from the day before: 3 hours count, 720 minutes.
		{Cluster: "spice", JobID: 2, User: "bob", Account: "sub", NCPUs: 4, AllocTRES: "cpu=4,mem=400M,node=1", Start: h(-5), End: h(3)},
		// Never ran.
		{Cluster: "spice", JobID: 3, User: "bob", Account: "sub", NCPUs: 100, End: h(1)},
		// Still running: 14 hours to the end of the period, 840 minutes.
		{Cluster: "spice", JobID: 4, User: "carol", Account: "phys", NCPUs: 1, AllocTRES: "cpu=1,node=1", Start: h(10)},
		// root in root for an hour.
		{Cluster: "spice", JobID: 5, User: "root", Account: "root", NCPUs: 1, AllocTRES: "cpu=1,node=1", Start: h(0), End: h(1)},
		// After the period.
		{Cluster: "spice", JobID: 6, User: "alice", Account: "lab", NCPUs: 8, AllocTRES: "cpu=8", Start: h(25), End: h(26)},
		// Another cluster's, seen with -a: 240 minutes.
		{Cluster: "other", JobID: 7, User: "dave", Account: "lab", NCPUs: 2, AllocTRES: "cpu=2", Start: h(0), End: h(2)},
	}}
}

func runIn(f *fake, stdin string, args ...string) (string, string, int) {
	var out, errb bytes.Buffer
	env := &cli.Env{Host: testHost, Prog: "sreport", Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb, Version: "22.05.8",
		Now:  func() time.Time { return day.Add(36 * time.Hour) },
		Dial: func() (cli.Client, error) { return f, nil }}
	code := Run(context.Background(), env, args)
	return out.String(), errb.String(), code
}

func run(f *fake, args ...string) (string, string, int) { return runIn(f, "", args...) }

// head is the banner above a report.
func head(title, unit string) string {
	d := strings.Repeat("-", 80) + "\n"
	return d + title + "\n" + unit + "\n" + d
}

const (
	pd       = "2026-11-21T00:00:00 - 2026-11-21T23:59:59"
	pdS      = pd + " (86400 secs)"
	cpuMins  = "Usage reported in CPU Minutes"
	utilHead = "  Cluster Allocate     Down PLND Dow     Idle  Planned Reported \n" +
		"--------- -------- -------- -------- -------- -------- -------- \n"
	auHead = "  Cluster         Account     Login     Proper Name     Used   Energy \n" +
		"--------- --------------- --------- --------------- -------- -------- \n"
	uaHead = "  Cluster     Login     Proper Name         Account     Used   Energy \n" +
		"--------- --------- --------------- --------------- -------- -------- \n"
)

func TestReports(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"utilization", []string{"cluster", "utilization"}, head("Cluster Utilization "+pd, cpuMins) + utilHead +
			"    spice     2340        0        0     9180        0    11520 \n"},
		{"utilization percent parsable2", []string{"-P", "-t", "percent", "cluster", "Ut"},
			head("Cluster Utilization "+pd, "Usage reported in Percentage of Total") +
				"Cluster|Allocated|Down|PLND Down|Idle|Planned|Reported\n" +
				"spice|20.31%|0.00%|0.00%|79.69%|0.00%|100.00%\n"},
		{"utilization hours gpu", []string{"-nP", "--tres=gres/gpu", "-t", "hours", "cluster", "utilization"},
			"spice|gres/gpu|6|0|0|42|0|48\n"},
		{"utilization hourper cpu and gpu", []string{"--tres=cpu,gres/gpu", "-t", "hourper", "cluster", "utilization"},
			head("Cluster Utilization "+pd, "Usage reported in TRES Hours/Percentage of Total") +
				"  Cluster      TRES Name         Allocated              Down         PLND Down              Idle           Planned          Reported \n" +
				"--------- -------------- ----------------- ----------------- ----------------- ----------------- ----------------- ----------------- \n" +
				"    spice            cpu        39(20.31%)          0(0.00%)          0(0.00%)       153(79.69%)          0(0.00%)      192(100.00%) \n" +
				"    spice       gres/gpu         6(12.50%)          0(0.00%)          0(0.00%)        42(87.50%)          0(0.00%)       48(100.00%) \n"},
		{"utilization all clusters", []string{"-n", "-a", "cluster", "utilization"},
			"    other      240        0        0        0        0      240 \n" +
				"    spice     2340        0        0     9180        0    11520 \n"},
		{"utilization format", []string{"-p", "-n", "-t", "s", "cluster", "utilization", "format=cl,count,rep,al"},
			"spice|8|691200|140400|\n"},
		{"unknown cluster", []string{"-n", "cluster", "utilization", "nosuch"}, ""},
		{"account by user", []string{"cluster", "AccountUtilizationByUser"},
			head("Cluster/Account/User Utilization "+pdS, cpuMins) + auHead +
				"    spice            root                               2340        0 \n" +
				"    spice            root      root                       60        0 \n" +
				"    spice             lab                               1440        0 \n" +
				"    spice             lab     alice   Alice Liddell      720        0 \n" +
				"    spice             sub                                720        0 \n" +
				"    spice             sub       bob                      720        0 \n" +
				"    spice            phys                                840        0 \n" +
				"    spice            phys     carol Carol Danvers +      840        0 \n"},
		{"account by user tree", []string{"-n", "cluster", "a", "tree"},
			"    spice root                                               2340        0 \n" +
				"    spice  root                     root                       60        0 \n" +
				"    spice  lab                                               1440        0 \n" +
				"    spice   lab                    alice   Alice Liddell      720        0 \n" +
				"    spice   sub                                               720        0 \n" +
				"    spice    sub                     bob                      720        0 \n" +
				"    spice  phys                                               840        0 \n" +
				"    spice   phys                   carol Carol Danvers +      840        0 \n"},
		{"account by user gpu", []string{"-nP", "-T", "gres/gpu", "cluster", "AccountUtilizationByUser", "accounts=lab"},
			"spice|lab|||gres/gpu|360\nspice|lab|alice|Alice Liddell|gres/gpu|360\nspice|sub|||gres/gpu|0\nspice|sub|bob||gres/gpu|0\n"},
		{"account by user users", []string{"-nP", "-t", "percent", "cluster", "AccountUtilizationByUser", "users=bob,carol"},
			"spice|sub|bob||6.25%|0.00%\nspice|phys|carol|Carol Danvers Longname|7.29%|0.00%\n"},
		{"user by account", []string{"cluster", "UserUtilizationByAccount"},
			head("Cluster/User/Account Utilization "+pdS, cpuMins) + uaHead +
				"    spice     carol Carol Danvers +            phys      840        0 \n" +
				"    spice     alice   Alice Liddell             lab      720        0 \n" +
				"    spice       bob                             sub      720        0 \n" +
				"    spice      root                            root       60        0 \n"},
		{"user by account by name", []string{"-nP", "-s", "name", "cluster", "ua", "accounts=lab,sub"},
			"spice|alice|Alice Liddell|lab|720|0\nspice|bob||sub|720|0\n"},
		{"top usage", []string{"user", "TopUsage"},
			head("Top 10 Users "+pdS, cpuMins) + uaHead +
				"    spice     carol Carol Danvers +            phys      840        0 \n" +
				"    spice     alice   Alice Liddell             lab      720        0 \n" +
				"    spice       bob                             sub      720        0 \n" +
				"    spice      root                            root       60        0 \n"},
		{"top usage format", []string{"-t", "hours", "user", "top", "topcount=2", "format=login,proper%-10,used"},
			head("Top 2 Users "+pdS, "Usage reported in CPU Hours") +
				"    Login Proper Nam     Used \n--------- ---------- -------- \n" +
				"    carol Carol Dan+       14 \n    alice Alice Lid+       12 \n"},
		{"top usage parsable gpu", []string{"-p", "-n", "--tres=gres/gpu", "user", "top"},
			"spice|alice|Alice Liddell|lab|gres/gpu|360|\nspice|bob||sub|gres/gpu|0|\nspice|carol|Carol Danvers Longname|phys|gres/gpu|0|\nspice|root||root|gres/gpu|0|\n"},
		{"top usage group", []string{"-nP", "-a", "user", "top", "group", "users=alice,dave"},
			"other|dave||lab|240|0\nspice|alice|Alice Liddell|lab|720|0\n"},
		{"job sizes", []string{"job", "SizesByAccount"},
			head("Job Sizes "+pdS, "Time reported in Minutes") +
				"  Cluster   Account     0-49 CPUs   50-249 CPUs  250-499 CPUs  500-999 CPUs  >= 1000 CPUs % of cluster \n" +
				"--------- --------- ------------- ------------- ------------- ------------- ------------- ------------ \n" +
				"    spice      root          2340             0             0             0             0      100.00% \n"},
		{"job sizes grouping", []string{"-n", "job", "sizes", "grouping=2,4"},
			"    spice      root           900           720           720      100.00% \n"},
		{"job sizes flat", []string{"-nP", "job", "sizes", "flatview"},
			"spice|lab|720|0|0|0|0|30.77%\nspice|phys|840|0|0|0|0|35.90%\nspice|root|60|0|0|0|0|2.56%\nspice|sub|720|0|0|0|0|30.77%\n"},
		{"job sizes parents percent", []string{"-nP", "-t", "percent", "job", "sizes", "acctasparent", "grouping=2"},
			"spice|lab|0.00%|100.00%|63.16%\nspice|phys|100.00%|0.00%|36.84%\n"},
		{"job sizes accounts", []string{"-nP", "job", "sizes", "accounts=sub,phys", "grouping=individual"},
			"spice|phys|840|0|0|53.85%\nspice|sub|0|0|720|46.15%\n"},
		{"job sizes gpu count", []string{"-P", "-T", "gres/gpu", "job", "sizes", "printjobcount"},
			strings.Repeat("-", 80) + "\nJob Sizes " + pdS + "\nTRES type is gres/gpu\nUnits are in number of jobs ran\n" +
				strings.Repeat("-", 80) + "\nCluster|Account|0-49 TRES|50-249 TRES|250-499 TRES|500-999 TRES|>= 1000 TRES|% of cluster\n" +
				"spice|root|1|0|0|0|0|100.00%\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := run(setup(t), tc.args...)
			if code != 0 || errOut != "" || out != tc.want {
				t.Errorf("sreport %v: exit %d %q\n%s\nwant:\n%s", tc.args, code, errOut, out, tc.want)
			}
		})
	}
}

func TestWindow(t *testing.T) {
	f := setup(t)
	run(f, "cluster", "utilization")
	if f.q.Start != day.Unix() || f.q.End != day.Add(24*time.Hour).Unix() || !f.q.NoSteps || len(f.q.Clusters) != 0 {
		t.Errorf("default query %+v", f.q)
	}
	// An end after now is now; a partial overlap counts its part.
	out, _, _ := run(f, "-nP", "-t", "seconds", "-M", "spice", "cluster", "utilization", "start=2026-11-22T10:00", "end=now+1hour")
	if out != "spice|7200|0|0|50400|0|57600\n" || f.q.End != day.Add(36*time.Hour).Unix() || f.q.Clusters[0] != "spice" {
		t.Errorf("start=..T10:00 end=now+1hour: %q %+v", out, f.q)
	}
	out, _, _ = run(f, "-P", "user", "top", "start=11/21-02:00", "end=11/21-04:00")
	if !strings.Contains(out, "Top 10 Users 2026-11-21T02:00:00 - 2026-11-21T03:59:59 (7200 secs)\n") ||
		!strings.Contains(out, "spice|alice|Alice Liddell|lab|240|0\nspice|bob||sub|240|0\n") {
		t.Errorf("start=11/21-02:00 end=11/21-04:00:\n%s", out)
	}
}

func TestParseTime(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.Local)
	at := func(y int, m time.Month, d, hh, mm int) time.Time {
		return time.Date(y, m, d, hh, mm, 0, 0, time.Local)
	}
	for _, tc := range []struct {
		in   string
		want time.Time
	}{
		{"2026-11-01", at(2026, 11, 1, 0, 0)},
		{"2026-11-01T10:30", at(2026, 11, 1, 10, 30)},
		{"11/01", at(2026, 11, 1, 0, 0)},
		{"11/30", at(2026, 11, 30, 0, 0)},
		{"12/01", at(2025, 12, 1, 0, 0)},
		{"1201", at(2025, 12, 1, 0, 0)},
		{"12/01/26", at(2026, 12, 1, 0, 0)},
		{"10:00", at(2026, 11, 22, 10, 0)},
		{"13:00", at(2026, 11, 22, 13, 0)},
		{"noon", at(2026, 11, 22, 12, 0)},
		{"now-1day", now.AddDate(0, 0, -1)},
		{"today", at(2026, 11, 22, 0, 0)},
		{"tomorrow", at(2026, 11, 23, 0, 0)},
	} {
		got, err := parseTime(tc.in, now)
		if err != nil || !got.Equal(tc.want) {
			t.Errorf("parseTime(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	if _, err := parseTime("garbage", now); err == nil || !strings.HasPrefix(err.Error(), "Invalid time specification") {
		t.Errorf("garbage: %v", err)
	}
}

func TestErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"cluster"}, "too few arguments for keyword:cluster\n"},
		{[]string{"cluster", "nosuch"}, "Not valid report nosuch\n"},
		{[]string{"user", "bottom"}, "Not valid report bottom\n"},
		{[]string{"job", "lengths"}, "Not valid report lengths\n"},
		{[]string{"frobnicate"}, "invalid keyword: frobnicate\n"},
		{[]string{"-t", "fortnights", "cluster", "utilization"}, "unknown time format fortnights\n"},
		{[]string{"cluster", "utilization", "start=garbage"}, "Invalid time specification"},
		{[]string{"cluster", "utilization", "accounts=lab"}, " Unknown condition: accounts=lab\n"},
		{[]string{"user", "top", "topcount=many"}, "Invalid value for TopCount (many)\n"},
		{[]string{"job", "sizes", "grouping=50,10"}, " Invalid grouping: 50,10"},
		{[]string{"-T", "cpu,gres/gpu", "job", "sizes"}, " Job report only supports a single --tres type.\n"},
		{[]string{"-T", "bogus", "cluster", "utilization"}, "No valid TRES given\n"},
		{[]string{"-T", "node", "cluster", "utilization"}, "TRES node usage is no longer reported in the Cluster Utilization report."},
		{[]string{"-a", "-M", "x", "cluster", "utilization"}, "Only one cluster option can be used"},
		{[]string{"--frob"}, "sreport: unrecognized option '--frob'\nTry \"sreport --help\" for more information\n"},
		{[]string{"cluster", "UserUtilizationByWckey"}, "WCKey reports are not supported"},
	} {
		out, errOut, code := run(setup(t), tc.args...)
		if code != 1 || !strings.Contains(errOut, tc.want) || (strings.Contains(out, "Cluster") && !strings.Contains(tc.want, "single")) {
			t.Errorf("sreport %v: exit %d, stderr %q (want %q), stdout %q", tc.args, code, errOut, tc.want, out)
		}
	}
	f := setup(t)
	f.err = fmt.Errorf("rpc: %w", cli.ErrAcctDisabled)
	if _, errOut, code := run(f, "cluster", "utilization"); code != 1 || errOut != "Slurm accounting storage is disabled\n" {
		t.Errorf("accounting disabled: exit %d %q", code, errOut)
	}
	f.err = errors.New("Unable to contact the accounting storage")
	if _, errOut, code := run(f, "user", "top"); code != 1 || errOut != "sreport: error: Unable to contact the accounting storage\n" {
		t.Errorf("database down: exit %d %q", code, errOut)
	}
}

func TestInteractiveHelpVersion(t *testing.T) {
	f := setup(t)
	out, errOut, code := runIn(f, "time hours\nparsable2\n# a comment\ncluster utilization\nbogus\nquit\nuser top\n", "-n")
	want := "sreport: sreport: sreport: sreport: spice|39|0|0|153|0|192\nsreport: sreport: "
	if code != 1 || out != want || errOut != "invalid keyword: bogus\n" {
		t.Errorf("interactive: exit %d %q\n%q\nwant %q", code, errOut, out, want)
	}
	if out, _, code := runIn(f, "version\n"); code != 0 || out != "sreport: slurm 22.05.8\nsreport: \n" {
		t.Errorf("version at end of input: %d %q", code, out)
	}
	if out, _, code := run(f, "--help"); code != 0 || !strings.Contains(out, "cluster AccountUtilizationByUser") {
		t.Errorf("--help: %d %q", code, out)
	}
	if out, _, code := run(f, "-V"); code != 0 || out != "slurm 22.05.8\n" {
		t.Errorf("-V: %d %q", code, out)
	}
}

func TestPrinter(t *testing.T) {
	var b bytes.Buffer
	fields := []field{{header: "Name", width: 6}, {header: "Left", width: -6}, {header: "Usage", width: 3}, {header: "N", width: 2}}
	p := &printer{w: &b, mode: aligned}
	p.header(fields)
	p.row(fields, []cell{str("abcdefgh"), str("ab"), {"12345", cTime}, num(1234)})
	p.row(fields, []cell{{}, {}, {"1", cTime}, num(1)})
	want := "  Name Left   Usa  N \n------ ------ --- -- \nabcde+ ab     123 1234 \n                1  1 \n"
	if b.String() != want {
		t.Errorf("aligned:\n%q\nwant\n%q", b.String(), want)
	}
	if w := usageWidth(99999999, uMinutes); w != 8 {
		t.Errorf("width of 99999999 s: %d", w)
	}
	if w := usageWidth(100000000, uHourPer); w != 18 {
		t.Errorf("width of 10^8 s with percentages: %d", w)
	}
}
