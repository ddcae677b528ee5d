package hostlist

import (
	"strings"
	"testing"
)

func FuzzExpand(f *testing.F) {
	for _, s := range []string{"node[01-10,20]", "rack[0-1]_blade[0-2]", "a,b c", "n[3-1]", "x[", "]", "n[0-1048575]", "[1-2]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		names, err := Expand(expr)
		n, cerr := Count(expr)
		if (err == nil) != (cerr == nil) {
			t.Fatalf("Expand err %v, Count err %v", err, cerr)
		}
		if err != nil {
			return
		}
		if n != len(names) {
			t.Fatalf("Count = %d, Expand gave %d", n, len(names))
		}
		for _, h := range names {
			if h == "" || strings.ContainsAny(h, "[], \t\r\n") {
				t.Fatalf("Expand(%q) produced bad name %q", expr, h)
			}
		}
		if len(names) <= 5000 {
			checkRoundTrip(t, names)
		}
	})
}

func FuzzCompress(f *testing.F) {
	for _, s := range []string{"n1|n2|n3", "n09|n10|n1", "a|a|b7|007", "x1234567890123456789012|x1234567890123456789013"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, joined string) {
		var names []string
		for _, n := range strings.Split(joined, "|") {
			// Only names a hostlist can spell take part in the round trip.
			if !strings.ContainsAny(n, "[], \t\r\n") {
				names = append(names, n)
			}
		}
		checkRoundTrip(t, names)
	})
}
