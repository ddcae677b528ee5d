package jobspec

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/drover-hpc/drover/internal/model"
)

var testNow = time.Date(2026, 5, 4, 12, 0, 0, 0, time.UTC)

// testCtx builds a Context over an in-memory file system rooted at /home/u.
func testCtx(files map[string]string, environ ...string) Context {
	return Context{
		Environ: environ, Cwd: "/home/u", Hostname: "login1", Now: testNow,
		ReadFile: func(p string) ([]byte, error) {
			if s, ok := files[p]; ok {
				return []byte(s), nil
			}
			return nil, fs.ErrNotExist
		},
	}
}

func mustParse(t *testing.T, kind Kind, args []string, ctx Context) *Options {
	t.Helper()
	o, err := Parse(kind, args, ctx)
	if err != nil {
		t.Fatalf("Parse(%v, %q): %v", kind, args, err)
	}
	return o
}

func TestParseSbatchDefaults(t *testing.T) {
	o := mustParse(t, Sbatch, []string{"job.sh"}, testCtx(map[string]string{"/home/u/job.sh": "#!/bin/sh\ntrue\n"}, "HOME=/home/u"))
	s := o.Spec
	want := model.JobSpec{
		Name: "job.sh", Script: "#!/bin/sh\ntrue\n", WorkDir: "/home/u", Env: []string{"HOME=/home/u"},
		Export: "ALL", TimeLimit: model.Unset, TimeMin: model.Unset, MinNodes: model.Unset, MaxNodes: model.Unset,
		NTasks: model.Unset, CPUsPerTask: model.Unset, TasksPerNode: model.Unset, MemPerNode: model.Unset,
		MemPerCPU: model.Unset, Requeue: true, SubmitHost: "login1", SubmitLine: "sbatch job.sh",
	}
	if fmt.Sprintf("%+v", *s) != fmt.Sprintf("%+v", want) {
		t.Errorf("spec =\n%+v\nwant\n%+v", *s, want)
	}
	if o.ScriptPath != "/home/u/job.sh" || len(o.Extra) != 0 || o.Kind != Sbatch {
		t.Errorf("options = %+v", o)
	}
}

func TestParsePrecedence(t *testing.T) {
	script := "#!/bin/bash\n#SBATCH -J script -t 5 --partition=p_script\n#SBATCH --account=a_script --mem=1G\nsrun true\n"
	files := map[string]string{"/home/u/job.sh": script}
	tests := []struct {
		name               string
		env                []string
		args               []string
		job, part, account string
		limit, mem         int64
	}{
		{"script only", nil, nil, "script", "p_script", "a_script", 300, 1024},
		{"env over script", []string{"SBATCH_JOB_NAME=env", "SBATCH_TIMELIMIT=10", "SBATCH_PARTITION=p_env", "SBATCH_MEM_PER_NODE=2G"}, nil,
			"env", "p_env", "a_script", 600, 2048},
		{"cli over env", []string{"SBATCH_JOB_NAME=env", "SBATCH_TIMELIMIT=10", "SBATCH_PARTITION=p_env"}, []string{"-J", "cli", "--time=1:00:00", "-pp_cli", "--mem=3G"},
			"cli", "p_cli", "a_script", 3600, 3072},
		{"cli over script", nil, []string{"--job-name=cli", "-A", "a_cli"}, "cli", "p_script", "a_cli", 300, 1024},
		{"abbreviated", nil, []string{"--part=p_abbr", "--accoun=a_abbr"}, "script", "p_abbr", "a_abbr", 300, 1024},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := mustParse(t, Sbatch, append(tc.args, "job.sh"), testCtx(files, tc.env...))
			s := o.Spec
			if s.Name != tc.job || s.Partition != tc.part || s.Account != tc.account || s.TimeLimit != tc.limit || s.MemPerNode != tc.mem {
				t.Errorf("got name=%q part=%q account=%q limit=%d mem=%d", s.Name, s.Partition, s.Account, s.TimeLimit, s.MemPerNode)
			}
		})
	}
}

