package jobspec

import (
	"errors"
	"strings"
	"testing"
)

// srunOpts parses an srun command line ending in "true" with environ.
func srunOpts(t *testing.T, args []string, environ ...string) *Options {
	t.Helper()
	return mustParse(t, Srun, append(append([]string(nil), args...), "true"), testCtx(nil, environ...))
}

func TestSrunDistribution(t *testing.T) {
	tests := []struct {
		args    []string
		environ []string
		want    string
	}{
		{nil, nil, ""},
		{[]string{"-m", "block"}, nil, "block"},
		{[]string{"--distribution=Cyclic"}, nil, "cyclic"},
		{[]string{"-mcyclic:fcyclic"}, nil, "cyclic:fcyclic"},
		{[]string{"-m", "block:cyclic:fcyclic"}, nil, "block:cyclic:fcyclic"},
		{[]string{"-m", "*:*"}, nil, "*:*"},
		{[]string{"-m", "plane=04"}, nil, "plane=4"},
		{[]string{"-m", "arbitrary"}, nil, "arbitrary"},
		{[]string{"-m", "block,pack"}, nil, "block,Pack"},
		{[]string{"-m", "cyclic:block,NOPACK"}, nil, "cyclic:block,NoPack"},
		{nil, []string{"SLURM_DISTRIBUTION=cyclic"}, "cyclic"},
		{[]string{"-m", "block"}, []string{"SLURM_DISTRIBUTION=cyclic"}, "block"},
	}
	for _, tc := range tests {
		o := srunOpts(t, tc.args, tc.environ...)
		if o.Distribution != tc.want {
			t.Errorf("%q %q: Distribution %q, want %q", tc.args, tc.environ, o.Distribution, tc.want)
		}
		if _, ok := o.Extra["distribution"]; ok {
			t.Errorf("%q: distribution left in Extra", tc.args)
		}
	}
	for _, bad := range []string{"", "spiral", "plane", "plane=0", "plane=x", "block:arbitrary", "fcyclic",
		"block:cyclic:cyclic:cyclic", "block,", "block,tight", "block:"} {
		_, err := Parse(Srun, []string{"--distribution=" + bad, "true"}, testCtx(nil))
		var e *Error
		if !errors.As(err, &e) || strings.Join(e.Lines(), "\n") != "srun: error: Invalid --distribution specification" || e.Exit != exitOption {
			t.Errorf("-m %q: error %v", bad, err)
		}
	}
	// sbatch and salloc keep -m as they did: accepted and not checked.
	o := mustParse(t, Sbatch, []string{"-m", "whatever", "--wrap=true"}, testCtx(nil))
	if o.Extra["distribution"] != "whatever" || o.Distribution != "" {
		t.Errorf("sbatch -m: %+v", o)
	}
	o = mustParse(t, Salloc, []string{"-m", "cyclic"}, testCtx(nil))
	if o.Extra["distribution"] != "cyclic" {
		t.Errorf("salloc -m: %+v", o)
	}
}

func TestSrunKillWait(t *testing.T) {
	tests := []struct {
		args    []string
		environ []string
		kill    bool
		wait    int
	}{
		{nil, nil, false, 0},
		{[]string{"-K"}, nil, true, 0},
		{[]string{"-K1"}, nil, true, 0},
		{[]string{"-K0"}, nil, false, 0},
		{[]string{"--kill-on-bad-exit=2"}, nil, true, 0},
		{[]string{"--kill-on-bad-exit"}, []string{"SLURM_KILL_BAD_EXIT=0"}, true, 0},
		{nil, []string{"SLURM_KILL_BAD_EXIT=1"}, true, 0},
		{nil, []string{"SLURM_KILL_BAD_EXIT=0"}, false, 0},
		{[]string{"-W", "30"}, nil, false, 30},
		{[]string{"--wait=0"}, nil, false, 0},
		{nil, []string{"SLURM_WAIT=15"}, false, 15},
		{[]string{"-W5"}, []string{"SLURM_WAIT=15"}, false, 5},
	}
	for _, tc := range tests {
		o := srunOpts(t, tc.args, tc.environ...)
		if o.KillOnBadExit != tc.kill || o.WaitSec != tc.wait || len(o.Extra) != 0 {
			t.Errorf("%q %q: kill %v wait %d extra %v; want %v %d", tc.args, tc.environ, o.KillOnBadExit, o.WaitSec, o.Extra, tc.kill, tc.wait)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-Kx"}, `srun: error: Invalid numeric value "x" for --kill-on-bad-exit.`},
		{[]string{"-W", "-1"}, `srun: error: Invalid numeric value "-1" for --wait.`},
		{[]string{"--wait=soon"}, `srun: error: Invalid numeric value "soon" for --wait.`},
	} {
		_, err := Parse(Srun, append(tc.args, "true"), testCtx(nil))
		var e *Error
		if !errors.As(err, &e) || strings.Join(e.Lines(), "\n") != tc.want {
			t.Errorf("%q: error %v, want %q", tc.args, err, tc.want)
		}
	}
	// sbatch -W still means "wait for the job", without an argument.
	o := mustParse(t, Sbatch, []string{"-W", "--wrap=true"}, testCtx(nil))
	if !o.Wait || o.WaitSec != 0 {
		t.Errorf("sbatch -W: %+v", o)
	}
}

func TestSrunMPI(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		environ []string
		want    string // MPI, or the error lines
	}{
		{nil, nil, ""},
		{[]string{"--mpi=none"}, nil, "none"},
		{[]string{"--mpi=None"}, nil, "none"},
		{nil, []string{"SLURM_MPI_TYPE=none"}, "none"},
		{[]string{"--mpi=none"}, []string{"SLURM_MPI_TYPE=pmix"}, "none"},
		{[]string{"--mpi=pmix"}, nil, "srun: fatal: --mpi=pmix is not supported by Drover yet: only --mpi=none (no PMI) is available"},
		{[]string{"--mpi", "pmi2"}, nil, "srun: fatal: --mpi=pmi2 is not supported by Drover yet: only --mpi=none (no PMI) is available"},
		{nil, []string{"SLURM_MPI_TYPE=pmix_v4"}, "srun: fatal: SLURM_MPI_TYPE=pmix_v4 is not supported by Drover yet: only --mpi=none (no PMI) is available"},
		{[]string{"--mpi=list"}, nil, "srun: error: MPI plugin types are...\nsrun: error: \tnone"},
	} {
		o, err := Parse(Srun, append(append([]string(nil), tc.args...), "true"), testCtx(nil, tc.environ...))
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || strings.Join(e.Lines(), "\n") != tc.want {
				t.Errorf("%q %q: error %v, want %q", tc.args, tc.environ, err, tc.want)
			}
			continue
		}
		if o.MPI != tc.want {
			t.Errorf("%q %q: MPI %q, want %q", tc.args, tc.environ, o.MPI, tc.want)
		}
	}
	// --mpi=list needs no command.
	_, err := Parse(Srun, []string{"--mpi=list"}, testCtx(nil))
	if err == nil || !strings.Contains(err.Error(), "MPI plugin types") {
		t.Errorf("srun --mpi=list: %v", err)
	}
}

