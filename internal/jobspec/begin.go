package jobspec

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ParseBegin parses a --begin value relative to now, in now's location.
// Accepted, alone or combined (separated by blanks, '-' or 'T'):
//
//	HH:MM[:SS] [AM|PM]          next such time of day (today if still ahead)
//	midnight noon elevenses fika teatime   00:00 12:00 11:00 15:00 16:00
//	today tomorrow              that date (00:00 unless a time is given)
//	MMDD[YY] MM/DD[/YY] MM.DD[.YY]   a date; without a year, the next one
//	YYYY-MM-DD[THH:MM[:SS]]
//	now[{+|-}N[seconds|minutes|hours|days|weeks]]   seconds by default
//	uts<unix seconds>
func ParseBegin(s string, now time.Time) (time.Time, error) {
	b := beginParser{s: s, now: now, hour: -1, month: -1, year: -1}
	t, ok := b.parse()
	if !ok {
		return time.Time{}, &Error{Msg: "Invalid --begin specification", Exit: exitOption,
			Detail: fmt.Sprintf("invalid time specification (pos=%d): %s", b.i, s)}
	}
	return t, nil
}

type beginParser struct {
	s                string
	i                int
	now              time.Time
	hour, min, sec   int
	year, month, day int
	dateSet          bool
}

var beginWords = []struct {
	word string
	hour int
}{{"midnight", 0}, {"noon", 12}, {"elevenses", 11}, {"fika", 15}, {"teatime", 16}}

func (b *beginParser) parse() (time.Time, bool) {
	s := b.s
	if len(s) > 3 && strings.EqualFold(s[:3], "uts") {
		n, err := strconv.ParseInt(s[3:], 10, 64)
		if err != nil || n < 1000000 || n > 1<<40 {
			return time.Time{}, false
		}
		return time.Unix(n, 0).In(b.now.Location()), true
	}
word:
	for b.i < len(s) {
		switch {
		case b.word("today"):
			b.setDate(b.now)
			continue
		case b.word("tomorrow"):
			b.setDate(b.now.AddDate(0, 0, 1))
			continue
		case b.word("now"):
			if !b.relative() {
				return time.Time{}, false
			}
			continue
		}
		for _, w := range beginWords {
			if b.word(w.word) {
				b.hour, b.min, b.sec = w.hour, 0, 0
				continue word
			}
		}
		switch c := s[b.i]; {
		case c == ' ' || c == '\t' || c == '-' || c == 'T':
			b.i++
		case c >= '0' && c <= '9':
			var ok bool
			if b.at(b.i+1) == ':' || b.at(b.i+2) == ':' {
				ok = b.clock()
			} else {
				ok = b.date()
			}
			if !ok {
				return time.Time{}, false
			}
		default:
			return time.Time{}, false
		}
	}
	return b.result()
}

func (b *beginParser) at(i int) byte {
	if i < len(b.s) {
		return b.s[i]
	}
	return 0
}

// word consumes w (case-insensitively) at the current position.
func (b *beginParser) word(w string) bool {
	if len(b.s)-b.i >= len(w) && strings.EqualFold(b.s[b.i:b.i+len(w)], w) {
		b.i += len(w)
		return true
	}
	return false
}

func (b *beginParser) setDate(t time.Time) {
	y, m, d := t.Date()
	b.year, b.month, b.day, b.dateSet = y, int(m), d, true
}

// relative handles what follows "now": nothing, or a signed offset.
func (b *beginParser) relative() bool {
	for b.at(b.i) == ' ' || b.at(b.i) == '\t' {
		b.i++
	}
	var delta int64
	switch b.at(b.i) {
	case 0:
	case '+', '-':
		neg := b.s[b.i] == '-'
		b.i++
		d, ok := b.delta()
		if !ok {
			return false
		}
		if delta = d; neg {
			delta = -d
		}
	default:
		return false
	}
	t := time.Unix(b.now.Unix()+delta, 0).In(b.now.Location())
	b.setDate(t)
	b.hour, b.min, b.sec = t.Clock()
	return true
}

var beginUnits = []struct {
	name string
	secs int64
}{
	{"seconds", 1}, {"second", 1}, {"minutes", 60}, {"minute", 60},
	{"hours", 3600}, {"hour", 3600}, {"days", 86400}, {"day", 86400},
	{"weeks", 604800}, {"week", 604800},
}

