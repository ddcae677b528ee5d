package format

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Field is one column a command can print for rows of type R.
type Field[R any] struct {
	Letter  byte     // -o letter; 0 when the field has only a -O name
	Name    string   // -O name, matched case-insensitively
	Aliases []string // further -O names
	Header  string
	// Append appends the value for r to dst and returns the extended slice.
	// It should not allocate when it can avoid it: it runs once per cell.
	Append func(dst []byte, r R) []byte
	// NoTruncate keeps values (and the header) longer than the width whole.
	NoTruncate bool
	// MinAuto is the smallest width "#" resolves to; 0 means len(Header).
	MinAuto int
}

// Str adapts a string-valued function to Field.Append.
func Str[R any](f func(R) string) func([]byte, R) []byte {
	return func(dst []byte, r R) []byte { return append(dst, f(r)...) }
}

// Table is a command's set of fields, indexed by letter and by name.
type Table[R any] struct {
	fields   []Field[R]
	byLetter [256]int // index+1; 0 = none
	byName   map[string]int
}

// NewTable indexes fields. A letter or name given twice keeps its first
// field.
func NewTable[R any](fields ...Field[R]) *Table[R] {
	t := &Table[R]{fields: fields, byName: make(map[string]int, 2*len(fields))}
	for i, f := range fields {
		if f.Letter != 0 && t.byLetter[f.Letter] == 0 {
			t.byLetter[f.Letter] = i + 1
		}
		for _, n := range append([]string{f.Name}, f.Aliases...) {
			if k := strings.ToLower(n); k != "" {
				if _, dup := t.byName[k]; !dup {
					t.byName[k] = i
				}
			}
		}
	}
	return t
}

// Fields returns the table's fields in declaration order.
func (t *Table[R]) Fields() []Field[R] { return t.fields }

// Lookup finds the field a spec names.
func (t *Table[R]) Lookup(sp Spec) (*Field[R], bool) {
	if sp.Long {
		i, ok := t.byName[strings.ToLower(sp.Name)]
		if !ok {
			return nil, false
		}
		return &t.fields[i], true
	}
	if len(sp.Name) != 1 {
		return nil, false
	}
	i := t.byLetter[sp.Name[0]]
	if i == 0 {
		return nil, false
	}
	return &t.fields[i-1], true
}

// UnknownFieldError reports a specifier the table does not know.
type UnknownFieldError struct{ Spec Spec }

func (e *UnknownFieldError) Error() string {
	if e.Spec.Long {
		return fmt.Sprintf("invalid format field %q", e.Spec.Name)
	}
	return fmt.Sprintf("invalid format specification: %%%s", e.Spec.Name)
}

// Compile resolves f against the table. For f.All it lists every lettered
// field in letter order (a-z, then A-Z) separated by "|".
func (t *Table[R]) Compile(f Format) (*Layout[R], error) {
	if f.All {
		f = t.allFormat()
	}
	l := &Layout[R]{prefix: f.Prefix, cols: make([]column[R], 0, len(f.Specs))}
	for _, sp := range f.Specs {
		fd, ok := t.Lookup(sp)
		if !ok {
			return nil, &UnknownFieldError{Spec: sp}
		}
		l.cols = append(l.cols, column[R]{field: fd, spec: sp, width: sp.Width})
		if sp.Auto {
			l.auto = true
		}
	}
	return l, nil
}

func (t *Table[R]) allFormat() Format {
	var f Format
	add := func(lo, hi byte) {
		for c := lo; c <= hi; c++ {
			if t.byLetter[c] != 0 {
				f.Specs = append(f.Specs, Spec{Name: string(c), Suffix: "|"})
			}
		}
	}
	add('a', 'z')
	add('A', 'Z')
	if n := len(f.Specs); n > 0 {
		f.Specs[n-1].Suffix = ""
	}
	return f
}

type column[R any] struct {
	field *Field[R]
	spec  Spec
	width int // resolved width; differs from spec.Width for "#" columns
}