func TestParseMemoryLayers(t *testing.T) {
	files := map[string]string{"/home/u/j.sh": "#!/bin/sh\n#SBATCH --mem=4G\n"}
	o := mustParse(t, Sbatch, []string{"--mem-per-cpu=500", "j.sh"}, testCtx(files))
	if o.Spec.MemPerCPU != 500 || o.Spec.MemPerNode != model.Unset {
		t.Errorf("CLI --mem-per-cpu should replace #SBATCH --mem: %d %d", o.Spec.MemPerCPU, o.Spec.MemPerNode)
	}
	o = mustParse(t, Srun, []string{"--mem=1G", "true"}, testCtx(nil, "SLURM_MEM_PER_CPU=100"))
	if o.Spec.MemPerNode != 1024 || o.Spec.MemPerCPU != model.Unset {
		t.Errorf("srun --mem should replace SLURM_MEM_PER_CPU: %d %d", o.Spec.MemPerNode, o.Spec.MemPerCPU)
	}
	o = mustParse(t, Sbatch, []string{"--mem-per-gpu=2G", "--gres=gpu:1", "--wrap=x"}, testCtx(nil))
	if g := o.Spec.GPUs; g == nil || g.MemPerGPU != 2048 || o.Spec.MemPerNode != model.Unset {
		t.Errorf("--mem-per-gpu: %+v", g)
	}
	// A step of a job keeps it as a note when it asks for no GPUs itself.
	o = mustParse(t, Srun, []string{"--mem-per-gpu=2G", "true"}, testCtx(nil, "SLURM_JOB_ID=5"))
	if o.Extra["mem-per-gpu"] != "2048" || o.Spec.GPUs != nil {
		t.Errorf("srun --mem-per-gpu: %v", o.Extra)
	}
}

func TestParseScriptAndArgs(t *testing.T) {
	files := map[string]string{"/home/u/bin/job.sh": "#!/bin/sh\n#SBATCH -n 4\n", "/abs/j": "#!/bin/sh\n"}
	o := mustParse(t, Sbatch, []string{"-N2", "bin/job.sh", "a", "-b", "--c=d", "-J", "x"}, testCtx(files))
	if o.ScriptPath != "/home/u/bin/job.sh" || !slices.Equal(o.Spec.Argv, []string{"a", "-b", "--c=d", "-J", "x"}) {
		t.Errorf("script %q argv %q", o.ScriptPath, o.Spec.Argv)
	}
	if o.Spec.Name != "job.sh" || o.Spec.NTasks != 4 || o.Spec.MinNodes != 2 || o.Spec.MaxNodes != 2 {
		t.Errorf("spec %+v", o.Spec)
	}
	o = mustParse(t, Sbatch, []string{"--", "/abs/j", "x"}, testCtx(files))
	if o.ScriptPath != "/abs/j" || !slices.Equal(o.Spec.Argv, []string{"x"}) || o.Spec.Name != "j" {
		t.Errorf("after --: %q %q %q", o.ScriptPath, o.Spec.Argv, o.Spec.Name)
	}
}

func TestParseStdinAndWrap(t *testing.T) {
	ctx := testCtx(nil)
	ctx.Stdin = strings.NewReader("#!/bin/sh\n#SBATCH --time=2 -o out.txt\necho hi\n")
	o := mustParse(t, Sbatch, nil, ctx)
	if o.ScriptPath != "" || o.Spec.Name != "sbatch" || o.Spec.TimeLimit != 120 || o.Spec.StdOut != "out.txt" {
		t.Errorf("stdin: %+v %+v", o, o.Spec)
	}
	o = mustParse(t, Sbatch, []string{"--wrap", "sleep 60", "-o", "/dev/null"}, testCtx(nil))
	if o.Spec.Script != "#!/bin/sh\n# This script was created by sbatch --wrap.\n\nsleep 60\n" || o.Spec.Name != "wrap" || o.Spec.StdOut != "/dev/null" {
		t.Errorf("wrap: %q %q", o.Spec.Script, o.Spec.Name)
	}
}

