package priority

import (
	"fmt"
	"strings"
)

// ResetPeriod is PriorityUsageResetPeriod: when recorded fair-share usage
// starts again from zero. The calendar arithmetic lives with the caller
// (the controller's service), as this package keeps away from time.
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
