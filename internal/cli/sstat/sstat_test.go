package sstat

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/drover-hpc/drover/internal/cli"
	"github.com/drover-hpc/drover/internal/cli/clitest"
	"github.com/drover-hpc/drover/internal/model"
)

var update = flag.Bool("update", false, "rewrite golden files")

type fake struct {
	clitest.Unimplemented
	jobs    []*model.Job
	stats   map[model.JobID][]cli.StepStat
	failed  []string
	statErr error
	calls   int
}

func (f *fake) ListJobs(_ context.Context, q cli.JobQuery) (*cli.JobList, error) {
	out := &cli.JobList{}
	for _, j := range f.jobs {
		for _, id := range q.IDs {
			if j.ID == id || j.ArrayJobID == id {
				out.Jobs = append(out.Jobs, j)
			}
		}
	}
	return out, nil
}

func (f *fake) StepStats(_ context.Context, job model.JobID, step model.StepID, has bool) ([]cli.StepStat, []string, error) {
	f.calls++
	if f.statErr != nil {
		return nil, nil, f.statErr
	}
	var out []cli.StepStat
	for _, x := range f.stats[job] {
		if !has || x.Step == step {
			out = append(out, x)
		}
	}
	return out, f.failed, nil
}

func run(t *testing.T, f *fake, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	env := &cli.Env{Prog: "sstat", Stdout: &out, Stderr: &errb, Now: time.Now, Version: "22.05.8",
		Dial: func() (cli.Client, error) { return f, nil }}
	code := Run(context.Background(), env, args)
	return out.String(), errb.String(), code
}

// sample: batch job 7 on n1,n2 running its batch step and steps 0 and 1
// (step 2 has ended); array task 41935_1 (job 41944) running its batch
// step only; job 8 pending, job 9 completed.
func sample() *fake {
	running := func(id model.JobID, nodes ...string) *model.Job {
		j := &model.Job{ID: id, ArrayTaskID: model.NoArrayTask, State: model.JobRunning, Spec: &model.JobSpec{}}
		for _, n := range nodes {
			j.Alloc = append(j.Alloc, model.NodeAlloc{Node: n, CPUs: 4})
		}
		return j
	}
	j7 := running(7, "n1", "n2")
	j7.Steps = []*model.Step{
		{ID: 0, State: model.JobRunning, Layout: []model.StepNode{{Node: "n1", Tasks: []int{0, 1}}, {Node: "n2", Tasks: []int{2, 3}}}},
		{ID: 1, State: model.JobRunning, Layout: []model.StepNode{{Node: "n2", Tasks: []int{0}}}},
		{ID: 2, State: model.JobCompleted, Layout: []model.StepNode{{Node: "n1", Tasks: []int{0}}}},
	}
	arr := running(41944, "n3")
	arr.ArrayJobID, arr.ArrayTaskID = 41935, 1
	pending := &model.Job{ID: 8, ArrayTaskID: model.NoArrayTask, State: model.JobPending, Spec: &model.JobSpec{}}
	done := running(9, "n1")
	done.State = model.JobCompleted
	mb := int64(1 << 20)
	return &fake{
		jobs: []*model.Job{j7, arr, pending, done},
		stats: map[model.JobID][]cli.StepStat{
			7: {
				{Job: 7, Step: 0, Node: "n2", NTasks: 2, Pids: []int{300}, Usage: model.Usage{MaxRSS: 5 * mb, AveRSS: mb, UserCPU: 2e6, Samples: 2}},
				{Job: 7, Step: model.StepBatch, Node: "n1", NTasks: 1, Pids: []int{100}, Usage: model.Usage{MaxRSS: 2 * mb, AveRSS: mb, UserCPU: 1500000, SystemCPU: 500000, Samples: 1}},
				{Job: 7, Step: 0, Node: "n1", NTasks: 2, Pids: []int{200, 201}, Usage: model.Usage{MaxRSS: 3 * mb, AveRSS: 3 * mb, UserCPU: 3e6, SystemCPU: 1e6, Samples: 2}},
				{Job: 7, Step: 1, Node: "n2", NTasks: 1, Pids: []int{400}, Usage: model.Usage{MaxRSS: 1536 << 10, AveRSS: 1536 << 10, UserCPU: 3725e6, Samples: 1}},
			},
			41944: {{Job: 41944, Step: model.StepBatch, Node: "n3", NTasks: 1, Pids: []int{9}, Usage: model.Usage{MaxRSS: 12345, AveRSS: 12345, Samples: 1}}},
		},
	}
}

