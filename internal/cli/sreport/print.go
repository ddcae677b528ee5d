package sreport

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Output modes: aligned columns, '|' after every field (-p), '|'
// between fields (-P).
const (
	aligned = iota
	parsable
	parsable2
)

// cellKind decides how a value is cut to its column.
type cellKind int

const (
	cNull cellKind = iota // no value: blank
	cStr                  // a name: cut with a '+' at the end
	cTime                 // usage: cut without a mark
	cNum                  // a count: never cut
)

type cell struct {
	s string
	k cellKind
}

func str(s string) cell {
	if s == "" {
		return cell{}
	}
	return cell{s, cStr}
}

func num(n int64) cell { return cell{strconv.FormatInt(n, 10), cNum} }

// alias is one way to name a field in Format=: a prefix of word at least
// min letters long.
type alias struct {
	word string
	min  int
}

// fieldDef is a column a report can print.
type fieldDef struct {
	names    []alias
	id       string
	header   string
	width    int // with -t minutes, hours, seconds, percent
	perWidth int // with -t secper, minper, hourper; 0: width
}

// field is a column as printed: negative widths are left-justified.
type field struct {
	id     string
	header string
	width  int
	fixed  bool // the width came from Format=name%N
}

// pickFields resolves a Format= list against a report's columns; names
// that match none are reported and left out, as Slurm does.
func pickFields(defs []fieldDef, format []string, u unit, errw io.Writer) ([]field, bool) {
	ok := true
	var out []field
	for _, obj := range format {
		name, width, fixed := obj, 0, false
		if i := strings.IndexByte(obj, '%'); i >= 0 {
			name = obj[:i]
			width = atoi(obj[i+1:])
			fixed = width != 0
		}
		d := findField(defs, name)
		if d == nil {
			fmt.Fprintf(errw, " Unknown field '%s'\n", name)
			ok = false
			continue
		}
		f := field{id: d.id, header: d.header, width: d.width, fixed: fixed}
		if u.per() && d.perWidth != 0 {
			f.width = d.perWidth
		}
		if fixed {
			f.width = width
		}
		out = append(out, f)
	}
	return out, ok
}

func findField(defs []fieldDef, name string) *fieldDef {
	for i := range defs {
		for _, a := range defs[i].names {
			if abbrev(name, a.word, a.min) {
				return &defs[i]
			}
		}
	}
	return nil
}

// atoi reads a leading signed number as C's atoi does (0 when none).
func atoi(s string) int {
	i := 0
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		i++
	}
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	n, _ := strconv.Atoi(s[:i])
	return n
}

// setWidth gives column id the width its largest usage value needs,
// unless Format= fixed it.
func setWidth(fields []field, id string, max int64, u unit) {
	for i := range fields {
		if fields[i].id == id && !fields[i].fixed {
			fields[i].width = usageWidth(max, u)
		}
	}
}

func hasField(fields []field, id string) bool {
	for _, f := range fields {
		if f.id == id {
			return true
		}
	}
	return false
}

type printer struct {
	w    io.Writer
	mode int
}

// header prints the column names and, aligned, the dashes under them.
func (p *printer) header(fields []field) {
	var b strings.Builder
	for i, f := range fields {
		if p.mode != aligned {
			b.WriteString(f.header)
			if p.mode == parsable || i < len(fields)-1 {
				b.WriteByte('|')
			}
			continue
		}
		pad(&b, cut(f.header, abs(f.width)), f.width)
	}
	b.WriteByte('\n')
	if p.mode == aligned {
		for _, f := range fields {
			b.WriteString(strings.Repeat("-", abs(f.width)))
			b.WriteByte(' ')
		}
		b.WriteByte('\n')
	}
	io.WriteString(p.w, b.String())
}

// row prints one line of cells under fields.
func (p *printer) row(fields []field, cells []cell) {
	var b strings.Builder
	for i, f := range fields {
		c := cells[i]
		if p.mode != aligned {
			b.WriteString(c.s)
			if p.mode == parsable || i < len(fields)-1 {
				b.WriteByte('|')
			}
			continue
		}
		w := abs(f.width)
		v := c.s
		switch c.k {
		case cNull:
			v = ""
		case cStr:
			if len(v) > w && w > 0 {
				v = cut(v, w-1) + "+"
			}
		case cTime:
			v = cut(v, w)
		}
		pad(&b, v, f.width)
	}
	b.WriteByte('\n')
	io.WriteString(p.w, b.String())
}

// cut shortens s to at most n bytes, at a character boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// pad writes s in a column of width (left-justified when negative) and
// the blank after it.
func pad(b *strings.Builder, s string, width int) {
	fill := strings.Repeat(" ", max(abs(width)-len(s), 0))
	if width < 0 {
		b.WriteString(s + fill)
	} else {
		b.WriteString(fill + s)
	}
	b.WriteByte(' ')
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// stamp prints a time as Slurm does by default.
func stamp(unix int64) string { return time.Unix(unix, 0).Format("2006-01-02T15:04:05") }

var dashes = strings.Repeat("-", 80)

// banner prints the block above a report: dashes, the title line with
// the period, the unit line, dashes.
func banner(w io.Writer, lines ...string) {
	fmt.Fprintln(w, dashes)
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
	fmt.Fprintln(w, dashes)
}