// Layout is a compiled format, ready to render rows. A Layout keeps a
// scratch buffer: it is not safe for concurrent use.
type Layout[R any] struct {
	prefix  string
	cols    []column[R]
	auto    bool
	scratch []byte
}

// Column describes one compiled column, for callers that must know which
// fields a format uses (sinfo groups nodes by them).
type Column[R any] struct {
	Field *Field[R]
	Spec  Spec
}

// Columns lists the compiled columns in order.
func (l *Layout[R]) Columns() []Column[R] {
	out := make([]Column[R], len(l.cols))
	for i, c := range l.cols {
		out[i] = Column[R]{Field: c.field, Spec: c.spec}
	}
	return out
}

// Fit resolves the width of every "#" column from rows: the widest value,
// at least the field's MinAuto (or its header's length).
func (l *Layout[R]) Fit(rows []R) {
	for i := range l.cols {
		c := &l.cols[i]
		if !c.spec.Auto {
			continue
		}
		w := c.field.MinAuto
		if w == 0 {
			w = len(c.field.Header)
		}
		for _, r := range rows {
			l.scratch = c.field.Append(l.scratch[:0], r)
			w = max(w, len(l.scratch))
		}
		c.width = w
	}
}

// AppendHeader appends the header line (without newline).
func (l *Layout[R]) AppendHeader(dst []byte) []byte {
	dst = append(dst, l.prefix...)
	for i := range l.cols {
		c := &l.cols[i]
		dst = appendCell(dst, c.field.Header, c.width, c.spec.Right, c.field.NoTruncate)
		dst = append(dst, c.spec.Suffix...)
	}
	return dst
}

// AppendRow appends the line for r (without newline).
func (l *Layout[R]) AppendRow(dst []byte, r R) []byte {
	dst = append(dst, l.prefix...)
	for i := range l.cols {
		c := &l.cols[i]
		if c.width <= 0 {
			dst = c.field.Append(dst, r)
		} else {
			l.scratch = c.field.Append(l.scratch[:0], r)
			dst = appendCell(dst, l.scratch, c.width, c.spec.Right, c.field.NoTruncate)
		}
		dst = append(dst, c.spec.Suffix...)
	}
	return dst
}

// AppendParsable appends r's values unpadded, joined by delim (and ended by
// it when trailing is set); literal text of the format is left out.
func (l *Layout[R]) AppendParsable(dst []byte, r R, delim string, trailing bool) []byte {
	for i := range l.cols {
		if i > 0 {
			dst = append(dst, delim...)
		}
		dst = l.cols[i].field.Append(dst, r)
	}
	if trailing && len(l.cols) > 0 {
		dst = append(dst, delim...)
	}
	return dst
}

// AppendParsableHeader is AppendParsable for the header line.
func (l *Layout[R]) AppendParsableHeader(dst []byte, delim string, trailing bool) []byte {
	for i := range l.cols {
		if i > 0 {
			dst = append(dst, delim...)
		}
		dst = append(dst, l.cols[i].field.Header...)
	}
	if trailing && len(l.cols) > 0 {
		dst = append(dst, delim...)
	}
	return dst
}

// Options changes how Render prints.
type Options struct {
	NoHeader bool
	// Delimiter, when set, selects parsable output: values unpadded and
	// joined by it (sacct -p / -P style).
	Delimiter string
	// TrailingDelimiter ends each parsable line with the delimiter (-p).
	TrailingDelimiter bool
	// Workers, above 1, renders a long table in up to that many parts at
	// once (squeue's 100,000 rows), each part's lines written in order.
	// Only for fields whose Append may run for different rows at once.
	Workers int
}

// partRows is the fewest rows a part of a table rendered at once has.
const partRows = 16384

// flushAt is the buffer size at which Render hands output to the writer.
const flushAt = 32 << 10

