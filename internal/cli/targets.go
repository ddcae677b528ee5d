package cli

import (
	"slices"
	"strconv"
	"strings"

	"github.com/drover-hpc/drover/internal/model"
)

// Limits on what one job id argument may name. MaxTaskID follows Slurm's
// ceiling for MaxArraySize (4000001, so the largest index is 4000000).
const (
	MaxTaskID        = 4000000
	maxTasksPerToken = 1 << 20
)

// InvalidJobIDError reports a job id argument that is not one of the forms
// ParseJobTargets accepts. Its message is Slurm's MsgInvalidJobID; Arg is the
// offending word, for commands that print it ("Invalid job id 12x").
type InvalidJobIDError struct {
	Arg string
}

func (e *InvalidJobIDError) Error() string { return MsgInvalidJobID }

// ParseJobTargets parses job ids as users write them to scancel, scontrol
// and friends. Each argument may hold several ids separated by commas or
// white space (outside brackets). Accepted forms:
//
//	123            a job, or a whole job array
//	123_4          one array task
//	123_*          every task of an array (Tasks nil)
//	123_[1-3,7]    a list of tasks; ranges may step: 123_[1-7:2]
//	123.batch      a step: batch, extern, interactive or a number;
//	123_4.0        also on an array task (not on a task list)
//
// Tasks come back sorted and without duplicates; Raw is the id as written,
// and HasStep/Step name the step. Any
// other text fails with *InvalidJobIDError.
func ParseJobTargets(args []string) ([]JobTarget, error) {
	var out []JobTarget
	for _, arg := range args {
		words, ok := splitIDList(arg)
		if !ok || len(words) == 0 {
			return nil, &InvalidJobIDError{Arg: arg}
		}
		for _, w := range words {
			t, ok := parseTarget(w)
			if !ok {
				return nil, &InvalidJobIDError{Arg: w}
			}
			out = append(out, t)
		}
	}
	return out, nil
}

// splitIDList splits s on commas and white space that are not inside
// brackets. It fails on unbalanced or nested brackets.
func splitIDList(s string) ([]string, bool) {
	var words []string
	depth, start := 0, 0
	flush := func(end int) {
		if w := s[start:end]; w != "" {
			words = append(words, w)
		}
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '[':
			depth++
			if depth > 1 {
				return nil, false
			}
		case ']':
			depth--
			if depth < 0 {
				return nil, false
			}
		case ',', ' ', '\t', '\n', '\r':
			if depth == 0 {
				flush(i)
				start = i + 1
			}
		}
	}
	if depth != 0 {
		return nil, false
	}
	flush(len(s))
	return words, true
}

// parseTarget parses one id word (no top-level separators).
func parseTarget(w string) (JobTarget, bool) {
	t := JobTarget{Raw: w}
	n, rest := leadingDigits(w)
	if n == "" {
		return t, false
	}
	id, err := strconv.ParseUint(n, 10, 32)
	if err != nil || id == 0 {
		return t, false
	}
	t.ID = model.JobID(id)

	if strings.HasPrefix(rest, "_") {
		rest = rest[1:]
		switch {
		case strings.HasPrefix(rest, "*"):
			rest = rest[1:]
		case strings.HasPrefix(rest, "["):
			end := strings.IndexByte(rest, ']')
			if end < 0 || end != len(rest)-1 {
				return t, false // no step on a task list
			}
			tasks, ok := parseTaskList(rest[1:end])
			if !ok {
				return t, false
			}
			t.Tasks, rest = tasks, ""
		default:
			d, r := leadingDigits(rest)
			task, ok := parseTaskID(d)
			if !ok {
				return t, false
			}
			t.Tasks, rest = []int{task}, r
		}
	}
	if strings.HasPrefix(rest, ".") {
		if !validStep(rest[1:]) {
			return t, false
		}
		t.Step, _ = model.ParseStepID(rest[1:])
		t.HasStep = true
		rest = ""
	}
	return t, rest == ""
}

// parseTaskList parses "1-3,7,10-20:2" into sorted unique task ids.
func parseTaskList(s string) ([]int, bool) {
	if s == "" {
		return nil, false
	}
	var tasks []int
	for _, elem := range strings.Split(s, ",") {
		lo, hi, step, ok := parseTaskRange(elem)
		if !ok {
			return nil, false
		}
		if (hi-lo)/step+1 > maxTasksPerToken-len(tasks) {
			return nil, false
		}
		for v := lo; v <= hi; v += step {
			tasks = append(tasks, v)
		}
	}
	slices.Sort(tasks)
	return slices.Compact(tasks), true
}

// parseTaskRange parses "N", "N-M" or "N-M:S".
func parseTaskRange(s string) (lo, hi, step int, ok bool) {
	step = 1
	if i := strings.IndexByte(s, ':'); i >= 0 {
		n, err := strconv.Atoi(s[i+1:])
		if err != nil || n < 1 || !allDigits(s[i+1:]) {
			return 0, 0, 0, false
		}
		step, s = n, s[:i]
		if strings.IndexByte(s, '-') < 0 {
			return 0, 0, 0, false // a step needs a range
		}
	}
	a, b, isRange := strings.Cut(s, "-")
	if lo, ok = parseTaskID(a); !ok {
		return 0, 0, 0, false
	}
	hi = lo
	if isRange {
		if hi, ok = parseTaskID(b); !ok || hi < lo {
			return 0, 0, 0, false
		}
	}
	return lo, hi, step, true
}

func parseTaskID(s string) (int, bool) {
	if s == "" || len(s) > 7 || !allDigits(s) {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	if err != nil || n > MaxTaskID {
		return 0, false
	}
	return n, true
}

func validStep(s string) bool {
	switch s {
	case "batch", "extern", "interactive":
		return true
	}
	if s == "" || len(s) > 9 || !allDigits(s) {
		return false
	}
	return true
}

func leadingDigits(s string) (digits, rest string) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return s[:i], s[i:]
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}
