package sdiag

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/drover-hpc/drover/internal/cli"
	"github.com/drover-hpc/drover/internal/cli/clitest"
)

type fake struct {
	clitest.Unimplemented
	d     *cli.DiagInfo
	reset bool
}

func (f *fake) Diag(_ context.Context, reset bool) (*cli.DiagInfo, error) {
	f.reset = reset
	return f.d, nil
}

func run(f *fake, args ...string) (string, string, int) {
	var out, errb bytes.Buffer
	env := &cli.Env{Prog: "sdiag", Stdout: &out, Stderr: &errb, Now: time.Now, Version: "22.05.8",
		Dial: func() (cli.Client, error) { return f, nil }}
	code := Run(context.Background(), env, args)
	return out.String(), errb.String(), code
}

func TestReport(t *testing.T) {
	f := &fake{d: &cli.DiagInfo{Now: 1795324333, Since: 1795324074, ServerThreads: 12, AcctBacklog: 37,
		JobsSubmitted: 64, JobsStarted: 46, JobsCompleted: 40, JobsCanceled: 14, JobsPending: 2, JobsRunning: 2,
		SchedLast: 3, SchedMax: 17956, SchedTotal: 40918, SchedCycles: 41, SchedDepthSum: 41, SchedSince: 1795324074,
		RPCByType: []cli.RPCStat{{Name: "ListJobs", Count: 2, TotalUs: 800}, {Name: "SubmitJob", Count: 40, TotalUs: 39345}},
		RPCByUser: []cli.RPCStat{{Name: "root", Count: 42, TotalUs: 40145}}}}
	out, errOut, code := run(f)
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	local := time.Unix(1795324333, 0).Format(time.ANSIC)
	for _, want := range []string{
		"sdiag output at " + local + " (1795324333)\n",
		"Server thread count:  12\n",
		"DBD Agent queue size: 37\n",
		"Jobs submitted: 64\nJobs started:   46\nJobs completed: 40\nJobs canceled:  14\nJobs failed:    0\n",
		"\tMean cycle:   998\n\tMean depth cycle:  1\n\tCycles per minute: 10\n",
		"\tSubmitJob                                count:40     ave_time:983    total_time:39345\n\tListJobs ",
		"\troot            (       0) count:42     ave_time:955    total_time:40145\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if out, _, _ := run(f, "-i"); strings.Index(out, "ListJobs") > strings.Index(out, "SubmitJob") {
		t.Errorf("-i sorts by name:\n%s", out)
	}
	if out, _, code := run(f, "-r"); code != 0 || !f.reset || out != "Reset scheduling statistics\n" {
		t.Errorf("-r: %d %q reset=%v", code, out, f.reset)
	}
	if _, errOut, code := run(f, "--bogus"); code != 1 || !strings.Contains(errOut, "bogus") {
		t.Errorf("unknown option: %d %q", code, errOut)
	}
}