func TestSstat(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-P", "-o", "JobID,MaxRSS,MaxRSSNode,MaxRSSTask,AveRSS,NTasks,AveCPU,MinCPU,MinCPUNode,MinCPUTask,Nodelist,Pids", "-j", "7.0"},
			"JobID|MaxRSS|MaxRSSNode|MaxRSSTask|AveRSS|NTasks|AveCPU|MinCPU|MinCPUNode|MinCPUTask|Nodelist|Pids\n" +
				"7.0|5M|n2|2|2M|4|00:00:01|00:00:01|n2|2|n[1-2]|200,201,300\n"},
		// Without a step: the lowest numbered one, not batch; -a: all running.
		{[]string{"-n", "-p", "-o", "jobid,ntasks", "-j", "7"}, "7.0|4|\n"},
		{[]string{"-n", "-P", "-a", "-o", "jobid,ntasks,maxrss,averss,avecpu", "7"},
			"7.batch|1|2M|1M|00:00:02\n7.0|4|5M|2M|00:00:01\n7.1|1|1.50M|1.50M|01:02:05\n"},
		// An array task by its array id; its own id is shown. With only a
		// batch step running, no step is chosen without -a.
		{[]string{"-n", "-P", "-o", "jobid,maxrss", "-j", "41935_1.batch"}, "41944.batch|12345\n"},
		{[]string{"-n", "-P", "-o", "jobid", "-j", "41935_1"}, ""},
		{[]string{"-n", "-P", "-o", "jobid", "-a", "-j", "41935_1"}, "41944.batch\n"},
		// Usage TRES: cpu and mem, the per-node figures (see doc.go).
		{[]string{"-n", "-P", "-o", "tresusageinave,tresusageinmax,tresusageinmaxnode,tresusageinmaxtask,tresusageinmin,tresusageinminn,tresusageinmint,tresusageintot,tresusageoutave", "-j", "7.0"},
			"cpu=00:00:01,mem=2M|cpu=00:00:02,mem=5M|cpu=n1,mem=n2|cpu=00:00:00,mem=2|cpu=00:00:01,mem=3M|cpu=n2,mem=n1|cpu=00:00:00,mem=0|cpu=00:00:06,mem=8M|\n"},
		// Unmeasured figures are blank, energy and frequency as sstat shows them.
		{[]string{"-n", "-P", "-o", "maxvmsize,avepages,maxdiskread,maxdiskreadnode,maxdiskreadtask,consumedenergy,consumedenergyraw,avecpufreq,reqcpufreq,reqcpufreqgov", "-j", "7.0"},
			"|||||0|0|0|Unknown|Unknown\n"},
		{[]string{"-n", "-P", "--noconvert", "-o", "maxrss,averss", "-j", "7.1"}, "1572864|1572864\n"},
		// Widths: %N right, %-N left, longer values cut with '+', the header without.
		{[]string{"-o", "MaxRSS%4,JobID%-3,Pids%5", "-j", "7.0", "--noconvert"},
			"MaxR Job  Pids \n---- --- ----- \n524+ 7.0 200,+ \n"},
		// -i: one line per node; -o adds to it.
		{[]string{"-i", "-o", "ntasks", "-j", "7.0"},
			"JobID                    Nodelist                 Pids   NTasks \n" +
				"------------ -------------------- -------------------- -------- \n" +
				"7.0                            n1              200,201        0 \n" +
				"7.0                            n2                  300        0 \n"},
		// The last of -p and -P wins.
		{[]string{"-p", "-P", "-n", "-o", "jobid,ntasks", "-j", "7.1"}, "7.1|1\n"},
		{[]string{"-P", "-p", "-n", "-o", "jobid,ntasks", "-j", "7.1,7.1"}, "7.1|1|\n"},
	} {
		out, errOut, code := run(t, sample(), tc.args...)
		if code != 0 || errOut != "" || out != tc.want {
			t.Errorf("%q: exit %d stderr %q\ngot  %q\nwant %q", tc.args, code, errOut, out, tc.want)
		}
	}
}

func TestDefaultGolden(t *testing.T) {
	out, errOut, code := run(t, sample(), "-j", "7.0,7.batch")
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d stderr %q", code, errOut)
	}
	path := filepath.Join("testdata", "default.golden")
	if *update {
		if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if out != string(want) {
		t.Errorf("default output differs from %s:\n--- got\n%s--- want\n%s", path, out, want)
	}
}

