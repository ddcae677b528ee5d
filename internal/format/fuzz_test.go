package format

import (
	"bytes"
	"testing"
)

// FuzzParseFormat checks that neither language's parser panics, that what
// they accept renders without panicking, and that Parse(String(f)) gives f
// back for -o formats.
func FuzzParseFormat(f *testing.F) {
	for _, s := range []string{
		"%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R", "%i|%t", "%all", "x%%i",
		"%#P %.#N", "%.", "%5", "JobID,Name:,State:.10|", "Account:\x1f,",
		"nodehost:100,gres:512", "%.99999i", "é%é", ":", ",,", "%0#", "%0All",
	} {
		f.Add(s)
	}
	tb := testTable()
	rows := refRows
	f.Fuzz(func(t *testing.T, s string) {
		if fm, err := Parse(s); err == nil {
			if !fm.All {
				back, err := Parse(fm.String())
				if err != nil && len(fm.Specs) > 0 {
					t.Fatalf("Parse(String(Parse(%q))) = %v", s, err)
				}
				if err == nil && len(back.Specs) != len(fm.Specs) {
					t.Fatalf("round trip of %q changed spec count: %q", s, fm.String())
				}
			}
			if l, err := tb.Compile(fm); err == nil {
				var b bytes.Buffer
				_ = l.Render(&b, rows, Options{})
			}
		}
		if fm, err := ParseLong(s); err == nil {
			if l, err := tb.Compile(fm); err == nil {
				var b bytes.Buffer
				_ = l.Render(&b, rows, Options{Delimiter: "|"})
			}
		}
	})
}
