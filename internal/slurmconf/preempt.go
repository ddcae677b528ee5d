package slurmconf

import (
	"fmt"
	"strconv"
	"strings"
)

// parsePreemptKey reads PreemptParameters and SchedulerTimeSlice.
// strict_order is accepted as it is: Drover always takes victims in
// order and keeps the shortest prefix of that order that frees enough
// (less those not needed), which is what the option asks Slurm for.
// Options Drover does not model (reclaim_licenses, send_user_signal,
// suspend_grace_time) are accepted with a warning.
func (p *parser) parsePreemptKey(pos Pos, key, v string, bad func(string) error) error {
	c := p.cfg
	if key == "schedulertimeslice" {
		// Slurm's floor is 5 s; Drover takes 1 so tests can slice fast.
		n, err := parseInt(v, 1, 86400)
		if err != nil {
			return bad("seconds, 1 to 86400")
		}
		c.SchedulerTimeSlice = int64(n)
		return nil
	}
	for _, opt := range strings.Split(v, ",") {
		name, val, hasVal := strings.Cut(strings.TrimSpace(opt), "=")
		switch strings.ToLower(name) {
		case "min_exempt_priority":
			n, err := strconv.ParseInt(val, 10, 64)
			if !hasVal || err != nil || n < 0 {
				return bad("min_exempt_priority=<priority>")
			}
			c.PreemptMinExemptPriority = n
		case "reorder_count":
			n, err := strconv.Atoi(val)
			if !hasVal || err != nil || n < 0 || n > 5 {
				return bad("reorder_count=<0-5>")
			}
			c.PreemptReorderCount = n
		case "youngest_first":
			c.PreemptYoungestFirst = true
		case "strict_order", "":
		default:
			c.Warnings = append(c.Warnings, fmt.Sprintf("%s: PreemptParameters: %q is not modelled, ignored", pos, name))
		}
	}
	return nil
}
