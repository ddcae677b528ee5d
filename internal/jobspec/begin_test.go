package jobspec

import (
	"errors"
	"testing"
	"time"
)

func TestParseBegin(t *testing.T) {
	loc := time.FixedZone("X", 3600)
	now := time.Date(2026, 3, 15, 10, 30, 20, 0, loc) // a Sunday morning
	at := func(y int, m time.Month, d, h, mi, s int) time.Time { return time.Date(y, m, d, h, mi, s, 0, loc) }
	tests := []struct {
		in   string
		want time.Time
	}{
		{"16:00", at(2026, 3, 15, 16, 0, 0)},
		{"16:00:30", at(2026, 3, 15, 16, 0, 30)},
		{"9:15", at(2026, 3, 16, 9, 15, 0)},   // already past today
		{"10:30", at(2026, 3, 16, 10, 30, 0)}, // this very minute counts as past
		{"10:31", at(2026, 3, 15, 10, 31, 0)},
		{"4:00PM", at(2026, 3, 15, 16, 0, 0)},
		{"4:00 pm", at(2026, 3, 15, 16, 0, 0)},
		{"12:00am", at(2026, 3, 16, 0, 0, 0)},
		{"12:05PM", at(2026, 3, 15, 12, 5, 0)},
		{"midnight", at(2026, 3, 16, 0, 0, 0)},
		{"noon", at(2026, 3, 15, 12, 0, 0)},
		{"elevenses", at(2026, 3, 15, 11, 0, 0)},
		{"fika", at(2026, 3, 15, 15, 0, 0)},
		{"teatime", at(2026, 3, 15, 16, 0, 0)},
		{"Teatime", at(2026, 3, 15, 16, 0, 0)},
		{"today", at(2026, 3, 15, 0, 0, 0)},
		{"tomorrow", at(2026, 3, 16, 0, 0, 0)},
		{"tomorrow noon", at(2026, 3, 16, 12, 0, 0)},
		{"tomorrowT08:00", at(2026, 3, 16, 8, 0, 0)},
		{"now", now},
		{"now+60", now.Add(time.Minute)},
		{"now+1hour", now.Add(time.Hour)},
		{"now + 2 days", now.Add(48 * time.Hour)},
		{"now+1week", now.Add(7 * 24 * time.Hour)},
		{"now+90minutes", now.Add(90 * time.Minute)},
		{"now-30seconds", now.Add(-30 * time.Second)},
		{"2010-01-20T12:34:00", at(2010, 1, 20, 12, 34, 0)},
		{"2030-01-20T12:34", at(2030, 1, 20, 12, 34, 0)},
		{"2030-01-20", at(2030, 1, 20, 0, 0, 0)},
		{"0401", at(2026, 4, 1, 0, 0, 0)},
		{"0301", at(2027, 3, 1, 0, 0, 0)}, // already past this year
		{"040127", at(2027, 4, 1, 0, 0, 0)},
		{"04/01", at(2026, 4, 1, 0, 0, 0)},
		{"4/1/27", at(2027, 4, 1, 0, 0, 0)},
		{"04.01.27", at(2027, 4, 1, 0, 0, 0)},
		{"03/15-16:00", at(2026, 3, 15, 16, 0, 0)},
		{"03/15-09:00", at(2027, 3, 15, 9, 0, 0)},
		{"uts1767225600", time.Unix(1767225600, 0).In(loc)},
	}
	for _, tc := range tests {
		got, err := ParseBegin(tc.in, now)
		if err != nil {
			t.Errorf("ParseBegin(%q): %v", tc.in, err)
			continue
		}
		if !got.Equal(tc.want) {
			t.Errorf("ParseBegin(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestParseBeginErrors(t *testing.T) {
	now := time.Date(2026, 3, 15, 10, 30, 0, 0, time.UTC)
	for _, in := range []string{
		"", " ", "-", "abc", "25:00", "10:60", "10:5", "10:00:61", "13:00pm", "13:00am", "now+",
		"now+1h", "now+x", "now tomorrow", "nowx", "13/01", "00/10", "02/30", "2026-13-01",
		"2026-02-30", "2026-1", "12/1/2", "noonx", "uts12", "utsx", "1234567890123",
		"now+9999999999", "10:00 x",
	} {
		_, err := ParseBegin(in, now)
		var e *Error
		if !errors.As(err, &e) || e.Msg != "Invalid --begin specification" {
			t.Errorf("ParseBegin(%q) error = %v, want Invalid --begin specification", in, err)
		}
	}
}