func TestSrunInput(t *testing.T) {
	for _, tc := range []struct {
		args         []string
		environ      []string
		input, stdin string
	}{
		{nil, nil, "", ""},
		{[]string{"-i", "all"}, nil, "all", ""},
		{[]string{"--input=NONE"}, nil, "none", ""},
		{[]string{"-i3"}, nil, "3", ""},
		{[]string{"-i", "007"}, nil, "7", ""},
		{[]string{"-i", "in-%t.txt"}, nil, "", "in-%t.txt"},
		{[]string{"-i", "3.in"}, nil, "", "3.in"},
		{nil, []string{"SRUN_INPUT=none"}, "none", ""},
		{[]string{"-i", "f"}, []string{"SRUN_INPUT=none"}, "", "f"},
		{[]string{"-i", "f", "-i", "0"}, nil, "0", ""},
	} {
		o := srunOpts(t, tc.args, tc.environ...)
		if o.Input != tc.input || o.Spec.StdIn != tc.stdin {
			t.Errorf("%q %q: Input %q StdIn %q, want %q %q", tc.args, tc.environ, o.Input, o.Spec.StdIn, tc.input, tc.stdin)
		}
	}
	if _, err := Parse(Srun, []string{"-i", "99999999999", "true"}, testCtx(nil)); err == nil {
		t.Errorf("-i 99999999999 accepted")
	}
	o := mustParse(t, Sbatch, []string{"-i", "none", "--wrap=true"}, testCtx(nil))
	if o.Spec.StdIn != "none" || o.Input != "" {
		t.Errorf("sbatch -i none: StdIn %q Input %q", o.Spec.StdIn, o.Input)
	}
	// SRUN_OUTPUT and SRUN_ERROR set the file patterns.
	o = srunOpts(t, nil, "SRUN_OUTPUT=o-%t", "SRUN_ERROR=e-%t")
	if o.Spec.StdOut != "o-%t" || o.Spec.StdErr != "e-%t" {
		t.Errorf("SRUN_OUTPUT/SRUN_ERROR: %q %q", o.Spec.StdOut, o.Spec.StdErr)
	}
}

func TestSrunBcastMultiProg(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		environ []string
		set     bool
		dest    string
	}{
		{nil, nil, false, ""},
		{[]string{"--bcast"}, nil, true, ""},
		{[]string{"--bcast=/tmp/mine"}, nil, true, "/tmp/mine"},
		{nil, []string{"SLURM_BCAST="}, true, ""},
		{nil, []string{"SLURM_BCAST=/tmp/x"}, true, "/tmp/x"},
	} {
		o := srunOpts(t, tc.args, tc.environ...)
		if o.BcastSet != tc.set || o.Bcast != tc.dest {
			t.Errorf("%q %q: bcast %v %q, want %v %q", tc.args, tc.environ, o.BcastSet, o.Bcast, tc.set, tc.dest)
		}
	}
	o := mustParse(t, Srun, []string{"-n4", "--multi-prog", "conf", "extra"}, testCtx(nil))
	if !o.MultiProg || len(o.Extra) != 0 || o.Command[0] != "conf" || o.Spec.Argv[1] != "extra" {
		t.Errorf("--multi-prog: %+v", o)
	}
	if o := srunOpts(t, nil); o.MultiProg || o.BcastSet || len(o.Notes) != 0 {
		t.Errorf("defaults: %+v", o)
	}
}