func TestParseOptions(t *testing.T) {
	rootCtx := testCtx(nil)
	rootCtx.Root = true
	o := mustParse(t, Sbatch, []string{
		"-Hvv", "--parsable", "-Q", "-W", "--test-only", "-a", "0-15:4%2", "-d", "afterok:1:2", "-b", "now+1hour",
		"--comment=c", "-q", "high", "-w", "node[1-3]", "-x", "n4,n5", "--exclusive", "--nice", "--no-requeue",
		"--open-mode=a", "-c", "2", "--ntasks-per-node=3", "-D", "work", "--time-min=10", "-e", "e.txt", "-i", "in.txt",
		"--gres=gpu:2", "--mail-type=END,fail", "--mail-user=u@x", "-C", "a&b", "--signal=B:USR1@60", "--uid=0",
		"--wrap=true",
	}, rootCtx)
	s := o.Spec
	checks := []struct {
		name string
		ok   bool
	}{
		{"hold", s.Hold}, {"verbose", o.Verbose == 2}, {"parsable", o.Parsable}, {"quiet", o.Quiet}, {"wait", o.Wait},
		{"test-only", o.TestOnly}, {"array", s.Array != nil && slices.Equal(s.Array.TaskIDs, []int{0, 4, 8, 12}) && s.Array.Throttle == 2},
		{"dependency", s.Dependency != nil && len(s.Dependency.Terms) == 2},
		{"begin", s.BeginTime == testNow.Add(time.Hour).Unix()}, {"comment", s.Comment == "c"}, {"qos", s.QOS == "high"},
		{"nodelist", slices.Equal(s.ReqNodes, []string{"node[1-3]"})}, {"exclude", slices.Equal(s.ExcNodes, []string{"n4,n5"})},
		{"exclusive", s.Exclusive}, {"nice", s.Nice == 100}, {"requeue", !s.Requeue}, {"open-mode", s.OpenMode == "append"},
		{"cpus", s.CPUsPerTask == 2}, {"per-node", s.TasksPerNode == 3}, {"chdir", s.WorkDir == "/home/u/work"},
		{"time-min", s.TimeMin == 600}, {"stderr", s.StdErr == "e.txt"}, {"stdin", s.StdIn == "in.txt"},
		{"gres", s.GPUs != nil && s.GPUs.PerNode == 2}, {"mail", o.Extra["mail-type"] == "END,fail" && o.Extra["mail-user"] == "u@x"},
		{"constraint", s.Features == "a&b"}, {"signal", o.Extra["signal"] == "B:USR1@60"}, {"uid", s.UID != nil && *s.UID == 0},
		{"notes", len(o.Notes) == len(o.Extra) && strings.Contains(strings.Join(o.Notes, "\n"), "--mail-type ")},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("%s not applied: %+v %+v", c.name, o, s)
		}
	}
	o = mustParse(t, Sbatch, []string{"--nice=-5", "-D/abs", "--requeue", "-t", "UNLIMITED", "--wrap=x"}, testCtx(nil))
	if o.Spec.Nice != -5 || o.Spec.WorkDir != "/abs" || !o.Spec.Requeue || o.Spec.TimeLimit != model.Unlimited {
		t.Errorf("second set: %+v", o.Spec)
	}
}

func TestParseExport(t *testing.T) {
	environ := []string{"HOME=/h", "SLURM_CONF=/c", "X=1"}
	tests := []struct {
		args   []string
		env    []string
		export string
		want   []string
	}{
		{nil, nil, "ALL", environ},
		{[]string{"--export=NONE"}, nil, "NONE", []string{"SLURM_CONF=/c"}},
		{[]string{"--export=X,Y=2"}, nil, "X,Y=2", []string{"SLURM_CONF=/c", "X=1", "Y=2"}},
		{[]string{"--export=ALL,X=9"}, nil, "ALL,X=9", []string{"HOME=/h", "SLURM_CONF=/c", "X=9"}},
		{nil, []string{"SBATCH_EXPORT=NIL"}, "NIL", []string{}},
	}
	for _, tc := range tests {
		o := mustParse(t, Sbatch, append(tc.args, "--wrap=x"), testCtx(nil, append(slices.Clone(environ), tc.env...)...))
		want := tc.want
		if len(tc.env) > 0 && tc.export != "NIL" {
			want = append(slices.Clone(want), tc.env...)
		}
		if o.Spec.Export != tc.export || !slices.Equal(o.Spec.Env, want) {
			t.Errorf("%q: export %q env %q, want %q %q", tc.args, o.Spec.Export, o.Spec.Env, tc.export, want)
		}
	}
}

