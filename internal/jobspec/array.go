package jobspec

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/units"
)

// MaxArrayTasks bounds how many task ids one --array value may name. The
// controller enforces the configured MaxArraySize; this bound only keeps a
// hostile or mistyped value from allocating without limit.
const MaxArrayTasks = 4_000_000

// ParseArray parses an --array value: comma-separated indexes and ranges
// with an optional step ("0-15:4", "1,3,5-7") and an optional "%N" throttle
// at the end ("1-100%10"). Task ids come back sorted and unique. Errors carry
// Slurm's "Invalid job array specification".
func ParseArray(s string) (*model.ArraySpec, error) {
	bad := func(format string, args ...any) error {
		return &Error{Msg: msgInvalidArray, Detail: fmt.Sprintf(format, args...)}
	}
	body, thr, hasThr := strings.Cut(s, "%")
	spec := &model.ArraySpec{Raw: s}
	if hasThr {
		n, ok := parseDigits(thr, math.MaxInt32)
		if !ok {
			return nil, bad("bad throttle %q", thr)
		}
		spec.Throttle = n
	}
	if body == "" {
		return nil, bad("no indexes")
	}
	type span struct{ lo, hi, step int }
	parts := strings.Split(body, ",")
	spans := make([]span, 0, len(parts))
	total := 0
	for _, part := range parts {
		rng, stepStr, hasStep := strings.Cut(part, ":")
		loStr, hiStr, isRange := strings.Cut(rng, "-")
		lo, ok := parseDigits(loStr, math.MaxInt32)
		if !ok {
			return nil, bad("bad index %q", part)
		}
		sp := span{lo, lo, 1}
		if isRange {
			if sp.hi, ok = parseDigits(hiStr, math.MaxInt32); !ok {
				return nil, bad("bad range %q", part)
			}
			if sp.hi < sp.lo {
				return nil, bad("range %q is reversed", part)
			}
		}
		if hasStep {
			if !isRange {
				return nil, bad("step without a range in %q", part)
			}
			if sp.step, ok = parseDigits(stepStr, math.MaxInt32); !ok || sp.step == 0 {
				return nil, bad("bad step in %q", part)
			}
		}
		total += (sp.hi-sp.lo)/sp.step + 1
		if total > MaxArrayTasks {
			return nil, bad("more than %d tasks", MaxArrayTasks)
		}
		spans = append(spans, sp)
	}
	ids := make([]int, 0, total)
	for _, sp := range spans {
		for i := sp.lo; i <= sp.hi; i += sp.step {
			ids = append(ids, i)
			if i > math.MaxInt32-sp.step {
				break
			}
		}
	}
	slices.Sort(ids)
	spec.TaskIDs = slices.Compact(ids)
	return spec, nil
}

// ParseNodes parses a --nodes value: "N" (exactly N nodes), "MIN-MAX",
// "MIN-" (no maximum: max is model.Unset) or "-MAX" (min 1). Counts may carry
// a k (x1024) or m (x1048576) suffix.
func ParseNodes(s string) (min, max int, err error) {
	count := func(v string) (int, error) {
		n, err := units.ParseCount(v)
		if err != nil || strings.ContainsAny(v, "+-") {
			return 0, &Error{Msg: fmt.Sprintf("%q is not a valid node count", v), Exit: exitOption}
		}
		return n, nil
	}
	loStr, hiStr, isRange := strings.Cut(s, "-")
	if !isRange {
		if min, err = count(s); err != nil {
			return 0, 0, err
		}
		max = min
	} else {
		min, max = 1, model.Unset
		if strings.TrimSpace(loStr) != "" {
			if min, err = count(loStr); err != nil {
				return 0, 0, err
			}
		}
		if strings.TrimSpace(hiStr) != "" {
			if max, err = count(hiStr); err != nil {
				return 0, 0, err
			}
		}
	}
	if min < 1 {
		return 0, 0, &Error{Msg: fmt.Sprintf("invalid number of nodes (-N %d-%d)", min, maxOrZero(max)), Exit: exitOption}
	}
	if max != model.Unset && max < min {
		return 0, 0, &Error{Msg: fmt.Sprintf("Maximum node count %d is less than minimum node count %d", max, min), Exit: exitOption}
	}
	return min, max, nil
}

// parseDigits parses a non-empty string of ASCII digits no larger than max.
func parseDigits(s string, max int) (int, bool) {
	if s == "" || len(s) > 19 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
		if n > max {
			return 0, false
		}
	}
	return n, true
}

func maxOrZero(n int) int {
	if n == model.Unset {
		return 0
	}
	return n
}
