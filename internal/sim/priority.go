package sim

import (
	"fmt"
	"strconv"
	"strings"
)

// Multifactor is the part of Slurm's priority/multifactor a trace can
// feed: the age factor (time queued over PriorityMaxAge, capped at 1) and
// the job size factor (processors over the machine; with
// PriorityFavorSmall, one minus that). Priority is their weighted sum, as
// PriorityWeightAge and PriorityWeightJobSize weigh them.
type Multifactor struct {
	WeightAge, WeightJobSize uint32
	MaxAge                   int64 // seconds
	FavorSmall               bool
	// SmallRelativeToTime (PriorityFlags=SMALL_RELATIVE_TO_TIME): the
	// size is processors per minute of time limit, over the machine.
	SmallRelativeToTime bool
}

// DefaultMultifactor is the one configuration the quality figures use for
// every trace: PriorityWeightAge=100 (PriorityMaxAge 7 days, Slurm's
// default), PriorityWeightJobSize=10000 with
// PriorityFlags=SMALL_RELATIVE_TO_TIME and PriorityFavorSmall=NO, which
// ranks jobs by processors per minute of time limit: short jobs first,
// and age lifts the ones left waiting.
var DefaultMultifactor = Multifactor{WeightAge: 100, WeightJobSize: 10000, MaxAge: 7 * 86400, SmallRelativeToTime: true}

// ParseMultifactor reads "basic" (nil: submission order), "multifactor"
// (DefaultMultifactor) or "age=W,jobsize=W,maxage=S,favorsmall=yes|no".
func ParseMultifactor(s string) (*Multifactor, error) {
	switch s {
	case "basic":
		return nil, nil
	case "multifactor":
		m := DefaultMultifactor
		return &m, nil
	}
	m := DefaultMultifactor
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, fmt.Errorf("%q: want key=value", kv)
		}
		n, err := strconv.ParseInt(v, 10, 64)
		switch k {
		case "favorsmall":
			m.FavorSmall, err = strings.EqualFold(v, "yes"), nil
		case "smallreltime":
			m.SmallRelativeToTime, err = strings.EqualFold(v, "yes"), nil
		case "age", "jobsize":
			if err != nil || n < 0 || n > 1<<32-1 {
				return nil, fmt.Errorf("%s=%s: want a weight from 0 to 4294967295", k, v)
			}
			if k == "age" {
				m.WeightAge = uint32(n)
			} else {
				m.WeightJobSize = uint32(n)
			}
		case "maxage":
			if err != nil || n < 1 {
				return nil, fmt.Errorf("maxage=%s: want seconds > 0", v)
			}
			m.MaxAge = n
		default:
			return nil, fmt.Errorf("unknown factor %q", k)
		}
	}
	return &m, nil
}

// Func returns the priority of a pending job at now on a machine of procs.
func (m *Multifactor) Func(procs int) func(j *Job, now int64) uint32 {
	if m == nil {
		return nil
	}
	return func(j *Job, now int64) uint32 {
		age := min(1, float64(now-j.Submit)/float64(m.MaxAge))
		size := float64(min(j.Procs, procs)) / float64(procs)
		if m.SmallRelativeToTime {
			size /= max(1, float64(j.Limit)/60)
		}
		if m.FavorSmall {
			size = 1 - size
		}
		p := float64(m.WeightAge)*age + float64(m.WeightJobSize)*size
		return uint32(min(p, float64(1<<32-1)))
	}
}