func TestParseEnvFlags(t *testing.T) {
	for _, tc := range []struct {
		val     string
		requeue bool
	}{{"", false}, {"yes", false}, {"1", false}, {"0", true}, {"no", true}} {
		o := mustParse(t, Sbatch, []string{"--wrap=x"}, testCtx(nil, "SBATCH_NO_REQUEUE="+tc.val))
		if o.Spec.Requeue != tc.requeue {
			t.Errorf("SBATCH_NO_REQUEUE=%q: requeue %v", tc.val, o.Spec.Requeue)
		}
	}
	o := mustParse(t, Sbatch, []string{"--wrap=x"}, testCtx(nil, "SBATCH_EXCLUSIVE=", "SBATCH_PARTITION="))
	if !o.Spec.Exclusive || o.Spec.Partition != "" {
		t.Errorf("SBATCH_EXCLUSIVE: %+v", o.Spec)
	}
}

func TestParseSrun(t *testing.T) {
	ctx := testCtx(nil, "SLURM_NTASKS=8", "SLURM_PARTITION=gpu", "SLURM_JOB_ID=42", "SLURM_LABELIO=1", "SBATCH_TIMELIMIT=5")
	o := mustParse(t, Srun, []string{"-n2", "-u", "--pty", "-I", "--exact", "/bin/bash", "-l"}, ctx)
	s := o.Spec
	if !slices.Equal(o.Command, []string{"/bin/bash", "-l"}) || !slices.Equal(s.Argv, o.Command) || !s.Interactive ||
		s.Name != "bash" || s.NTasks != 2 || s.Partition != "gpu" || o.JobID != "42" || !o.Label || !o.Unbuffered ||
		!o.Pty || o.Immediate != 1 || !o.Exact || s.TimeLimit != model.Unset || s.Requeue || s.Script != "" {
		t.Errorf("srun: %+v %+v", o, s)
	}
	o = mustParse(t, Srun, []string{"-I5", "-W", "30", "-K1", "true"}, testCtx(nil))
	if o.Immediate != 5 || o.WaitSec != 30 || !o.KillOnBadExit {
		t.Errorf("srun -I5: %+v", o)
	}
}

func TestParseSalloc(t *testing.T) {
	o := mustParse(t, Salloc, []string{"-N1", "--immediate=10"}, testCtx(nil, "SALLOC_PARTITION=debug", "SBATCH_PARTITION=no", "A=b"))
	s := o.Spec
	if s.Name != "interactive" || s.Partition != "debug" || o.Immediate != 10 || len(o.Command) != 0 || !s.Interactive ||
		!slices.Equal(s.Env, []string{"SALLOC_PARTITION=debug", "SBATCH_PARTITION=no", "A=b"}) {
		t.Errorf("salloc: %+v %+v", o, s)
	}
	o = mustParse(t, Salloc, []string{"--no-shell"}, testCtx(nil))
	if o.Spec.Name != "no-shell" {
		t.Errorf("salloc --no-shell name %q", o.Spec.Name)
	}
	o = mustParse(t, Salloc, []string{"-J", "x", "srun", "-n2", "hostname"}, testCtx(nil))
	if o.Spec.Name != "x" || !slices.Equal(o.Command, []string{"srun", "-n2", "hostname"}) {
		t.Errorf("salloc command: %+v", o)
	}
}

