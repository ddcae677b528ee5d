package stepenv

import (
	"path/filepath"
	"strconv"
	"strings"

	"github.com/drover-hpc/drover/internal/model"
)

// NoArrayTaskValue is what %a prints outside job arrays: Slurm's NO_VAL
// (0xfffffffe), kept because scripts and tools have come to expect it.
const NoArrayTaskValue = 4294967294

// maxPad is the widest zero padding a pattern may ask for; wider requests
// are clamped to it, as Slurm does.
const maxPad = 10

// Fields are the values a filename pattern can refer to.
type Fields struct {
	JobID       uint32 // %j, and %A outside arrays
	ArrayJobID  uint32 // %A; 0 when not an array
	ArrayTaskID int    // %a, %b; model.NoArrayTask when not an array
	User        string // %u
	JobName     string // %x
	Node        string // %N (its short form)
	NodeRank    int    // %n, relative to the step
	TaskRank    int    // %t
	// StepID is the numeric step id (%s, and %J as "jobid.stepid"); a
	// negative value marks a special step (batch, extern, interactive) whose
	// %s is StepName and whose %J is the job id alone.
	StepID   int
	StepName string
}

// BatchFields are the pattern values for the batch step of job on node: the
// first (and only) node and task of the step, ranks 0.
func BatchFields(job *model.Job, node string) Fields {
	f := Fields{
		JobID:       uint32(job.ID),
		ArrayJobID:  uint32(job.ArrayJobID),
		ArrayTaskID: job.ArrayTaskID,
		User:        job.UserName,
		JobName:     job.Name,
		Node:        node,
		StepID:      -1,
		StepName:    "batch",
	}
	if f.JobName == "" && job.Spec != nil {
		f.JobName = job.Spec.Name
	}
	return f
}

// ExpandPattern replaces the specifiers of a -o/-e/-i filename pattern:
//
//	%%  a literal %             %j  job id
//	%A  array master job id     %J  job id and step id, "128.0" (job id alone for batch)
//	    (job id outside arrays) %N  short node name
//	%a  array task id           %n  node rank in the step
//	    (4294967294 outside)    %s  step id ("batch" for the batch step)
//	%b  array task id mod 10    %t  task rank
//	%u  user name               %x  job name
//
// Digits between % and a numeric specifier zero-pad it: "job%4j.out" gives
// "job0128.out"; padding wider than 10 is clamped to 10, and it is ignored
// for text (%N, %u, %x). An unknown specifier, with its digits, is kept as
// written, and so is a trailing "%". (Slurm drops the % and keeps only the
// last digit there; reproducing that helps no one.)
//
// A backslash anywhere turns substitution off for the whole pattern: the
// backslashes are removed ("\\" keeps one) and every % stays literal.
func ExpandPattern(pattern string, f Fields) string {
	if strings.IndexByte(pattern, '\\') >= 0 {
		return unescape(pattern)
	}
	if strings.IndexByte(pattern, '%') < 0 {
		return pattern
	}
	var b strings.Builder
	b.Grow(len(pattern) + 16)
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		if c != '%' {
			b.WriteByte(c)
			continue
		}
		// pattern[i] is '%': read optional digits, then the specifier.
		j := i + 1
		pad := 0
		for j < len(pattern) && pattern[j] >= '0' && pattern[j] <= '9' {
			pad = min(pad*10+int(pattern[j]-'0'), maxPad)
			j++
		}
		if j == len(pattern) {
			b.WriteString(pattern[i:]) // trailing "%" or "%12"
			break
		}
		if pattern[j] == '%' && j == i+1 {
			b.WriteByte('%')
			i = j
			continue
		}
		if !expandOne(&b, pattern[j], pad, &f) {
			b.WriteString(pattern[i : j+1])
		}
		i = j
	}
	return b.String()
}

// expandOne writes the value of specifier spec; false if spec is unknown.
func expandOne(b *strings.Builder, spec byte, pad int, f *Fields) bool {
	switch spec {
	case 'A':
		if f.ArrayJobID != 0 {
			writePadded(b, uint64(f.ArrayJobID), pad)
		} else {
			writePadded(b, uint64(f.JobID), pad)
		}
	case 'a':
		writePadded(b, arrayTask(f), pad)
	case 'b':
		// Outside arrays this is 4294967294 mod 10 = 4, as in Slurm.
		writePadded(b, arrayTask(f)%10, pad)
	case 'j':
		writePadded(b, uint64(f.JobID), pad)
	case 'J':
		writePadded(b, uint64(f.JobID), pad)
		if f.StepID >= 0 {
			b.WriteByte('.')
			b.WriteString(strconv.Itoa(f.StepID))
		}
	case 'N':
		b.WriteString(shortName(f.Node))
	case 'n':
		writeInt(b, f.NodeRank, pad)
	case 's':
		if f.StepID >= 0 {
			writeInt(b, f.StepID, pad)
		} else {
			b.WriteString(f.StepName)
		}
	case 't':
		writeInt(b, f.TaskRank, pad)
	case 'u':
		b.WriteString(f.User)
	case 'x':
		b.WriteString(f.JobName)
	default:
		return false
	}
	return true
}

func arrayTask(f *Fields) uint64 {
	if f.ArrayTaskID < 0 {
		return NoArrayTaskValue
	}
	return uint64(f.ArrayTaskID)
}

func writeInt(b *strings.Builder, v, pad int) {
	if v < 0 {
		// Not meaningful in a file name, but never lose information.
		b.WriteByte('-')
		v = -v
	}
	writePadded(b, uint64(v), pad)
}

func writePadded(b *strings.Builder, v uint64, pad int) {
	s := strconv.FormatUint(v, 10)
	for n := len(s); n < pad; n++ {
		b.WriteByte('0')
	}
	b.WriteString(s)
}

// shortName is a host name up to its first dot.
func shortName(node string) string {
	if i := strings.IndexByte(node, '.'); i > 0 {
		return node[:i]
	}
	return node
}

// unescape drops every backslash except that "\\" stands for one.
func unescape(p string) string {
	var b strings.Builder
	b.Grow(len(p))
	for i := 0; i < len(p); i++ {
		if p[i] != '\\' {
			b.WriteByte(p[i])
			continue
		}
		if i+1 < len(p) && p[i+1] == '\\' {
			b.WriteByte('\\')
			i++
		}
	}
	return b.String()
}

// DefaultOutput is the stdout (and stderr) pattern of a batch job that
// named none: slurm-%j.out, or slurm-%A_%a.out for an array task.
func DefaultOutput(job *model.Job) string {
	if job.IsArrayTask() {
		return "slurm-%A_%a.out"
	}
	return "slurm-%j.out"
}

// ResolvePath makes an expanded file name absolute against dir, the job's
// working directory. Absolute names and "" are returned unchanged, as is p
// when dir is "" (the caller then relies on the step's own chdir).
func ResolvePath(dir, p string) string {
	if p == "" || dir == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(dir, p)
}
