package hostlist

import (
	"fmt"
	"strconv"
	"strings"
)

// MaxHosts bounds how many names one expression may expand to. Real clusters
// stay far below it; the bound exists so "n[0-999999999]" fails fast instead
// of allocating gigabytes.
const MaxHosts = 1 << 20

// maxDigits keeps every range number inside int64 with room to spare.
const maxDigits = 18

// Error describes a malformed hostlist expression.
type Error struct {
	Expr string // the whole expression
	Pos  int    // byte offset of the offending part in Expr
	Msg  string
}

func (e *Error) Error() string {
	return fmt.Sprintf("invalid hostlist %q: %s (at offset %d)", e.Expr, e.Msg, e.Pos)
}

// numRange is one bracket item: lo..hi printed at least width digits wide.
type numRange struct {
	lo, hi int64
	width  int
}

func (r numRange) count() int64 { return r.hi - r.lo + 1 }

// segment is a literal part of a host term, or a bracket group when ranges
// is non-nil.
type segment struct {
	lit    string
	ranges []numRange
}

func (s segment) count() int64 {
	if s.ranges == nil {
		return 1
	}
	var n int64
	for _, r := range s.ranges {
		n += r.count()
	}
	return n
}

// term is one comma-separated host term: a cartesian product of segments.
type term struct {
	segs  []segment
	count int64
}

// isSep reports whether c separates host terms outside brackets. Slurm
// accepts whitespace as well as commas there, which lets users paste
// space-separated lists.
func isSep(c byte) bool {
	return c == ',' || c == ' ' || c == '\t' || c == '\n' || c == '\r'
}

// parse splits expr into terms and checks the total against MaxHosts before
// anything is generated.
func parse(expr string) ([]term, int, error) {
	var terms []term
	var total int64
	i := 0
	for i < len(expr) {
		if isSep(expr[i]) {
			i++
			continue
		}
		t, next, err := parseTerm(expr, i)
		if err != nil {
			return nil, 0, err
		}
		total += t.count
		if total > MaxHosts {
			return nil, 0, &Error{expr, i, fmt.Sprintf("expands to more than %d hosts", MaxHosts)}
		}
		terms = append(terms, t)
		i = next
	}
	return terms, int(total), nil
}

func parseTerm(expr string, start int) (term, int, error) {
	t := term{count: 1}
	i := start
	litStart := i
	for i < len(expr) && !isSep(expr[i]) {
		switch expr[i] {
		case ']':
			return t, 0, &Error{expr, i, "unbalanced ']'"}
		case '[':
			if i > litStart {
				t.segs = append(t.segs, segment{lit: expr[litStart:i]})
			}
			end := strings.IndexByte(expr[i+1:], ']')
			if end < 0 {
				return t, 0, &Error{expr, i, "unbalanced '['"}
			}
			end += i + 1
			if j := strings.IndexByte(expr[i+1:end], '['); j >= 0 {
				return t, 0, &Error{expr, i + 1 + j, "nested '['"}
			}
			ranges, err := parseRanges(expr, i+1, end)
			if err != nil {
				return t, 0, err
			}
			seg := segment{ranges: ranges}
			t.segs = append(t.segs, seg)
			// Compare by division so the product itself can never overflow.
			if c := seg.count(); c > MaxHosts || t.count > MaxHosts/c {
				return t, 0, &Error{expr, start, fmt.Sprintf("expands to more than %d hosts", MaxHosts)}
			}
			t.count *= seg.count()
			i = end + 1
			litStart = i
			continue
		}
		i++
	}
	if i > litStart {
		t.segs = append(t.segs, segment{lit: expr[litStart:i]})
	}
	return t, i, nil
}

// parseRanges parses the inside of a bracket group, expr[start:end].
func parseRanges(expr string, start, end int) ([]numRange, error) {
	if start == end {
		return nil, &Error{expr, start - 1, "empty brackets"}
	}
	var out []numRange
	var total int64
	pos := start
	for _, item := range strings.Split(expr[start:end], ",") {
		r, err := parseRange(expr, pos, item)
		if err != nil {
			return nil, err
		}
		total += r.count()
		if total > MaxHosts {
			return nil, &Error{expr, pos, fmt.Sprintf("expands to more than %d hosts", MaxHosts)}
		}
		out = append(out, r)
		pos += len(item) + 1
	}
	return out, nil
}

func parseRange(expr string, pos int, item string) (numRange, error) {
	if item == "" {
		return numRange{}, &Error{expr, pos, "empty range"}
	}
	loS, hiS, isRange := strings.Cut(item, "-")
	lo, err := parseNum(expr, pos, loS)
	if err != nil {
		return numRange{}, err
	}
	// The low bound's digit count is the width: "01" pads, "1" does not.
	r := numRange{lo: lo, hi: lo, width: len(loS)}
	if isRange {
		hi, err := parseNum(expr, pos+len(loS)+1, hiS)
		if err != nil {
			return numRange{}, err
		}
		if hi < lo {
			return numRange{}, &Error{expr, pos, fmt.Sprintf("reversed range %q", item)}
		}
		r.hi = hi
	}
	return r, nil
}

func parseNum(expr string, pos int, s string) (int64, error) {
	if s == "" {
		return 0, &Error{expr, pos, "missing number"}
	}
	if len(s) > maxDigits {
		return 0, &Error{expr, pos, fmt.Sprintf("number %q too long", s)}
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, &Error{expr, pos + i, fmt.Sprintf("non-numeric range %q", s)}
		}
	}
	return strconv.ParseInt(s, 10, 64)
}

// Expand returns every host name expr stands for, in expression order and
// keeping duplicates, as Slurm does ("a,a" is two hosts). Brackets hold
// comma-separated numbers or ranges; several bracket groups in one name form
// a cartesian product with the last group varying fastest. An empty or
// all-separator expression yields no names and no error.
func Expand(expr string) ([]string, error) {
	terms, total, err := parse(expr)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, total)
	buf := make([]byte, 0, 64) // shared by all names; string() copies
	for _, t := range terms {
		out = expandTerm(out, buf[:0], t.segs)
	}
	return out, nil
}

// expandTerm appends every name of segs, each prefixed by buf.
func expandTerm(out []string, buf []byte, segs []segment) []string {
	for len(segs) > 0 && segs[0].ranges == nil {
		buf = append(buf, segs[0].lit...)
		segs = segs[1:]
	}
	if len(segs) == 0 {
		return append(out, string(buf))
	}
	for _, r := range segs[0].ranges {
		for v := r.lo; v <= r.hi; v++ {
			out = expandTerm(out, appendPadded(buf, v, r.width), segs[1:])
		}
	}
	return out
}

// appendPadded appends v in decimal, zero-padded to width digits.
func appendPadded(b []byte, v int64, width int) []byte {
	var tmp [20]byte
	d := strconv.AppendInt(tmp[:0], v, 10)
	for n := len(d); n < width; n++ {
		b = append(b, '0')
	}
	return append(b, d...)
}

// Count returns how many names Expand(expr) would return, without building
// them.
func Count(expr string) (int, error) {
	_, total, err := parse(expr)
	return total, err
}
