package priority

import (
	"fmt"
	"strings"
	"time"
)

// ResetPeriod is PriorityUsageResetPeriod: when recorded fair-share usage
// starts again from zero.
type ResetPeriod uint8

const (
	ResetNone ResetPeriod = iota
	ResetNow              // at controller start and reconfigure
	ResetDaily
	ResetWeekly // Sunday 00:00
	ResetMonthly
	ResetQuarterly
	ResetYearly
)

var resetNames = []string{"NONE", "NOW", "DAILY", "WEEKLY", "MONTHLY", "QUARTERLY", "YEARLY"}

func (p ResetPeriod) String() string {
	if int(p) < len(resetNames) {
		return resetNames[p]
	}
	return "NONE"
}

// ParseResetPeriod reads a PriorityUsageResetPeriod value.
func ParseResetPeriod(s string) (ResetPeriod, error) {
	for i, n := range resetNames {
		if strings.EqualFold(strings.TrimSpace(s), n) {
			return ResetPeriod(i), nil
		}
	}
	return ResetNone, fmt.Errorf("want NONE, NOW, DAILY, WEEKLY, MONTHLY, QUARTERLY or YEARLY")
}

// LastReset is the latest reset time at or before now (unix seconds;
// 0 for NONE and NOW, whose time the caller knows) in loc's calendar.
// Usage recorded before it no longer counts.
func LastReset(p ResetPeriod, now int64, loc *time.Location) int64 {
	t := time.Unix(now, 0).In(loc)
	y, m, d := t.Date()
	var at time.Time
	switch p {
	case ResetDaily:
		at = time.Date(y, m, d, 0, 0, 0, 0, loc)
	case ResetWeekly:
		at = time.Date(y, m, d-int(t.Weekday()), 0, 0, 0, 0, loc)
	case ResetMonthly:
		at = time.Date(y, m, 1, 0, 0, 0, 0, loc)
	case ResetQuarterly:
		at = time.Date(y, m-(m-1)%3, 1, 0, 0, 0, 0, loc)
	case ResetYearly:
		at = time.Date(y, 1, 1, 0, 0, 0, 0, loc)
	default:
		return 0
	}
	return at.Unix()
}
