package sreport

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/drover-hpc/drover/internal/jobspec"
)

// abbrev reports whether word names keyword the way Slurm matches its
// keywords: a case-insensitive prefix of it, at least min characters long.
func abbrev(word, keyword string, min int) bool {
	return len(word) >= min && len(word) <= len(keyword) && strings.EqualFold(word, keyword[:len(word)])
}

// ncmp compares the first n characters of word and keyword without case,
// as strncasecmp does: it matches when they agree up to n characters or
// both end together before.
func ncmp(word, keyword string, n int) bool {
	for i := 0; i < n; i++ {
		var a, b byte
		if i < len(word) {
			a = lower(word[i])
		}
		if i < len(keyword) {
			b = lower(keyword[i])
		}
		if a != b {
			return false
		}
		if a == 0 {
			return true
		}
	}
	return true
}

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// unit is the -t time format: how usage (TRES-seconds) prints.
type unit int

const (
	uMinutes unit = iota
	uSeconds
	uHours
	uPercent
	uSecPer
	uMinPer
	uHourPer
)

var unitNames = [...]string{"Minutes", "Seconds", "Hours", "Percentage of Total",
	"Seconds/Percentage of Total", "Minutes/Percentage of Total", "Hours/Percentage of Total"}

func (u unit) String() string { return unitNames[u] }

// per is whether values carry a percentage after the count.
func (u unit) per() bool { return u >= uSecPer }

// parseUnit reads -t: SecPer, MinPer, HourPer (6 letters at least) or a
// prefix of Seconds, Minutes, Hours, Percent.
func parseUnit(s string) (unit, bool) {
	switch {
	case abbrev(s, "SecPer", 6):
		return uSecPer, true
	case abbrev(s, "MinPer", 6):
		return uMinPer, true
	case abbrev(s, "HourPer", 6):
		return uHourPer, true
	case abbrev(s, "Seconds", 1):
		return uSeconds, true
	case abbrev(s, "Minutes", 1):
		return uMinutes, true
	case abbrev(s, "Hours", 1):
		return uHours, true
	case abbrev(s, "Percent", 1):
		return uPercent, true
	}
	return 0, false
}

// format prints secs against total as slurmdb's report printer does:
// whole minutes or hours rounded, percentages with two decimals.
func (u unit) format(secs, total int64) string {
	if total == 0 {
		total = 1
	}
	pct := float64(secs) / float64(total) * 100
	switch u {
	case uSeconds:
		return strconv.FormatInt(secs, 10)
	case uHours:
		return fmt.Sprintf("%.0f", float64(secs)/3600)
	case uPercent:
		return fmt.Sprintf("%.2f%%", pct)
	case uSecPer:
		return fmt.Sprintf("%d(%.2f%%)", secs, pct)
	case uMinPer:
		return fmt.Sprintf("%.0f(%.2f%%)", float64(secs)/60, pct)
	case uHourPer:
		return fmt.Sprintf("%.0f(%.2f%%)", float64(secs)/3600, pct)
	}
	return fmt.Sprintf("%.0f", float64(secs)/60)
}

// usageWidth is the width of a usage column whose largest value is max
// seconds: 8 characters up to 10^8, one more for each further digit, and
// 9 more when a percentage follows.
func usageWidth(max int64, u unit) int {
	w := 8
	for order := int64(100000000); max >= order && order <= 1e18; order *= 10 {
		w++
	}
	if u.per() {
		w += 9
	}
	return w
}

// kind is the family of a report, which decides the conditions it takes.
type kind int

const (
	kUtil  kind = iota // cluster Utilization
	kAssoc             // cluster AccountUtilizationByUser, UserUtilizationByAccount
	kTop               // user TopUsage
	kSizes             // job SizesByAccount
)

// cond is what a report's Key=Value words ask for.
type cond struct {
	start, end       time.Time
	startSet, endSet bool
	all              bool
	clusters         []string
	accounts, users  []string
	partitions       []string
	format           []string
	tree, group      bool
	flat, asParent   bool
	jobCount         bool
	top              int
	grouping         []int
	individual       bool
}

// condError is a complaint about a report's words, printed as it is.
type condError string

func (e condError) Error() string { return string(e) }

func unknownCondition(w string) error {
	return condError(" Unknown condition: " + w + "\nUse keyword set to modify value")
}

// parseCond reads a report's words: Key=Value conditions and the bare
// words each kind takes (cluster names for Utilization and the job
// reports, user names for the others).
func parseCond(k kind, words []string, now time.Time) (*cond, error) {
	c := &cond{top: 10}
	for _, w := range words {
		key, val, eq := strings.Cut(w, "=")
		var err error
		switch {
		case !eq && abbrev(key, "all_clusters", 1):
			c.all = true
		case !eq && k == kAssoc && abbrev(key, "Tree", 4):
			c.tree = true
		case !eq && k == kTop && abbrev(key, "Group", 1):
			c.group = true
		case !eq && k == kSizes && abbrev(key, "AcctAsParent", 2):
			c.asParent = true
		case !eq && k == kSizes && abbrev(key, "PrintJobCount", 2):
			c.jobCount = true
		case !eq && k == kSizes && abbrev(key, "FlatView", 2):
			c.flat = true
		case !eq && (k == kUtil || k == kSizes):
			c.clusters = addList(c.clusters, w, true)
		case !eq:
			c.users = addList(c.users, w, true)
		case abbrev(key, "Clusters", 1):
			c.clusters = addList(c.clusters, val, true)
		case abbrev(key, "End", 1):
			c.end, err = parseTime(val, now)
			c.endSet = true
		case abbrev(key, "Start", 1):
			c.start, err = parseTime(val, now)
			c.startSet = true
		case abbrev(key, "Format", 1):
			c.format = addList(c.format, val, false)
		case k != kUtil && (abbrev(key, "Accounts", 2) || abbrev(key, "Acct", 4)):
			c.accounts = addList(c.accounts, val, true)
		case k != kUtil && abbrev(key, "Users", 1):
			c.users = addList(c.users, val, true)
		case k == kTop && abbrev(key, "TopCount", 1):
			n, e := strconv.Atoi(strings.Trim(val, `"'`))
			if e != nil {
				return nil, condError("Invalid value for TopCount (" + val + ")")
			}
			c.top = max(n, 0)
		case k == kSizes && abbrev(key, "grouping", 2):
			err = c.setGrouping(val)
		case k == kSizes && abbrev(key, "Partitions", 2):
			c.partitions = addList(c.partitions, val, false)
		case k == kAssoc && abbrev(key, "QosLevel", 1),
			k == kSizes && (abbrev(key, "Associations", 2) || abbrev(key, "Gid", 2) ||
				abbrev(key, "Jobs", 1) || abbrev(key, "Nodes", 1) || abbrev(key, "Wckeys", 2)):
			return nil, condError(" Condition not supported by this sreport: " + w)
		default:
			return nil, unknownCondition(w)
		}
		if err != nil {
			return nil, err
		}
	}
	return c, nil
}

