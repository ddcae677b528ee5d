package sshare

import (
	"bytes"
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/drover-hpc/drover/internal/cli"
	"github.com/drover-hpc/drover/internal/cli/clitest"
)

type fake struct {
	clitest.Unimplemented
	info *cli.PriorityInfo
}

func (f *fake) Priorities(context.Context) (*cli.PriorityInfo, error) { return f.info, nil }

func run(info *cli.PriorityInfo, args ...string) (string, string, int) {
	var out, errb bytes.Buffer
	env := &cli.Env{Prog: "sshare", Stdout: &out, Stderr: &errb, Now: time.Now, Version: "22.05.8",
		Dial: func() (cli.Client, error) { return &fake{info: info}, nil }}
	code := Run(context.Background(), env, args)
	return out.String(), errb.String(), code
}

func tree(fairTree bool) *cli.PriorityInfo {
	return &cli.PriorityInfo{Multifactor: true, FairTree: fairTree, Shares: []cli.ShareRow{
		{Account: "root", RawUsage: 400, EffUsage: 1, NormUsage: 1, LevelFS: math.NaN()},
		{Account: "phys", Depth: 1, RawShares: 3, NormShares: 0.75, RawUsage: 300, NormUsage: 0.75, EffUsage: 0.75, LevelFS: 1},
		{Account: "phys", User: "ann", Depth: 2, RawShares: 1, NormShares: 0.5, RawUsage: 300, NormUsage: 0.75, EffUsage: 1, FairShare: 0.5, LevelFS: 0.5},
		{Account: "phys", User: "bob", Depth: 2, RawShares: 1, NormShares: 0.5, NormUsage: 0, FairShare: 1, LevelFS: math.Inf(1)},
		{Account: "bio", Depth: 1, RawShares: 1, NormShares: 0.25, RawUsage: 100, NormUsage: 0.25, EffUsage: 0.25, LevelFS: 1},
		{Account: "bio", User: "cid", Depth: 2, RawShares: 1, RawUsage: 100, FairShare: 0.25, LevelFS: 12345.678901},
		{Account: "bio", User: "dan", Depth: 2, RawShares: 0x7fffffff, FairShare: 0.25, LevelFS: 3},
	}}
}

func TestLongFairTree(t *testing.T) {
	out, errOut, code := run(tree(true), "-l", "-a")
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(out, "\n")
	want := "Account                    User  RawShares  NormShares    RawUsage   NormUsage  EffectvUsage  FairShare    LevelFS                    GrpTRESMins                    TRESRunMins "
	if lines[0] != want {
		t.Errorf("header\n got %q\nwant %q", lines[0], want)
	}
	for _, w := range []string{
		"root                                          0.000000         400                  1.000000                                                                                     \n",
		"  phys                      ann          1    0.500000         300    0.750000      1.000000   0.500000   0.500000",
		"  phys                      bob          1    0.500000           0    0.000000      0.000000   1.000000        inf",
		" phys                                    3    0.750000         300    0.750000      0.750000              1.000000",
		"  bio                       cid          1    0.000000         100    0.000000      0.000000   0.250000 1.2346e+04",
		"  bio                       dan     parent    0.000000           0    0.000000      0.000000   0.250000            ",
	} {
		if !strings.Contains(out, w) {
			t.Errorf("no %q in\n%s", w, out)
		}
	}
	// Parsable: the same fields, "inf" for a user without usage.
	out, _, _ = run(tree(true), "-l", "-a", "-P", "-n")
	if !strings.Contains(out, "phys|bob|1|0.500000|0|0.000000|0.000000|1.000000|inf||\n") {
		t.Errorf("parsable:\n%s", out)
	}
}

func TestLongClassicHasNoLevelFS(t *testing.T) {
	out, _, _ := run(tree(false), "-l")
	if strings.Contains(out, "LevelFS") || !strings.Contains(out, "FairShare                    GrpTRESMins") {
		t.Errorf("classic -l:\n%s", out)
	}
}

func TestFormat(t *testing.T) {
	out, _, code := run(tree(true), "-a", "-n", "-o", "acc,user%6,levelfs,fair")
	if code != 0 || !strings.Contains(out, "  phys                  bob        inf   1.000000 \n") {
		t.Errorf("-o:\n%q", out)
	}
	// Wider than its column: scientific notation, as Slurm prints it.
	if !strings.Contains(out, "1.2346e+04") {
		t.Errorf("-o overflow:\n%s", out)
	}
	if _, errOut, code := run(tree(true), "-o", "Bogus"); code != 1 || !strings.Contains(errOut, `Invalid field requested: "Bogus"`) {
		t.Errorf("bad field: %d %q", code, errOut)
	}
}

// A user name longer than its column is cut with a '+', as Slurm does.
func TestLongNameMarked(t *testing.T) {
	info := tree(true)
	info.Shares[2].User = "drovertest1"
	out, _, _ := run(info, "-a")
	if !strings.Contains(out, "  phys               drovertes+          1") {
		t.Errorf("long name:\n%s", out)
	}
}
