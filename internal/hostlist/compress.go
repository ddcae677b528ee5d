package hostlist

import (
	"slices"
	"strconv"
	"strings"
)

// host is a name split into a prefix and its trailing number, if any.
type host struct {
	name   string
	prefix string
	digits string // trailing digits; empty when the name has none
	val    int64
	// width is the padding class: len(digits) for zero-padded numbers
	// ("007"), 0 for natural ones that print the same at any width up to
	// their length ("7", "10").
	width int
}

func splitHost(name string) host {
	i := len(name)
	for i > 0 && len(name)-i < maxDigits && name[i-1] >= '0' && name[i-1] <= '9' {
		i--
	}
	h := host{name: name, prefix: name[:i], digits: name[i:]}
	if h.digits != "" {
		h.val, _ = strconv.ParseInt(h.digits, 10, 64)
		if len(h.digits) > 1 && h.digits[0] == '0' {
			h.width = len(h.digits)
		}
	}
	return h
}

// splitAll splits every non-empty name; empty names cannot be written in a
// hostlist, so they are dropped.
func splitAll(names []string) []host {
	hosts := make([]host, 0, len(names))
	for _, n := range names {
		if n != "" {
			hosts = append(hosts, splitHost(n))
		}
	}
	return hosts
}

// fits reports whether h prints correctly when a range formats it at width:
// padded names need that exact width, natural ones any width not above
// their own length.
func (h host) fits(width int) bool {
	if h.width != 0 {
		return h.width == width
	}
	return len(h.digits) >= width
}

// run is a maximal range of consecutive numbers sharing prefix and width; a
// name without a number is a run with digits == false.
type run struct {
	prefix  string
	numeric bool
	lo, hi  int64
	width   int
}

// Compress returns the sorted, de-duplicated compressed form of names, as
// Slurm prints generated node lists: "node[1-3,5]", "gpu[01-04],login".
// Names sort by prefix, then by number; zero padding is kept. Names without
// a trailing number are printed as they are; empty names are dropped. Names
// holding brackets, commas or whitespace cannot be expressed in a hostlist
// and will not survive a round trip through Expand.
func Compress(names []string) string {
	hosts := splitAll(names)
	assignWidths(hosts)
	slices.SortFunc(hosts, func(a, b host) int {
		if c := strings.Compare(a.prefix, b.prefix); c != 0 {
			return c
		}
		if c := boolCmp(a.digits != "", b.digits != ""); c != 0 {
			return c
		}
		if a.width != b.width {
			return a.width - b.width
		}
		if a.val != b.val {
			if a.val < b.val {
				return -1
			}
			return 1
		}
		return 0
	})
	hosts = slices.CompactFunc(hosts, func(a, b host) bool { return a.name == b.name })
	return format(runs(hosts))
}

// assignWidths puts each natural number into the widest padded group of
// the same prefix it can print in, so Compress(Expand("n[08-10]")) gives
// "n[08-10]" and not "n[08-09],n10".
func assignWidths(hosts []host) {
	padded := map[string][]int{}
	for _, h := range hosts {
		if h.width != 0 && !slices.Contains(padded[h.prefix], h.width) {
			padded[h.prefix] = append(padded[h.prefix], h.width)
		}
	}
	if len(padded) == 0 {
		return
	}
	for i := range hosts {
		h := &hosts[i]
		if h.digits == "" || h.width != 0 {
			continue
		}
		for _, w := range padded[h.prefix] {
			if w <= len(h.digits) && w > h.width {
				h.width = w
			}
		}
	}
}

func boolCmp(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// CompressUnsorted compresses names keeping their order and duplicates,
// merging only runs of consecutive numbers, as `scontrol show hostlist`
// does: "tux2,tux1,tux2" becomes "tux[2,1-2]".
func CompressUnsorted(names []string) string {
	hosts := splitAll(names)
	return format(runs(hosts))
}

// runs groups hosts, in the given order, into ranges of consecutive
// numbers.
func runs(hosts []host) []run {
	var out []run
	for _, h := range hosts {
		if h.digits == "" {
			out = append(out, run{prefix: h.name})
			continue
		}
		if n := len(out); n > 0 {
			last := &out[n-1]
			if last.numeric && last.prefix == h.prefix && h.val == last.hi+1 && h.fits(last.width) {
				last.hi = h.val
				continue
			}
		}
		w := h.width
		if w == 0 {
			w = 1 // natural numbers print unpadded
		}
		out = append(out, run{prefix: h.prefix, numeric: true, lo: h.val, hi: h.val, width: w})
	}
	return out
}

// format prints runs, sharing one bracket among neighbours with the same
// prefix; a prefix with a single name prints without brackets.
func format(rs []run) string {
	var b strings.Builder
	for i := 0; i < len(rs); {
		if i > 0 {
			b.WriteByte(',')
		}
		r := rs[i]
		if !r.numeric {
			b.WriteString(r.prefix)
			i++
			continue
		}
		j := i + 1
		for j < len(rs) && rs[j].numeric && rs[j].prefix == r.prefix {
			j++
		}
		b.WriteString(r.prefix)
		if j == i+1 && r.lo == r.hi {
			b.Write(appendPadded(nil, r.lo, r.width))
			i = j
			continue
		}
		b.WriteByte('[')
		var buf []byte
		for k := i; k < j; k++ {
			buf = buf[:0]
			if k > i {
				buf = append(buf, ',')
			}
			buf = appendPadded(buf, rs[k].lo, rs[k].width)
			if rs[k].hi != rs[k].lo {
				buf = append(buf, '-')
				buf = appendPadded(buf, rs[k].hi, rs[k].width)
			}
			b.Write(buf)
		}
		b.WriteByte(']')
		i = j
	}
	return b.String()
}
