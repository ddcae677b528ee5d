package jobspec

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestDirectives(t *testing.T) {
	tests := []struct {
		name, script string
		want         []string
	}{
		{"basic", "#!/bin/sh\n#SBATCH -J x\n#SBATCH --time=5\necho\n", []string{"-J", "x", "--time=5"}},
		{"trailing comment", "#!/bin/sh\n#SBATCH -J x # a comment\n", []string{"-J", "x"}},
		{"comment glued", "#SBATCH --job-name=foo#bar baz\n", []string{"--job-name=foo"}},
		{"several per line", "#SBATCH -N 2 -n 4\n", []string{"-N", "2", "-n", "4"}},
		{"double quotes", "#SBATCH --comment=\"two words\" -J 'single # kept'\n", []string{"--comment=two words", "-J", "single # kept"}},
		{"escapes", `#SBATCH --comment=a\ b\#c\"d` + "\n", []string{`--comment=a b#c"d`}},
		{"empty quotes", "#SBATCH --comment \"\" -J x\n", []string{"--comment", "", "-J", "x"}},
		{"stops at command", "#!/bin/sh\n\n# plain comment\n   # indented comment\n#SBATCH -J a\nhostname\n#SBATCH -J b\n", []string{"-J", "a"}},
		{"stops at indented command", "#SBATCH -J a\n  echo\n#SBATCH -J b\n", []string{"-J", "a"}},
		{"indented directive is a comment", "  #SBATCH -J a\n#SBATCH -J b\n", []string{"-J", "b"}},
		{"no space after prefix", "#SBATCH--time=5\n", []string{"--time=5"}},
		{"tabs and CR", "#SBATCH\t-J\tx\r\n", []string{"-J", "x"}},
		{"bare prefix", "#SBATCH\n#SBATCH   \n", nil},
		{"other prefix ignored", "#PBS -N x\n#SBATCH -J y\n", []string{"-J", "y"}},
		{"no newline at end", "#SBATCH -J x", []string{"-J", "x"}},
		{"empty", "", nil},
	}
	for _, tc := range tests {
		got, err := Directives([]byte(tc.script), "#SBATCH")
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: Directives = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestDirectivesErrors(t *testing.T) {
	tests := []struct{ script, msg string }{
		{"#!/bin/sh\n#SBATCH -J 'oops\n", "line 2: Unmatched `'` in [#SBATCH -J 'oops]"},
		{"#SBATCH --comment=\"x\n", "line 1: Unmatched `\"` in [#SBATCH --comment=\"x]"},
		{"#SBATCH -N1\n#SBATCH hetjob\n#SBATCH -N2\n", `line 2: heterogeneous jobs ("hetjob") are not supported`},
	}
	for _, tc := range tests {
		_, err := Directives([]byte(tc.script), "#SBATCH")
		var e *Error
		if !errors.As(err, &e) || e.Msg != tc.msg {
			t.Errorf("Directives(%q) error = %v, want %q", tc.script, err, tc.msg)
		}
	}
}

func TestCheckScript(t *testing.T) {
	tests := []struct{ script, msg string }{
		{"#!/bin/sh\necho\n", ""},
		{"", "Batch script is empty!"},
		{" \n\t\n", "Batch script contains only whitespace!"},
		{"echo no shebang\n", msgNotScript},
		{"\x7fELF\x02\x01\x01\x00", msgNotScript},
		{"#!/bin/sh\necho \x00\n", "The Slurm controller does not allow scripts that\ncontain a NULL character '\\0'."},
		{"#!/bin/sh\r\necho\r\n", "Batch script contains DOS line breaks (\\r\\n)\ninstead of expected UNIX line breaks (\\n)."},
	}
	for _, tc := range tests {
		err := checkScript([]byte(tc.script))
		got := ""
		if err != nil {
			got = err.(*Error).Msg
		}
		if got != tc.msg {
			t.Errorf("checkScript(%q) = %q, want %q", tc.script, got, tc.msg)
		}
	}
	e := &Error{Prog: "sbatch", Msg: msgNotScript}
	want := "sbatch: error: This does not look like a batch script.  The first\n" +
		"sbatch: error: line must start with #! followed by the path to an interpreter.\n" +
		"sbatch: error: For instance: #!/bin/sh"
	if got := strings.Join(e.Lines(), "\n"); got != want {
		t.Errorf("Lines =\n%s\nwant\n%s", got, want)
	}
}

func TestExportEnv(t *testing.T) {
	env := newEnviron([]string{"HOME=/h", "PATH=/bin", "SLURM_CONF=/c", "SLURMD_X=1", "A=1", "A=2"})
	tests := []struct {
		raw  string
		want []string
	}{
		{"", []string{"HOME=/h", "PATH=/bin", "SLURM_CONF=/c", "SLURMD_X=1", "A=2"}},
		{"ALL", []string{"HOME=/h", "PATH=/bin", "SLURM_CONF=/c", "SLURMD_X=1", "A=2"}},
		{"all", []string{"HOME=/h", "PATH=/bin", "SLURM_CONF=/c", "SLURMD_X=1", "A=2"}},
		{"NONE", []string{"SLURM_CONF=/c", "SLURMD_X=1"}},
		{"NIL", []string{}},
		{"PATH,B=3", []string{"SLURM_CONF=/c", "SLURMD_X=1", "PATH=/bin", "B=3"}},
		{"ALL,HOME=/x,C=4", []string{"HOME=/x", "PATH=/bin", "SLURM_CONF=/c", "SLURMD_X=1", "A=2", "C=4"}},
		{"HOME=/x,ALL", []string{"HOME=/x", "PATH=/bin", "SLURM_CONF=/c", "SLURMD_X=1", "A=2"}},
		{"MISSING,A", []string{"SLURM_CONF=/c", "SLURMD_X=1", "A=2"}},
		{`X="a,b",Y='c'`, []string{"SLURM_CONF=/c", "SLURMD_X=1", "X=a,b", "Y=c"}},
		{`"Z=1,2"`, []string{"SLURM_CONF=/c", "SLURMD_X=1", "Z=1,2"}},
	}
	for _, tc := range tests {
		got := exportEnv(tc.raw, env)
		if !slices.Equal(got, tc.want) {
			t.Errorf("exportEnv(%q) = %q, want %q", tc.raw, got, tc.want)
		}
	}
}

func TestErrorPrint(t *testing.T) {
	var b strings.Builder
	(&Error{Prog: "sbatch", Usage: true, Msg: "sbatch: unrecognized option '--x'"}).Print(&b, "drover-sbatch")
	(&Error{Prog: "sbatch", Fatal: true, Msg: "boom"}).Print(&b, "")
	(&Error{Msg: "two\nlines"}).Print(&b, "srun")
	want := "drover-sbatch: unrecognized option '--x'\nTry \"drover-sbatch --help\" for more information\n" +
		"sbatch: fatal: boom\nsrun: error: two\nsrun: error: lines\n"
	if b.String() != want {
		t.Errorf("Print wrote\n%s\nwant\n%s", b.String(), want)
	}
	b.Reset()
	PrintUsage(&b, Srun, false)
	if b.String() != UsageText(Srun) {
		t.Errorf("PrintUsage(short) = %q", b.String())
	}
}