// delta reads "N[unit]", blanks allowed, and returns seconds.
func (b *beginParser) delta() (int64, bool) {
	var n int64
	digits := 0
	for b.i < len(b.s) {
		c := b.s[b.i]
		if c == ' ' || c == '\t' {
			b.i++
			continue
		}
		if c >= '0' && c <= '9' {
			if digits++; digits > 9 {
				return 0, false
			}
			n = n*10 + int64(c-'0')
			b.i++
			continue
		}
		for _, u := range beginUnits {
			if b.word(u.name) {
				return n * u.secs, digits > 0
			}
		}
		return 0, false
	}
	return n, digits > 0
}

// num reads one or two digits (exactly two when exact is set).
func (b *beginParser) num(exact bool) (int, bool) {
	c := b.at(b.i)
	if c < '0' || c > '9' {
		return 0, false
	}
	n := int(c - '0')
	b.i++
	if c = b.at(b.i); c >= '0' && c <= '9' {
		n = n*10 + int(c-'0')
		b.i++
	} else if exact {
		return 0, false
	}
	return n, true
}

// clock reads HH:MM[:SS] [AM|PM].
func (b *beginParser) clock() bool {
	h, ok := b.num(false)
	if !ok || h > 23 || b.at(b.i) != ':' {
		return false
	}
	b.i++
	m, ok := b.num(true)
	if !ok || m > 59 {
		return false
	}
	sec := 0
	if b.at(b.i) == ':' {
		b.i++
		if sec, ok = b.num(true); !ok || sec > 59 {
			return false
		}
	}
	for b.at(b.i) == ' ' || b.at(b.i) == '\t' {
		b.i++
	}
	switch {
	case b.word("pm"):
		if h > 12 {
			return false
		}
		if h < 12 {
			h += 12
		}
	case b.word("am"):
		if h > 12 {
			return false
		}
		if h == 12 {
			h = 0
		}
	}
	b.hour, b.min, b.sec = h, m, sec
	return true
}

// date reads YYYY-MM-DD, MMDD[YY], MM/DD[/YY] or MM.DD[.YY].
func (b *beginParser) date() bool {
	j := b.i
	for j < len(b.s) && b.s[j] >= '0' && b.s[j] <= '9' {
		j++
	}
	if j-b.i == 4 && b.at(j) == '-' {
		y, _ := strconv.Atoi(b.s[b.i:j])
		b.i = j + 1
		m, ok := b.num(false)
		if !ok || b.at(b.i) != '-' {
			return false
		}
		b.i++
		d, ok := b.num(false)
		if !ok {
			return false
		}
		return b.setYMD(y, m, d)
	}
	m, ok := b.num(false)
	if !ok {
		return false
	}
	if c := b.at(b.i); c == '.' || c == '/' {
		b.i++
	}
	d, ok := b.num(false)
	if !ok {
		return false
	}
	y := -1
	if c := b.at(b.i); c == '.' || c == '/' {
		b.i++
	}
	if c := b.at(b.i); c >= '0' && c <= '9' {
		yy, ok := b.num(true)
		if !ok {
			return false
		}
		y = 2000 + yy
	}
	return b.setYMD(y, m, d)
}

func (b *beginParser) setYMD(y, m, d int) bool {
	if m < 1 || m > 12 || d < 1 || d > 31 {
		return false
	}
	b.year, b.month, b.day, b.dateSet = y, m, d, true
	return true
}

func (b *beginParser) result() (time.Time, bool) {
	now := b.now
	if !b.dateSet && b.hour == -1 {
		return time.Time{}, false
	}
	if b.hour == -1 {
		b.hour, b.min, b.sec = 0, 0, 0
	}
	if !b.dateSet {
		day := now
		if b.hour < now.Hour() || (b.hour == now.Hour() && b.min <= now.Minute()) {
			day = now.AddDate(0, 0, 1)
		}
		b.setDate(day)
	}
	if b.year == -1 {
		b.year = now.Year()
		cand := time.Date(b.year, time.Month(b.month), b.day, b.hour, b.min, 0, 0, now.Location())
		if !cand.After(now.Truncate(time.Minute)) {
			b.year++
		}
	}
	t := time.Date(b.year, time.Month(b.month), b.day, b.hour, b.min, b.sec, 0, now.Location())
	if t.Day() != b.day { // e.g. February 30
		return time.Time{}, false
	}
	return t, true
}
