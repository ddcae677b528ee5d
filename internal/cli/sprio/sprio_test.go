package sprio

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
	info *cli.PriorityInfo
}

func (f *fake) Priorities(context.Context) (*cli.PriorityInfo, error) { return f.info, nil }

func run(info *cli.PriorityInfo, args ...string) (string, int) {
	var out, errb bytes.Buffer
	env := &cli.Env{Prog: "sprio", Stdout: &out, Stderr: &errb, Now: time.Now, Version: "22.05.8",
		Dial: func() (cli.Client, error) { return &fake{info: info}, nil }}
	code := Run(context.Background(), env, args)
	return out.String() + errb.String(), code
}

func info() *cli.PriorityInfo {
	return &cli.PriorityInfo{Multifactor: true, FairTree: true, WAge: 1000, WFairShare: 10000, WTRES: "CPU=1000,Mem=2000,GRES/gpu=3000",
		Jobs: []cli.JobPriority{{ID: "7", JobID: 7, Partition: "gpu", User: "ann", Priority: 6501, Age: 0.001, FairShare: 0.5,
			TRES: []cli.TRESFactor{{Name: "cpu", Factor: 0.25, Weighted: 250}, {Name: "mem", Factor: 0.125, Weighted: 250}, {Name: "gres/gpu", Factor: 0.5, Weighted: 1500}}}}}
}

// The TRES column joins the default set when PriorityWeightTRES is set:
// what each TRES adds, cut at 20 characters as Slurm cuts it.
func TestTRESColumn(t *testing.T) {
	out, code := run(info())
	want := "          JOBID PARTITION   PRIORITY       SITE        AGE  FAIRSHARE                 TRES\n" +
		"              7 gpu             6501          0          1       5000 cpu=250,mem=250,gres\n"
	if code != 0 || out != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
	out, _ = run(info(), "-n", "-h")
	if !strings.HasSuffix(out, " cpu=0.25,mem=0.12,gr\n") {
		t.Errorf("-n: %q", out)
	}
	out, _ = run(info(), "-w")
	if !strings.Contains(out, "        Weights                               1       1000      10000 CPU=1000,Mem=2000,GR\n") {
		t.Errorf("-w:\n%s", out)
	}
	// -l always has the column; without TRES weights it is empty.
	i := info()
	i.WTRES, i.Jobs[0].TRES = "", nil
	out, _ = run(i, "-l")
	if !strings.Contains(out, "       NICE                 TRES\n") || !strings.HasSuffix(out, "          0                     \n") {
		t.Errorf("-l:\n%s", out)
	}
}

// -o: Slurm's letters, '.' right-justifies, values cut to the width;
// SPRIO_FORMAT when -o is not given.
func TestFormat(t *testing.T) {
	out, code := run(info(), "-o", "%.15i %9r %.10Y %u|%f|%.8F|%T")
	want := "          JOBID PARTITION   PRIORITY USER|FAIRSHARE|FAIRSHAR|TRES\n" +
		"              7 gpu             6501 ann|0.5000000|    5000|cpu=250,mem=250,gres/gpu=1500\n"
	if code != 0 || out != want {
		t.Errorf("got\n%q\nwant\n%q", out, want)
	}
	var buf bytes.Buffer
	env := &cli.Env{Prog: "sprio", Stdout: &buf, Stderr: &buf, Now: time.Now, Environ: []string{"SPRIO_FORMAT=%i %y"},
		Dial: func() (cli.Client, error) { return &fake{info: info()}, nil }}
	if Run(context.Background(), env, []string{"-h"}); buf.String() != "7 0.00000151363201\n" {
		t.Errorf("SPRIO_FORMAT: %q", buf.String())
	}
	if out, code := run(info(), "-o", "%i %Z"); code != 1 || !strings.Contains(out, "Invalid job format specification: Z") {
		t.Errorf("bad letter: %d %q", code, out)
	}
}
