package format

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// MaxWidth bounds a field width so that a mistyped format cannot make a
// command pad every line to gigabytes.
const MaxWidth = 1 << 16

// DefaultLongWidth is the width of a -O field written without ":".
const DefaultLongWidth = 20

// Spec is one field reference of a format, before it is resolved against a
// Table.
type Spec struct {
	Name   string // the letter ("i") for -o, the field name ("JobID") for -O
	Long   bool   // true when the spec came from a -O (--Format) string
	Width  int    // 0: natural width
	Right  bool   // right-justify ("." in the spec)
	Auto   bool   // "#": width of the widest value
	Suffix string // literal text printed after the field
}

// Format is a parsed format string.
type Format struct {
	Prefix string // literal text before the first field (-o only)
	Specs  []Spec
	// All is set for "%all": every field of the table, separated by "|".
	All bool
}

// ErrEmpty is returned for an empty format string.
var ErrEmpty = errors.New("format option lacks specification")

// Parse parses a -o/--format string: literal text and %[.][size]type
// specifiers, where type is one letter, size is a decimal width or "#"
// (auto width). As in Slurm, the text following a specifier up to the next
// "%" is that field's suffix, and consecutive "%" collapse into one, so a
// literal "%" cannot be written. "%all" selects every field.
func Parse(s string) (Format, error) {
	var f Format
	if s == "" {
		return f, ErrEmpty
	}
	if strings.EqualFold(s, "%all") {
		f.All = true
		return f, nil
	}
	i := strings.IndexByte(s, '%')
	if i < 0 {
		f.Prefix = s
		return f, nil
	}
	f.Prefix = s[:i]
	rest := s[i:]
	for rest != "" {
		// rest starts with one or more '%'.
		for rest != "" && rest[0] == '%' {
			rest = rest[1:]
		}
		if rest == "" {
			break
		}
		end := strings.IndexByte(rest, '%')
		if end < 0 {
			end = len(rest)
		}
		spec, err := parseToken(rest[:end])
		if err != nil {
			return Format{}, err
		}
		f.Specs = append(f.Specs, spec)
		rest = rest[end:]
	}
	return f, nil
}

// parseToken parses "[.][#|digits]type[suffix]" (the text after a "%").
func parseToken(tok string) (Spec, error) {
	var sp Spec
	orig := tok
	if tok != "" && tok[0] == '.' {
		sp.Right = true
		tok = tok[1:]
	}
	if tok != "" && tok[0] == '#' {
		sp.Auto = true
		tok = tok[1:]
	} else {
		n, rest, err := leadingInt(tok)
		if err != nil {
			return Spec{}, fmt.Errorf("invalid field width in %q: %w", "%"+orig, err)
		}
		sp.Width, tok = n, rest
	}
	if tok == "" {
		return Spec{}, fmt.Errorf("missing field type after %q", "%"+orig)
	}
	_, size := utf8.DecodeRuneInString(tok)
	sp.Name, sp.Suffix = tok[:size], tok[size:]
	return sp, nil
}

// leadingInt reads the decimal digits at the start of s.
func leadingInt(s string) (int, string, error) {
	n, i := 0, 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		n = n*10 + int(s[i]-'0')
		if n > MaxWidth {
			return 0, s, fmt.Errorf("width above %d", MaxWidth)
		}
		i++
	}
	return n, s[i:], nil
}

// ParseLong parses a -O/--Format string: comma-separated
// name[:[.][size][suffix]] items. Without ":" the width is
// DefaultLongWidth; "name:" has no width (no padding); any text after the
// size is the suffix. Empty items are skipped.
func ParseLong(s string) (Format, error) {
	var f Format
	if s == "" {
		return f, ErrEmpty
	}
	for _, item := range strings.Split(s, ",") {
		if item == "" {
			continue
		}
		sp := Spec{Long: true}
		name, opts, hasOpts := strings.Cut(item, ":")
		sp.Name = name
		if !hasOpts {
			sp.Width = DefaultLongWidth
		} else {
			if opts != "" && opts[0] == '.' {
				sp.Right = true
				opts = opts[1:]
			}
			n, rest, err := leadingInt(opts)
			if err != nil {
				return Format{}, fmt.Errorf("invalid field width in %q: %w", item, err)
			}
			sp.Width, sp.Suffix = n, rest
		}
		if sp.Name == "" {
			return Format{}, fmt.Errorf("missing field name in %q", item)
		}
		f.Specs = append(f.Specs, sp)
	}
	if len(f.Specs) == 0 {
		return f, ErrEmpty
	}
	return f, nil
}

// String writes f back in the -o or -O language it came from.
func (f Format) String() string {
	if f.All {
		return "%all"
	}
	var b strings.Builder
	b.WriteString(f.Prefix)
	for i, sp := range f.Specs {
		if sp.Long {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(sp.Name)
			if sp.Width == DefaultLongWidth && !sp.Right && sp.Suffix == "" {
				continue
			}
			b.WriteByte(':')
			if sp.Right {
				b.WriteByte('.')
			}
			if sp.Width > 0 {
				fmt.Fprint(&b, sp.Width)
			}
			b.WriteString(sp.Suffix)
			continue
		}
		b.WriteByte('%')
		if sp.Right {
			b.WriteByte('.')
		}
		switch {
		case sp.Auto:
			b.WriteByte('#')
		case sp.Width > 0:
			fmt.Fprint(&b, sp.Width)
		case sp.Name == "#" || sp.Name == ".":
			b.WriteByte('0') // keeps the name from reading as a flag
		}
		b.WriteString(sp.Name)
		b.WriteString(sp.Suffix)
	}
	if out := b.String(); !strings.EqualFold(out, "%all") {
		return out
	}
	return "%0" + b.String()[1:] // one field "a" with suffix "ll", not %all
}
