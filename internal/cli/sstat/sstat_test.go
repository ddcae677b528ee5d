package sstat

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/drover-hpc/drover/internal/cli"
	"github.com/drover-hpc/drover/internal/cli/clitest"
	"github.com/drover-hpc/drover/internal/model"
)

type fake struct {
	clitest.Unimplemented
	stats map[model.JobID][]cli.StepStat
}

func (f *fake) StepStats(_ context.Context, job model.JobID, step model.StepID, has bool) ([]cli.StepStat, []string, error) {
	_ = has
	s, ok := f.stats[job]
	if !ok {
		return nil, nil, errors.New("Job/step already completing or completed")
	}
	if has {
		var out []cli.StepStat
		for _, x := range s {
			if x.Step == step {
				out = append(out, x)
			}
		}
		return out, nil, nil
	}
	return s, nil, nil
}

func run(t *testing.T, f *fake, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	env := &cli.Env{Prog: "sstat", Stdout: &out, Stderr: &errb, Now: time.Now, Version: "22.05.8",
		Dial: func() (cli.Client, error) { return f, nil }}
	code := Run(context.Background(), env, args)
	return out.String(), errb.String(), code
}

func sample() *fake {
	return &fake{stats: map[model.JobID][]cli.StepStat{
		7: {
			{Job: 7, Step: model.StepBatch, Node: "n1", NTasks: 1, Pids: []int{100}, Usage: model.Usage{MaxRSS: 2 << 20, AveRSS: 1 << 20, UserCPU: 1500000, SystemCPU: 500000, Samples: 1}},
			{Job: 7, Step: 0, Node: "n1", NTasks: 2, Pids: []int{200, 201}, Usage: model.Usage{MaxRSS: 3 << 20, AveRSS: 3 << 20, UserCPU: 4e6, Samples: 2}},
			{Job: 7, Step: 0, Node: "n2", NTasks: 2, Pids: []int{300}, Usage: model.Usage{MaxRSS: 5 << 20, AveRSS: 1 << 20, UserCPU: 2e6, Samples: 2}},
		},
	}}
}

func TestSstat(t *testing.T) {
	out, _, code := run(t, sample(), "-P", "-o", "JobID,MaxRSS,MaxRSSNode,AveRSS,NTasks,AveCPU,TotalCPU", "-j", "7.0")
	want := "JobID|MaxRSS|MaxRSSNode|AveRSS|NTasks|AveCPU|TotalCPU\n7.0|5M|n2|2M|4|00:00:01|00:06.000\n"
	if code != 0 || out != want {
		t.Errorf("-P:\n%s\nwant\n%s", out, want)
	}
	// Without a step: the lowest running one (batch), unless -a.
	out, _, _ = run(t, sample(), "-n", "-p", "-o", "jobid,ntasks", "-j", "7")
	if out != "7.batch|1|\n" {
		t.Errorf("lowest step: %q", out)
	}
	out, _, _ = run(t, sample(), "-n", "-P", "-a", "-o", "jobid", "-j", "7")
	if out != "7.batch\n7.0\n" {
		t.Errorf("-a: %q", out)
	}
	out, _, _ = run(t, sample(), "-i", "-j", "7.0")
	lines := strings.Split(out, "\n")
	if len(lines) < 3 || !strings.HasPrefix(lines[0], "JobID        Nodelist") || !strings.Contains(lines[2], "n1,n2") || !strings.Contains(lines[2], "200,201,300") {
		t.Errorf("-i:\n%s", out)
	}
	// Default columns start with JobID and MaxVMSize; fixed widths, dashes.
	out, _, _ = run(t, sample(), "-j", "7.batch")
	if !strings.HasPrefix(out, "JobID         MaxVMSize ") || !strings.Contains(out, "------------ ----------") || !strings.Contains(out, "7.batch") {
		t.Errorf("default:\n%s", out)
	}
	out, _, _ = run(t, sample(), "-n", "-o", "MaxRSS%4,JobID%-3", "-j", "7.0", "--noconvert")
	if out != "5120K 7.0 \n" && out != "512+ 7.0 \n" {
		t.Errorf("widths: %q", out)
	}
}

func TestSstatErrors(t *testing.T) {
	if _, e, code := run(t, sample()); code == 0 || !strings.Contains(e, "sstat: error: You didn't give me any jobs to stat.") {
		t.Errorf("no -j: %d %q", code, e)
	}
	if _, e, code := run(t, sample(), "-j", "7", "-o", "Bogus"); code == 0 || !strings.Contains(e, `Invalid field requested: "Bogus"`) {
		t.Errorf("bad field: %d %q", code, e)
	}
	if _, e, code := run(t, sample(), "-j", "8"); code == 0 || !strings.Contains(e, "completed") {
		t.Errorf("not running: %d %q", code, e)
	}
	if _, e, code := run(t, sample(), "-j", "x.y"); code == 0 || !strings.Contains(e, "Invalid job id x.y") {
		t.Errorf("bad id: %d %q", code, e)
	}
	if out, _, code := run(t, sample(), "-e"); code != 0 || !strings.Contains(out, "MaxRSS") {
		t.Errorf("-e: %q", out)
	}
	if out, _, _ := run(t, sample(), "-V"); out != "slurm 22.05.8\n" {
		t.Errorf("-V: %q", out)
	}
}

func TestFormats(t *testing.T) {
	o := &options{}
	for in, want := range map[int64]string{0: "0", 1024: "1K", 1536 << 10: "1.50M", 3 << 30: "3G"} {
		if got := mem(in, o); got != want {
			t.Errorf("mem(%d) = %q, want %q", in, got, want)
		}
	}
	if cpuClock(90061e6) != "1-01:01:01" || cpuPrecise(61234567) != "01:01.234" || cpuPrecise(3700e6) != "01:01:40" {
		t.Errorf("clocks %q %q %q", cpuClock(90061e6), cpuPrecise(61234567), cpuPrecise(3700e6))
	}
}