// Render writes the header (unless opts.NoHeader) and one line per row.
// "#" columns are fitted to rows first.
func (l *Layout[R]) Render(w io.Writer, rows []R, opts Options) error {
	if l.auto {
		l.Fit(rows)
	}
	buf := make([]byte, 0, flushAt+1024)
	parsable := opts.Delimiter != ""
	if !opts.NoHeader {
		if parsable {
			buf = l.AppendParsableHeader(buf, opts.Delimiter, opts.TrailingDelimiter)
		} else {
			buf = l.AppendHeader(buf)
		}
		buf = append(buf, '\n')
	}
	if n := min(opts.Workers, len(rows)/partRows); n > 1 {
		return l.renderParts(w, buf, rows, opts, n)
	}
	for _, r := range rows {
		buf = l.appendLine(buf, r, opts)
		if len(buf) >= flushAt {
			if _, err := w.Write(buf); err != nil {
				return err
			}
			buf = buf[:0]
		}
	}
	if len(buf) > 0 {
		_, err := w.Write(buf)
		return err
	}
	return nil
}

func (l *Layout[R]) appendLine(buf []byte, r R, opts Options) []byte {
	if opts.Delimiter != "" {
		buf = l.AppendParsable(buf, r, opts.Delimiter, opts.TrailingDelimiter)
	} else {
		buf = l.AppendRow(buf, r)
	}
	return append(buf, '\n')
}

// renderParts renders rows in n parts at once, each with its own scratch
// buffer: the first straight to w after head (through one reused buffer,
// as Render), the others into blocks of flushAt bytes (one buffer growing
// to megabytes would be copied at each growth), written in order as soon
// as they and those before them are done.
func (l *Layout[R]) renderParts(w io.Writer, head []byte, rows []R, opts Options, n int) error {
	blocks := make([][][]byte, n)
	done := make([]chan struct{}, n)
	for p := 1; p < n; p++ {
		done[p] = make(chan struct{})
		lo, hi := p*len(rows)/n, (p+1)*len(rows)/n
		go func() {
			defer close(done[p])
			part := &Layout[R]{prefix: l.prefix, cols: l.cols, auto: l.auto}
			b := make([]byte, 0, flushAt+1024)
			for _, r := range rows[lo:hi] {
				b = part.appendLine(b, r, opts)
				if len(b) >= flushAt {
					blocks[p] = append(blocks[p], b)
					b = make([]byte, 0, flushAt+1024)
				}
			}
			blocks[p] = append(blocks[p], b)
		}()
	}
	var err error
	buf := head
	for _, r := range rows[:len(rows)/n] {
		buf = l.appendLine(buf, r, opts)
		if len(buf) >= flushAt {
			if err == nil {
				_, err = w.Write(buf)
			}
			buf = buf[:0]
		}
	}
	if err == nil && len(buf) > 0 {
		_, err = w.Write(buf)
	}
	for p := 1; p < n; p++ {
		<-done[p]
		for _, b := range blocks[p] {
			if err == nil && len(b) > 0 {
				_, err = w.Write(b)
			}
		}
		blocks[p] = nil
	}
	return err
}

// appendCell pads val to width (right- or left-justified) and cuts it to
// width unless noTrunc; a cut never splits a UTF-8 sequence.
func appendCell[S string | []byte](dst []byte, val S, width int, right, noTrunc bool) []byte {
	if width <= 0 {
		return append(dst, val...)
	}
	n := len(val)
	if n > width && !noTrunc {
		n = width
		for n > 0 && !utf8.RuneStart(val[n]) {
			n--
		}
		val = val[:n]
	}
	pad := width - n
	if right {
		dst = appendSpaces(dst, pad)
		return append(dst, val...)
	}
	dst = append(dst, val...)
	return appendSpaces(dst, pad)
}

const spaces = "                                                                "

func appendSpaces(dst []byte, n int) []byte {
	for n > len(spaces) {
		dst = append(dst, spaces...)
		n -= len(spaces)
	}
	if n > 0 {
		dst = append(dst, spaces[:n]...)
	}
	return dst
}
