package jobspec

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/drover-hpc/drover/internal/model"
)

func FuzzParseArray(f *testing.F) {
	for _, s := range []string{"0-15:4%2", "1,3,5-7", "1-100%10", "7", "5-1", "1-10:0", "0-3999999", "%", ",", "1-2147483647:2147483647"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := ParseArray(s)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Msg != msgInvalidArray {
				t.Fatalf("ParseArray(%q): unexpected error %v", s, err)
			}
			return
		}
		if len(a.TaskIDs) == 0 || len(a.TaskIDs) > MaxArrayTasks || a.Throttle < 0 || a.Raw != s {
			t.Fatalf("ParseArray(%q) = %d ids, throttle %d", s, len(a.TaskIDs), a.Throttle)
		}
		for i, id := range a.TaskIDs {
			if id < 0 || (i > 0 && id <= a.TaskIDs[i-1]) {
				t.Fatalf("ParseArray(%q): ids not sorted, unique and non-negative at %d", s, i)
			}
		}
	})
}

func FuzzParseDependency(f *testing.F) {
	for _, s := range []string{"afterok:1:2,afterany:3", "a?b", "after:5+10", "singleton", "afterok:123_4", "123", "afterok:1_*?after:2+0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDependency(s)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Msg != msgDependency {
				t.Fatalf("ParseDependency(%q): unexpected error %v", s, err)
			}
			return
		}
		if len(d.Terms) == 0 || d.Raw != s {
			t.Fatalf("ParseDependency(%q) = %+v", s, d)
		}
		for _, term := range d.Terms {
			if term.Type != model.DepSingleton && term.Job == 0 || term.Delay < 0 || term.Task < model.NoArrayTask {
				t.Fatalf("ParseDependency(%q): bad term %+v", s, term)
			}
		}
	})
}

func FuzzParseBegin(f *testing.F) {
	for _, s := range []string{"16:00", "now+1hour", "2010-01-20T12:34:00", "teatime", "4/1/27", "uts1767225600", "12:00am tomorrow"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if _, err := ParseBegin(s, testNow); err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("ParseBegin(%q): unexpected error %v", s, err)
			}
		}
	})
}

func FuzzDirectives(f *testing.F) {
	for _, s := range []string{
		"#!/bin/sh\n#SBATCH -J x # c\n#SBATCH --comment=\"a b\"\necho\n#SBATCH -J y\n",
		"#SBATCH 'unterminated\n", "#SBATCH hetjob\n", "#SBATCH a\\\n", "\n\n#SBATCH\t-N\t2\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, script []byte) {
		args, err := Directives(script, "#SBATCH")
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || !strings.HasPrefix(e.Msg, "line ") {
				t.Fatalf("Directives: unexpected error %v", err)
			}
			return
		}
		for _, a := range args {
			if strings.ContainsRune(a, '\n') {
				t.Fatalf("Directives: argument %q spans lines", a)
			}
		}
	})
}

// FuzzParse feeds arbitrary command lines (fields separated by '\x1f'),
// scripts and environments to all three commands.
func FuzzParse(f *testing.F) {
	f.Add(uint8(0), "-J\x1fx\x1f--time=5\x1fjob.sh\x1farg", "#!/bin/sh\n#SBATCH -N 2-4 --mem=1G\n", "SBATCH_PARTITION=p")
	f.Add(uint8(0), "--wrap=true\x1f-a\x1f1-3%1\x1f-d\x1fafterok:1", "", "SBATCH_EXPORT=NONE")
	f.Add(uint8(0), "", "#!/bin/sh\n#SBATCH --mem=1 --mem-per-cpu=2\n", "")
	f.Add(uint8(1), "-n2\x1f-l\x1f-I5\x1fhostname", "", "SLURM_NTASKS=4\x1fSLURM_MEM_PER_CPU=1")
	f.Add(uint8(2), "-N1\x1f--immediate\x1fbash", "", "SALLOC_TIMELIMIT=x")
	f.Add(uint8(0), "--gres=gpu:a100:2\x1f--cpus-per-gpu=2\x1f--wrap=x", "#!/bin/sh\n#SBATCH -G 3 --mem-per-gpu=1G\n", "SBATCH_GPUS_PER_TASK=1")
	f.Add(uint8(0), "-N2\x1f--gpus-per-task=1\x1fjob.sh", "#!/bin/sh\n#SBATCH --gres=gres:gpu:0,gpu:v100:1\n", "SBATCH_GRES=none")
	f.Add(uint8(2), "-G\x1fa100\x1f--gpus-per-task=1", "", "SALLOC_GPUS=4\x1fSALLOC_MEM_PER_GPU=1")
	f.Add(uint8(1), "--gpus-per-node=2\x1ftrue", "", "SLURM_JOB_ID=3\x1fSLURM_MEM_PER_GPU=5")
	f.Fuzz(func(t *testing.T, kind uint8, argLine, script, envLine string) {
		ctx := testCtx(map[string]string{"/home/u/job.sh": script}, strings.Split(envLine, "\x1f")...)
		ctx.Stdin = strings.NewReader(script)
		var args []string
		if argLine != "" {
			args = strings.Split(argLine, "\x1f")
		}
		k := Kind(kind % 3)
		o, err := Parse(k, args, ctx)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Msg == "" || len(e.Lines()) == 0 || e.Prog != k.String() {
				t.Fatalf("Parse: bad error %#v", err)
			}
			return
		}
		if o.Help || o.Usage || o.Version {
			return
		}
		s := o.Spec
		if g := s.GPUs; g != nil {
			set := 0
			for _, n := range []int{g.PerNode, g.Total, g.PerTask} {
				if n > 0 {
					set++
				}
			}
			if set != 1 || g.PerNode < 0 || g.Total < 0 || g.PerTask < 0 || g.CPUsPerGPU < 0 || g.MemPerGPU < 0 ||
				(g.PerTask > 0 && k != Srun && s.NTasks < 1) {
				t.Fatalf("GPU request %+v (ntasks %d)", g, s.NTasks)
			}
		}
		switch {
		case s.MinNodes != model.Unset && s.MinNodes < 1,
			s.MaxNodes != model.Unset && s.MaxNodes < s.MinNodes,
			s.NTasks != model.Unset && s.NTasks < 1,
			s.CPUsPerTask != model.Unset && s.CPUsPerTask < 1,
			s.TimeLimit != model.Unset && s.TimeLimit != model.Unlimited && s.TimeLimit <= 0,
			s.MemPerNode != model.Unset && s.MemPerNode < 0,
			s.MemPerCPU != model.Unset && s.MemPerCPU <= 0,
			s.MemPerNode != model.Unset && s.MemPerCPU != model.Unset,
			k == Srun && (len(s.Argv) == 0 || !slices.Equal(s.Argv, o.Command)),
			k == Sbatch && s.Script == "":
			t.Fatalf("Parse(%v, %q): inconsistent spec %+v", k, args, s)
		}
	})
}
