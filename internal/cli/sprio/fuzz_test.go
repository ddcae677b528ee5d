package sprio

import (
	"bufio"
	"io"
	"testing"
)

// FuzzParseFormat: any -o format (or SPRIO_FORMAT) either is refused or
// prints, and a width cannot make a line longer than the widths allow
// (a typo's width of ten digits is refused, not padded to gigabytes).
func FuzzParseFormat(f *testing.F) {
	for _, s := range []string{"%.15i %9r %.10Y %.10S %.10A %.10F %.20T", "%i %y", "x%", "%.", "%5", "%99999999999999999999i",
		"%9999999999i", "%65536Y", "%-3i", "%%", "%Yz%tz%T"} {
		f.Add(s)
	}
	in := info()
	f.Fuzz(func(t *testing.T, s string) {
		prefix, fields, err := parseFormat(in, s)
		if err != nil {
			return
		}
		for _, fl := range fields {
			if fl.width < 0 || fl.width > maxWidth {
				t.Fatalf("%q: width %d", s, fl.width)
			}
		}
		w := bufio.NewWriter(io.Discard)
		writeFormatted(w, prefix, fields, in.Jobs, false)
		_ = w.Flush()
	})
}
