package jobspec

import (
	"fmt"
	"io"
	"sort"
	"strings"
)

// argKind says whether an option takes an argument, as getopt_long does.
type argKind uint8

const (
	noArg argKind = iota
	reqArg
	optArg
)

// optIndex is one command's option table, looked up the way getopt_long
// looks options up.
type optIndex struct {
	kind  Kind
	long  map[string]*optDef
	short map[byte]*optDef
	names []string // long names in table order, for abbreviations
}

func newOptIndex(kind Kind) *optIndex {
	x := &optIndex{kind: kind, long: map[string]*optDef{}, short: map[byte]*optDef{}}
	for i := range optTable {
		d := &optTable[i]
		if !d.kinds.has(kind) {
			continue
		}
		x.long[d.long] = d
		x.names = append(x.names, d.long)
		if d.short != 0 {
			x.short[d.short] = d
		}
	}
	return x
}

// lookupLong finds a long option by exact name or unique abbreviation.
// arg is the whole argument, for the ambiguity message.
func (x *optIndex) lookupLong(name, arg string) (*optDef, *Error) {
	if d, ok := x.long[name]; ok {
		return d, nil
	}
	var hits []string
	for _, n := range x.names {
		if strings.HasPrefix(n, name) {
			hits = append(hits, n)
		}
	}
	if len(hits) == 1 && name != "" {
		return x.long[hits[0]], nil
	}
	if len(hits) > 1 && name != "" {
		// Sorted here, not in newOptIndex: every command builds an
		// index, few meet an ambiguous abbreviation.
		sort.Strings(hits)
		for i, h := range hits {
			hits[i] = "'--" + h + "'"
		}
		return nil, x.usage("option '%s' is ambiguous; possibilities: %s", arg, strings.Join(hits, " "))
	}
	return nil, nil
}

func (x *optIndex) usage(format string, args ...any) *Error {
	return &Error{Usage: true, Exit: exitOption, Prog: x.kind.String(),
		Msg: x.kind.String() + ": " + fmt.Sprintf(format, args...)}
}

// normalize scans args as getopt_long does for a command that stops at the
// first non-option ("+" mode). It rewrites every option it finds as
// "--long" or "--long=value" and returns them, and the remaining operands.
// On a usage error it returns the options normalized before the error too,
// so that an earlier --help still wins, as it does in Slurm.
func (x *optIndex) normalize(args []string) (opts, rest []string, err *Error) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return opts, args[i+1:], nil
		case len(a) < 2 || a[0] != '-':
			return opts, args[i:], nil
		case strings.HasPrefix(a, "--"):
			name, val, hasVal := strings.Cut(a[2:], "=")
			d, uerr := x.lookupLong(name, a)
			if uerr != nil {
				return opts, nil, uerr
			}
			if d == nil {
				return opts, nil, x.usage("unrecognized option '%s'", a)
			}
			switch {
			case d.arg == noArg && hasVal:
				return opts, nil, x.usage("option '--%s' doesn't allow an argument", d.long)
			case d.arg == reqArg && !hasVal:
				if i+1 >= len(args) {
					return opts, nil, x.usage("option '--%s' requires an argument", d.long)
				}
				i++
				val, hasVal = args[i], true
			}
			opts = append(opts, longForm(d, val, hasVal))
		default:
			for j := 1; j < len(a); j++ {
				d := x.short[a[j]]
				if d == nil {
					return opts, nil, x.usage("invalid option -- '%s'", string(a[j]))
				}
				if d.arg == noArg {
					opts = append(opts, longForm(d, "", false))
					continue
				}
				val, hasVal := a[j+1:], j+1 < len(a)
				if d.arg == reqArg && !hasVal {
					if i+1 >= len(args) {
						return opts, nil, x.usage("option requires an argument -- '%s'", string(a[j]))
					}
					i++
					val, hasVal = args[i], true
				}
				opts = append(opts, longForm(d, val, hasVal))
				break
			}
		}
	}
	return opts, nil, nil
}

func longForm(d *optDef, val string, hasVal bool) string {
	if hasVal {
		return "--" + d.long + "=" + val
	}
	return "--" + d.long
}

// PrintUsage writes HelpText (full) or UsageText to w.
func PrintUsage(w io.Writer, kind Kind, full bool) {
	if full {
		io.WriteString(w, HelpText(kind))
		return
	}
	io.WriteString(w, UsageText(kind))
}

// HelpText is the --help output for kind: a usage line and every option.
func HelpText(kind Kind) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Usage: %s\n\n", usageLine(kind))
	for i := range optTable {
		d := &optTable[i]
		if !d.kinds.has(kind) || d.help == "" {
			continue
		}
		left := "    "
		if d.short != 0 {
			left = "-" + string(d.short) + ", "
		}
		left += "--" + d.long
		switch d.arg {
		case reqArg:
			left += "=" + d.meta
		case optArg:
			left += "[=" + d.meta + "]"
		}
		fmt.Fprintf(&b, "  %-30s %s\n", left, d.help)
	}
	return b.String()
}

// UsageText is the --usage output for kind: the usage line.
func UsageText(kind Kind) string {
	return "Usage: " + usageLine(kind) + "\n"
}

func usageLine(kind Kind) string {
	switch kind {
	case Sbatch:
		return "sbatch [OPTIONS...] [script [args...]]"
	case Srun:
		return "srun [OPTIONS...] executable [args...]"
	default:
		return "salloc [OPTIONS...] [command [args...]]"
	}
}