func (c *cond) setGrouping(v string) error {
	if abbrev(v, "individual", 1) {
		c.individual, c.grouping = true, nil
		return nil
	}
	c.grouping = nil
	for _, g := range addList(nil, v, false) {
		n, err := strconv.Atoi(g)
		if err != nil || n <= 0 || (len(c.grouping) > 0 && n <= c.grouping[len(c.grouping)-1]) {
			return condError(" Invalid grouping: " + v + " (want increasing sizes, e.g. 50,250,500)")
		}
		c.grouping = append(c.grouping, n)
	}
	return nil
}

// window settles the report period as Slurm does: by default yesterday
// (midnight to midnight); an end later than now is now; an end not after
// the start is an hour after it. Unlike Slurm, whose figures come from
// hourly rollups, the times are not rounded to the hour: usage is
// computed from the job records to the second.
func (c *cond) window(now time.Time) {
	y, m, d := now.Date()
	today := time.Date(y, m, d, 0, 0, 0, 0, now.Location())
	switch {
	case !c.endSet:
		c.end = today
	case c.end.After(now):
		c.end = now
	}
	if !c.startSet {
		c.start = today.AddDate(0, 0, -1)
	}
	if !c.end.After(c.start) {
		c.end = c.start.Add(time.Hour)
	}
}

// addList adds a comma separated list's names, without quotes, blanks,
// empty names and names already there; lower-cased when fold.
func addList(list []string, v string, fold bool) []string {
	for _, s := range strings.Split(v, ",") {
		s = strings.TrimSpace(strings.Trim(s, `"'`))
		if fold {
			s = strings.ToLower(s)
		}
		if s != "" && !contains(list, s) {
			list = append(list, s)
		}
	}
	return list
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

// yearlessDate reports whether l starts with a date without a year, or a
// year with a time of day or nothing after it; in regexp terms
// ^(\d{1,2}[/.]\d{1,2}($|[-T ])|\d{4}($|[T ]|-\d{1,2}:)). Written out: the
// regexp package's tables were initialised at every command's start.
func yearlessDate(l string) bool {
	switch n := digitRun(l); n {
	case 1, 2: // M/D, MM.DD, ...
		if n == len(l) || (l[n] != '/' && l[n] != '.') {
			return false
		}
		rest := l[n+1:]
		m := digitRun(rest)
		return (m == 1 || m == 2) && (m == len(rest) || strings.IndexByte("-T ", rest[m]) >= 0)
	case 4: // YYYY, YYYY-HH:...
		rest := l[4:]
		if rest == "" || rest[0] == 'T' || rest[0] == ' ' {
			return true
		}
		m := digitRun(rest[1:])
		return rest[0] == '-' && (m == 1 || m == 2) && len(rest) > 1+m && rest[1+m] == ':'
	}
	return false
}

// anyDate reports whether l holds a date at all: [/.]|\d{4}.
func anyDate(l string) bool {
	if strings.ContainsAny(l, "/.") {
		return true
	}
	for i := range l {
		if digitRun(l[i:]) >= 4 {
			return true
		}
	}
	return false
}

// digitRun is how many ASCII digits s starts with.
func digitRun(s string) int {
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	return n
}

// parseTime reads a Start= or End= time in Slurm's forms, looking into
// the past as sreport does: a time of day alone is today's, and a date
// without a year is this year's, or last year's for a later month.
func parseTime(s string, now time.Time) (time.Time, error) {
	s = strings.Trim(s, `"'`)
	t, err := jobspec.ParseBegin(s, now)
	if err != nil {
		var je *jobspec.Error
		if errors.As(err, &je) && je.Detail != "" {
			return t, condError("Invalid time specification" + strings.TrimPrefix(je.Detail, "invalid time specification"))
		}
		return t, condError("Invalid time specification: " + s)
	}
	l := strings.ToLower(s)
	switch {
	case !t.After(now), strings.HasPrefix(l, "now"), strings.HasPrefix(l, "uts"),
		strings.Contains(l, "today"), strings.Contains(l, "tomorrow"):
		return t, nil
	case yearlessDate(l):
		year := now.Year()
		if t.Month() > now.Month() {
			year--
		}
		return time.Date(year, t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), 0, t.Location()), nil
	case !anyDate(l):
		// A time of day alone: today's even when already past.
		y, m, d := now.Date()
		if ty, tm, td := t.Date(); ty != y || tm != m || td != d {
			return t.AddDate(0, 0, -1), nil
		}
	}
	return t, nil
}
