package sched

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
)

// compressNames writes node names as a Slurm hostlist ("n[01-03,07],gpu1")
// for the UnavailableNodes part of a ReqNodeNotAvail reason.
//
// It is a deliberately small writer (trailing numbers only): the scheduler
// may import only model, and a reason string needs no parser. Replace it
// with internal/hostlist if that package is ever allowed here.
func compressNames(names []string) string {
	type host struct {
		prefix, digits string
		num            int
	}
	hosts := make([]host, 0, len(names))
	for _, n := range names {
		cut := len(n)
		for cut > 0 && n[cut-1] >= '0' && n[cut-1] <= '9' {
			cut--
		}
		h := host{prefix: n, num: -1}
		if d := n[cut:]; d != "" && len(d) <= 9 { // 9 digits always fit an int
			v, _ := strconv.Atoi(d)
			h = host{prefix: n[:cut], digits: d, num: v}
		}
		hosts = append(hosts, h)
	}
	slices.SortFunc(hosts, func(a, b host) int {
		return cmp.Or(strings.Compare(a.prefix, b.prefix), cmp.Compare(a.num, b.num), strings.Compare(a.digits, b.digits))
	})
	hosts = slices.Compact(hosts)

	var b strings.Builder
	for i := 0; i < len(hosts); {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		h := hosts[i]
		if h.num < 0 { // no number: the name stands alone
			b.WriteString(h.prefix)
			i++
			continue
		}
		// Collect the ranges of this prefix.
		var ranges []string
		count := 0
		for i < len(hosts) && hosts[i].prefix == h.prefix && hosts[i].num >= 0 {
			lo := i
			for i+1 < len(hosts) && hosts[i+1].prefix == h.prefix && hosts[i+1].num == hosts[i].num+1 &&
				sameWidth(hosts[i].digits, hosts[i+1].digits) {
				i++
			}
			r := hosts[lo].digits
			if i > lo {
				r += "-" + hosts[i].digits
			}
			ranges = append(ranges, r)
			count += i - lo + 1
			i++
		}
		b.WriteString(h.prefix)
		if count == 1 {
			b.WriteString(ranges[0])
		} else {
			b.WriteString("[" + strings.Join(ranges, ",") + "]")
		}
	}
	return b.String()
}

// sameWidth reports whether two numbers can share a range: equal widths,
// or neither zero-padded (9 and 10 do; 09 and 010 do not).
func sameWidth(a, b string) bool {
	padded := func(s string) bool { return len(s) > 1 && s[0] == '0' }
	return len(a) == len(b) || (!padded(a) && !padded(b))
}