func TestSstatErrors(t *testing.T) {
	header := "JobID|NTasks\n"
	for _, tc := range []struct {
		args          []string
		out, err      string
		code          int
		failed        []string
		statErr       error
		noStatsCalled bool
	}{
		{args: nil, err: "sstat: error: You didn't give me any jobs to stat.\n", code: 1},
		{args: []string{"-j", "7", "-o", "Bogus"}, err: "sstat: error: Invalid field requested: \"Bogus\"\n", code: 1},
		{args: []string{"-o", "jobid%x,ntasks%0", "-j", "7.1", "-n"}, out: "7.1                 1 \n"},
		{args: []string{"-j", "x.y"}, err: "sstat: fatal: Bad job/step specified: x.y\n", code: 1},
		{args: []string{"-j", "7.x"}, err: "sstat: fatal: Bad step specified: 7\n", code: 1},
		{args: []string{"-j", "7_x"}, err: "sstat: fatal: Bad job array element specified: 7\n", code: 1},
		{args: []string{"--bogus"}, err: "sstat: unrecognized option '--bogus'\n", code: 1},
		{args: []string{"-x"}, err: "sstat: invalid option -- 'x'\n", code: 1},
		{args: []string{"-j"}, err: "sstat: option requires an argument -- 'j'\n", code: 1},
		{args: []string{"--jobs"}, err: "sstat: option '--jobs' requires an argument\n", code: 1},
		// Per-job failures: said on stderr; the status stays 0, as in Slurm.
		{args: []string{"-P", "-o", "jobid,ntasks", "-j", "99,7.1"}, out: header + "7.1|1\n", err: "sstat: error: couldn't get steps for job 99\n"},
		{args: []string{"-P", "-o", "jobid,ntasks", "-j", "8"}, out: header, err: "sstat: error: No steps running for job 8\n", noStatsCalled: true},
		{args: []string{"-P", "-o", "jobid,ntasks", "-j", "9.0"}, out: header, err: "sstat: error: StepId=9.0 not found running.\n", noStatsCalled: true},
		{args: []string{"-P", "-o", "jobid,ntasks", "-j", "7.2"}, out: header, err: "sstat: error: StepId=7.2 not found running.\n", noStatsCalled: true},
		{args: []string{"-P", "-o", "jobid,ntasks", "-j", "7.0"}, out: header + "7.0|4\n", failed: []string{"n3"},
			err: "sstat: error: slurm_job_step_stat: there was an error with the request to n3 rc = Socket timed out on send/recv operation\n"},
		{args: []string{"-P", "-o", "jobid,ntasks", "-j", "7.0"}, out: header, statErr: errors.New("Access/permission denied"),
			err: "sstat: error: problem getting step_layout for StepId=7.0: Access/permission denied\n"},
		{args: []string{"-P", "-o", "jobid,ntasks", "-a", "-j", "7"}, out: header, statErr: errors.New(cli.MsgAlreadyDone)},
	} {
		f := sample()
		f.failed, f.statErr = tc.failed, tc.statErr
		out, errOut, code := run(t, f, tc.args...)
		if out != tc.out || errOut != tc.err || code != tc.code || (tc.noStatsCalled && f.calls > 0) {
			t.Errorf("%q: exit %d (want %d), %d StepStats calls\nstdout %q\nwant   %q\nstderr %q\nwant   %q",
				tc.args, code, tc.code, f.calls, out, tc.out, errOut, tc.err)
		}
	}
}

func TestHelpAndVersion(t *testing.T) {
	out, _, code := run(t, sample(), "-e")
	lines := strings.Split(out, "\n")
	if code != 0 || !strings.HasPrefix(out, "AveCPU              AveCPUFreq          AveDiskRead         AveDiskWrite       \n") ||
		len(lines) != 14 || !strings.HasSuffix(out, "TRESUsageOutTot    \n") {
		t.Errorf("-e: %d lines\n%s", len(lines), out)
	}
	if out, _, _ := run(t, sample(), "-V", "--bogus"); out != "slurm 22.05.8\n" {
		t.Errorf("-V: %q", out)
	}
	if out, _, code := run(t, sample(), "--usage"); code != 0 || out != "Usage: sstat [options] -j <job(.stepid)>\n\tUse --help for help\n" {
		t.Errorf("--usage: %q", out)
	}
	if out, _, code := run(t, sample(), "-e", "--help"); code != 0 || !strings.Contains(out, "--pidformat") {
		t.Errorf("--help after -e: %q", out)
	}
}

func TestFormats(t *testing.T) {
	o, raw := &options{}, &options{noConvert: true}
	for in, want := range map[int64]string{0: "0", 1024: "1K", 1536 << 10: "1.50M", 3 << 30: "3G", 2049 << 10: "2049K", 12345: "12345"} {
		if got := mem(in, o); got != want {
			t.Errorf("mem(%d) = %q, want %q", in, got, want)
		}
	}
	if got := mem(3<<30, raw); got != "3221225472" {
		t.Errorf("mem --noconvert = %q", got)
	}
	if cpuClock(90061e6) != "1-01:01:01" || cpuClock(61234567) != "00:01:01" || cpuClock(3700e6) != "01:01:40" {
		t.Errorf("clocks %q %q %q", cpuClock(90061e6), cpuClock(61234567), cpuClock(3700e6))
	}
	if taskCPU(1500) != "00:00:01" || taskCPU(3) != "00:00:00" || task(-1) != "" {
		t.Errorf("task values %q %q", taskCPU(1500), taskCPU(3))
	}
	cols, err := parseFields(defaultFields)
	if err != nil || len(cols) != 47 {
		t.Fatalf("default fields: %d %v", len(cols), err)
	}
	for _, c := range cols {
		if c.f.name == "ReqCPUFreq" || c.f.name == "ConsumedEnergyRaw" {
			t.Errorf("default list resolves to %s", c.f.name)
		}
	}
}