func TestParseHelp(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"-h", "--bogus"}, {"--time=abc", "-h"}, {"--he"}} {
		o, err := Parse(Sbatch, args, testCtx(nil))
		if err != nil || !o.Help {
			t.Errorf("%q: help not reported: %v", args, err)
		}
	}
	if o, err := Parse(Srun, []string{"--usage"}, testCtx(nil)); err != nil || !o.Usage {
		t.Errorf("srun --usage: %v", err)
	}
	if o, err := Parse(Salloc, []string{"-V"}, testCtx(nil)); err != nil || !o.Version {
		t.Errorf("salloc -V: %v", err)
	}
	if _, err := Parse(Sbatch, []string{"--bogus", "--help"}, testCtx(nil)); err == nil {
		t.Errorf("--bogus before --help should fail")
	}
	for _, k := range []Kind{Sbatch, Srun, Salloc} {
		h := HelpText(k)
		if !strings.HasPrefix(h, "Usage: "+k.String()) || !strings.Contains(h, "--job-name=jobname") {
			t.Errorf("HelpText(%v) =\n%s", k, h)
		}
		if !strings.HasPrefix(UsageText(k), "Usage: "+k.String()) {
			t.Errorf("UsageText(%v)", k)
		}
	}
}

func TestParseErrors(t *testing.T) {
	files := map[string]string{
		"/home/u/bad.sh":   "#!/bin/sh\n#SBATCH --bogus\n",
		"/home/u/pos.sh":   "#!/bin/sh\n#SBATCH -J x stray\n",
		"/home/u/quote.sh": "#!/bin/sh\n#SBATCH -J 'x\n",
		"/home/u/mem.sh":   "#!/bin/sh\n#SBATCH --mem=1G --mem-per-cpu=1G\n",
		"/home/u/time.sh":  "#!/bin/sh\n#SBATCH -t 5\n",
		"/home/u/bin":      "\x7fELF\x02",
		"/home/u/dos.sh":   "#!/bin/sh\r\n",
	}
	tests := []struct {
		kind  Kind
		args  []string
		env   []string
		lines string
		exit  int
	}{
		{Sbatch, []string{"--foo"}, nil, "sbatch: unrecognized option '--foo'\nTry \"sbatch --help\" for more information", 255},
		{Sbatch, []string{"--foo=bar"}, nil, "sbatch: unrecognized option '--foo=bar'\nTry \"sbatch --help\" for more information", 255},
		{Srun, []string{"-y"}, nil, "srun: invalid option -- 'y'\nTry \"srun --help\" for more information", 255},
		{Sbatch, []string{"-J"}, nil, "sbatch: option requires an argument -- 'J'\nTry \"sbatch --help\" for more information", 255},
		{Salloc, []string{"--partition"}, nil, "salloc: option '--partition' requires an argument\nTry \"salloc --help\" for more information", 255},
		{Sbatch, []string{"--hold=yes"}, nil, "sbatch: option '--hold' doesn't allow an argument\nTry \"sbatch --help\" for more information", 255},
		{Sbatch, []string{"--mem-per=1"}, nil, "sbatch: option '--mem-per=1' is ambiguous; possibilities: '--mem-per-cpu' '--mem-per-gpu'\nTry \"sbatch --help\" for more information", 255},
		{Sbatch, []string{"--time=abc", "--wrap=true"}, nil, "sbatch: error: Invalid --time specification", 255},
		{Sbatch, []string{"--wrap=true"}, []string{"SBATCH_TIMELIMIT=x"}, "sbatch: error: Invalid --time specification", 255},
		{Sbatch, []string{"--time-min=x", "--wrap=true"}, nil, "sbatch: error: Invalid --time-min specification", 255},
		{Sbatch, []string{"--mem=lots", "--wrap=true"}, nil, "sbatch: error: Invalid --mem specification", 255},
		{Sbatch, []string{"--mem-per-cpu=0", "--wrap=true"}, nil, "sbatch: error: Invalid --mem-per-cpu specification", 255},
		{Sbatch, []string{"--mem=1G", "--mem-per-cpu=1G", "--wrap=true"}, nil, "sbatch: fatal: --mem, --mem-per-cpu, and --mem-per-gpu are mutually exclusive.", 0},
		{Sbatch, []string{"mem.sh"}, nil, "sbatch: fatal: --mem, --mem-per-cpu, and --mem-per-gpu are mutually exclusive.", 0},
		{Srun, []string{"true"}, []string{"SLURM_MEM_PER_CPU=1", "SLURM_MEM_PER_NODE=1"}, "srun: fatal: SLURM_MEM_PER_CPU, SLURM_MEM_PER_GPU, and SLURM_MEM_PER_NODE are mutually exclusive.", 0},
		{Sbatch, []string{"-a", "5-1", "--wrap=true"}, nil, "sbatch: error: Batch job submission failed: Invalid job array specification", 0},
		{Sbatch, []string{"--wrap=true"}, []string{"SBATCH_ARRAY_INX=x"}, "sbatch: error: Batch job submission failed: Invalid job array specification", 0},
		{Sbatch, []string{"-d", "afterok:x", "--wrap=true"}, nil, "sbatch: error: Batch job submission failed: Job dependency problem", 0},
		{Srun, []string{"-d", "bogus:1", "true"}, nil, "srun: error: Unable to allocate resources: Job dependency problem", 0},
		{Salloc, []string{"-d", "afterok"}, nil, "salloc: error: Job submit/allocate failed: Job dependency problem", 0},
		{Sbatch, []string{"--begin=someday", "--wrap=true"}, nil, "sbatch: error: Invalid --begin specification", 255},
		{Sbatch, []string{"-N", "4-2", "--wrap=true"}, nil, "sbatch: error: Maximum node count 2 is less than minimum node count 4", 255},
		{Sbatch, []string{"-n", "0", "--wrap=true"}, nil, "sbatch: error: Invalid numeric value \"0\" for --ntasks.", 0},
		{Sbatch, []string{"-c", "x", "--wrap=true"}, nil, "sbatch: error: Invalid numeric value \"x\" for --cpus-per-task.", 0},
		{Sbatch, []string{"--nice=9999999999", "--wrap=true"}, nil, "sbatch: error: Invalid --nice value, out of range (+/- 2147483645)", 255},
		{Sbatch, []string{"--open-mode=x", "--wrap=true"}, nil, "sbatch: error: Invalid --open-mode specification", 255},
		{Sbatch, []string{"--exclusive=bogus", "--wrap=true"}, nil, "sbatch: error: Invalid --exclusive specification", 255},
		{Sbatch, []string{"--exclusive", "-s", "--wrap=true"}, nil, "sbatch: fatal: --exclusive and --oversubscribe options are mutually exclusive", 0},
		{Sbatch, []string{"--mail-type=SOMETIMES", "--wrap=true"}, nil, "sbatch: error: Invalid --mail-type specification", 255},
		{Sbatch, []string{"--signal=R:BOGUS", "--wrap=true"}, nil, "sbatch: error: Invalid --signal specification", 255},
		{Sbatch, []string{"--wrap=true", "extra"}, nil, "sbatch: error: Script arguments not permitted with --wrap option", 0},
		{Sbatch, nil, nil, "sbatch: error: Batch script is empty!", 0},
		{Sbatch, []string{"missing.sh"}, nil, "sbatch: error: Unable to open file missing.sh", 0},
		{Sbatch, []string{"bin"}, nil, "sbatch: error: This does not look like a batch script.  The first\nsbatch: error: line must start with #! followed by the path to an interpreter.\nsbatch: error: For instance: #!/bin/sh", 0},
		{Sbatch, []string{"dos.sh"}, nil, "sbatch: error: Batch script contains DOS line breaks (\\r\\n)\nsbatch: error: instead of expected UNIX line breaks (\\n).", 0},
		{Sbatch, []string{"bad.sh"}, nil, "sbatch: unrecognized option '--bogus'\nTry \"sbatch --help\" for more information", 255},
		{Sbatch, []string{"pos.sh"}, nil, "sbatch: error: Invalid directive found in batch script: stray", 255},
		{Sbatch, []string{"quote.sh"}, nil, "sbatch: fatal: quote.sh: line 2: Unmatched `'` in [#SBATCH -J 'x]", 0},
		{Sbatch, []string{"-t", "x", "time.sh"}, nil, "sbatch: error: Invalid --time specification", 255},
		{Srun, nil, nil, "srun: fatal: No command given to execute.", 0},
		{Srun, []string{"--pty", "-o", "x", "bash"}, nil, "srun: error: --error/--input/--output are incompatible with --pty", 0},
		{Srun, []string{"--exclusive", "--overlap", "true"}, nil, "srun: error: --exclusive and --overlap are mutually exclusive", 0},
		{Srun, []string{"-Ix", "true"}, nil, "srun: error: Invalid numeric value \"x\" for immediate.", 0},
		{Srun, []string{"--array=1", "true"}, nil, "srun: unrecognized option '--array=1'\nTry \"srun --help\" for more information", 255},
	}
	for _, tc := range tests {
		_, err := Parse(tc.kind, tc.args, testCtx(files, tc.env...))
		var e *Error
		if !errors.As(err, &e) {
			t.Errorf("%v %q: error %v is not *Error", tc.kind, tc.args, err)
			continue
		}
		if got := strings.Join(e.Lines(), "\n"); got != tc.lines || e.Exit != tc.exit {
			t.Errorf("%v %q:\n got %q (exit %d)\nwant %q (exit %d)", tc.kind, tc.args, got, e.Exit, tc.lines, tc.exit)
		}
	}
}

