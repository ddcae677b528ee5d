package jobspec

import (
	"fmt"
	"math"
	"strings"

	"github.com/drover-hpc/drover/internal/model"
)

// maxJobID is the largest job id a dependency may name (Slurm reserves the
// two values above it as NO_VAL and INFINITE).
const maxJobID = math.MaxUint32 - 2

// ParseDependency parses a --dependency value: terms "type:job[:job...]"
// joined by "," (all must hold) or "?" (any may hold), never both. Types are
// after, afterany, afterok, afternotok, aftercorr and singleton (which takes
// no jobs). A job is "123", an array task "123_4", or "123_*" for the whole
// array; "after" jobs may carry a "+minutes" delay. A bare job list with no
// type means afterany. Errors carry Slurm's "Job dependency problem".
func ParseDependency(s string) (*model.Dependency, error) {
	bad := func(format string, args ...any) error {
		return &Error{Msg: msgDependency, Detail: fmt.Sprintf(format, args...)}
	}
	if s == "" {
		return nil, bad("empty dependency")
	}
	sep := ","
	anyOf := strings.Contains(s, "?")
	if anyOf {
		if strings.Contains(s, ",") {
			return nil, bad("',' and '?' cannot be mixed")
		}
		sep = "?"
	}
	dep := &model.Dependency{Raw: s, Any: anyOf}
	for _, part := range strings.Split(s, sep) {
		typ, jobs, hasJobs := strings.Cut(part, ":")
		var dt model.DepType
		switch t := model.DepType(strings.ToLower(typ)); t {
		case model.DepSingleton:
			if hasJobs {
				return nil, bad("singleton takes no job ids")
			}
			dep.Terms = append(dep.Terms, model.DepTerm{Type: t, Task: model.NoArrayTask})
			continue
		case model.DepAfter, model.DepAfterAny, model.DepAfterOK, model.DepAfterNotOK, model.DepAfterCorr:
			dt = t
		default:
			if typ == "" || typ[0] < '0' || typ[0] > '9' {
				return nil, bad("unknown dependency type %q", typ)
			}
			dt, jobs, hasJobs = model.DepAfterAny, part, true
		}
		if !hasJobs || jobs == "" {
			return nil, bad("%s needs a job id", typ)
		}
		for _, job := range strings.Split(jobs, ":") {
			term, err := parseDepJob(dt, job)
			if err != "" {
				return nil, bad("%s", err)
			}
			dep.Terms = append(dep.Terms, term)
		}
	}
	return dep, nil
}

// parseDepJob parses "123", "123_4", "123_*" and, for after, "123+10".
func parseDepJob(dt model.DepType, s string) (model.DepTerm, string) {
	term := model.DepTerm{Type: dt, Task: model.NoArrayTask}
	id, delay, hasDelay := strings.Cut(s, "+")
	if hasDelay {
		if dt != model.DepAfter {
			return term, "only after takes a +minutes delay"
		}
		mins, ok := parseDigits(delay, math.MaxInt32)
		if !ok {
			return term, fmt.Sprintf("bad delay %q", delay)
		}
		term.Delay = int64(mins) * 60
	}
	job, task, hasTask := strings.Cut(id, "_")
	n, ok := parseDigits(job, maxJobID)
	if !ok || n == 0 {
		return term, fmt.Sprintf("bad job id %q", s)
	}
	term.Job = model.JobID(n)
	if hasTask && task != "*" {
		if term.Task, ok = parseDigits(task, math.MaxInt32); !ok {
			return term, fmt.Sprintf("bad array task %q", s)
		}
	}
	return term, ""
}
