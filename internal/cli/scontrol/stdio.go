package scontrol

import (
	"strconv"
	"strings"

	"github.com/drover-hpc/drover/internal/model"
)

// noArrayTask is what %a stands for outside an array: Slurm's NO_VAL - 1.
const noArrayTask = 4294967294

// stdPaths are a batch job's standard stream paths as show job prints them.
type stdPaths struct{ out, err, in string }

// paths works out the job's stdout, stderr and stdin: the patterns it was
// submitted with, or Slurm's defaults (slurm-%j.out, slurm-%A_%a.out for
// array tasks, /dev/null), expanded and made absolute against WorkDir.
func (r *runner) paths(j *model.Job, spec *model.JobSpec, userName string) stdPaths {
	out := spec.StdOut
	if out == "" {
		out = "slurm-%j.out"
		if j.IsArrayTask() {
			out = "slurm-%A_%a.out"
		}
	}
	errp := spec.StdErr
	if errp == "" {
		errp = out
	}
	in := spec.StdIn
	if in == "" {
		in = "/dev/null"
	}
	v := patternVars{
		jobID: uint64(j.ID), arrayJobID: uint64(j.ID), taskID: noArrayTask,
		user: userName, name: firstNonEmpty(j.Name, spec.Name), node: j.BatchHost(),
	}
	if j.IsArrayTask() {
		v.arrayJobID, v.taskID = uint64(j.ArrayJobID), uint64(j.ArrayTaskID)
	}
	abs := func(p string) string {
		p = expandPattern(p, v)
		if strings.HasPrefix(p, "/") {
			return p
		}
		return spec.WorkDir + "/" + p
	}
	return stdPaths{out: abs(out), err: abs(errp), in: abs(in)}
}

// patternVars are the values a filename pattern may refer to.
type patternVars struct {
	jobID, arrayJobID, taskID uint64
	user, name, node          string
}

// expandPattern replaces sbatch's filename escapes: %% %A %a %b %j %J %N %n
// %s %t %u %x. A number after the % zero-pads numeric values ("%4j" gives
// "0042"). %N stays as written while the job has no node yet; unknown
// escapes are kept as written.
func expandPattern(p string, v patternVars) string {
	if !strings.Contains(p, "%") {
		return p
	}
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		if p[i] != '%' {
			b.WriteByte(p[i])
			continue
		}
		j := i + 1
		for j < len(p) && p[j] >= '0' && p[j] <= '9' {
			j++
		}
		if j >= len(p) {
			b.WriteString(p[i:])
			break
		}
		width, _ := strconv.Atoi(p[i+1 : j])
		width = min(width, 10)
		num := func(n uint64) {
			s := strconv.FormatUint(n, 10)
			if pad := width - len(s); pad > 0 {
				s = strings.Repeat("0", pad) + s
			}
			b.WriteString(s)
		}
		switch p[j] {
		case '%':
			b.WriteByte('%')
		case 'A':
			num(v.arrayJobID)
		case 'a':
			num(v.taskID)
		case 'b':
			num(v.taskID % 10)
		case 'j':
			num(v.jobID)
		case 'J':
			num(v.jobID)
			b.WriteString(".batch")
		case 'n', 't':
			num(0)
		case 's':
			b.WriteString("batch")
		case 'u':
			b.WriteString(v.user)
		case 'x':
			b.WriteString(v.name)
		case 'N':
			if v.node == "" {
				b.WriteString(p[i : j+1])
			} else {
				b.WriteString(v.node)
			}
		default:
			b.WriteString(p[i : j+1])
		}
		i = j
	}
	return b.String()
}