func TestOptionTables(t *testing.T) {
	for _, k := range []Kind{Sbatch, Srun, Salloc} {
		idx := newOptIndex(k)
		seen := map[string]bool{}
		for i := range optTable {
			d := &optTable[i]
			if !d.kinds.has(k) {
				continue
			}
			if seen[d.long] {
				t.Errorf("%v: --%s defined twice", k, d.long)
			}
			seen[d.long] = true
		}
		shorts := map[byte]string{}
		for _, d := range optTable {
			if d.short == 0 || !d.kinds.has(k) {
				continue
			}
			if o, dup := shorts[d.short]; dup {
				t.Errorf("%v: -%c is both --%s and --%s", k, d.short, o, d.long)
			}
			shorts[d.short] = d.long
		}
		for _, eo := range envTables[k] {
			if idx.long[eo.long] == nil {
				t.Errorf("%v: %s names unknown option --%s", k, eo.env, eo.long)
			}
		}
	}
	if _, err := Parse(Kind(7), nil, Context{}); err == nil {
		t.Errorf("unknown kind accepted")
	}
}

func TestParsePrivilegedOptions(t *testing.T) {
	for _, opt := range []string{"--uid=0", "--gid=0"} {
		_, err := Parse(Sbatch, []string{opt, "--wrap=true"}, testCtx(nil))
		var e *Error
		if !errors.As(err, &e) || e.Exit != 255 || !strings.Contains(e.Msg, "only permitted by root user") {
			t.Errorf("%s as a user: %v", opt, err)
		}
	}
	o := mustParse(t, Sbatch, []string{"--priority=top", "--wrap=true"}, testCtx(nil))
	if o.Spec.Priority == nil || *o.Spec.Priority != 1<<32-2 {
		t.Errorf("--priority=top: %v", o.Spec.Priority)
	}
	if _, err := Parse(Sbatch, []string{"--priority=-3", "--wrap=true"}, testCtx(nil)); err == nil {
		t.Error("--priority=-3 accepted")
	}
}

func TestParseUmask(t *testing.T) {
	ctx := testCtx(nil)
	ctx.Umask = func() (uint32, bool) { return 0o077, true }
	o := mustParse(t, Sbatch, []string{"--wrap=true"}, ctx)
	if o.Spec.Umask == nil || *o.Spec.Umask != 0o077 || !slices.Contains(o.Spec.Env, "SLURM_UMASK=0077") {
		t.Errorf("umask 077: %v %q", o.Spec.Umask, o.Spec.Env)
	}
	// A job's own SLURM_UMASK wins over the process's (srun in a batch job).
	ctx = testCtx(nil, "SLURM_UMASK=0027")
	ctx.Umask = func() (uint32, bool) { return 0o022, true }
	o = mustParse(t, Srun, []string{"true"}, ctx)
	if o.Spec.Umask == nil || *o.Spec.Umask != 0o027 {
		t.Errorf("SLURM_UMASK=0027: %v", o.Spec.Umask)
	}
	if o = mustParse(t, Sbatch, []string{"--wrap=true"}, testCtx(nil)); o.Spec.Umask != nil {
		t.Errorf("unknown umask became %v", *o.Spec.Umask)
	}
}
