package jobspec

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseMultiProg reads an srun --multi-prog configuration file for a step
// of ntasks tasks and returns the argv of each rank, ntasks entries.
//
// Each entry is a line "<ranks> <program> [arguments...]":
//   - ranks is a comma list of ranks N and ranges N-M (smaller first), or
//     "*" for every rank no earlier line named; a "*" line must be the last;
//   - program and arguments are split on white space; single quotes group
//     text literally, double quotes group it with substitution;
//   - outside single quotes "%t" becomes the task's rank and "%o" its
//     offset within the line's rank list (for "0,2-3", rank 3 has offset 2);
//     any other '%' stays as written.
//
// Blank lines and lines whose first non-blank character is '#' are
// ignored; a line ending in a backslash continues on the next one. Errors
// (*Error) name the line: malformed ranks, a rank out of range or named
// twice, a line without a program, an unterminated quote; and a rank left
// without a program. Arguments given on srun's command line after the file
// name are the caller's to append.
func ParseMultiProg(data []byte, ntasks int) ([][]string, error) {
	if ntasks <= 0 {
		return nil, mpErr(0, "invalid task count %d", ntasks)
	}
	argv := make([][]string, ntasks)
	lineOf := make([]int, ntasks) // the line that gave each rank its program
	starLine := 0
	for _, ln := range multiProgLines(string(data)) {
		text := strings.TrimLeft(ln.text, " \t\v\f\r")
		if text == "" || text[0] == '#' {
			continue
		}
		if starLine != 0 {
			return nil, mpErr(ln.num, "no entry may follow the '*' entry of line %d", starLine)
		}
		end := strings.IndexAny(text, " \t\v\f\r")
		if end < 0 {
			end = len(text)
		}
		spec := text[:end]
		words, err := splitMultiProgArgs(text[end:])
		if err != nil {
			return nil, mpErr(ln.num, "%s", err)
		}
		if len(words) == 0 {
			return nil, mpErr(ln.num, "no program given for task ranks %s", spec)
		}
		var ranks []int
		if spec == "*" {
			starLine = ln.num
			for r := range ntasks {
				if argv[r] == nil {
					ranks = append(ranks, r)
				}
			}
		} else if ranks, err = parseMultiProgRanks(spec, ntasks); err != nil {
			return nil, mpErr(ln.num, "%s", err)
		}
		for off, r := range ranks {
			if argv[r] != nil {
				if lineOf[r] == ln.num {
					return nil, mpErr(ln.num, "task rank %d is given twice", r)
				}
				return nil, mpErr(ln.num, "task rank %d is given twice (also on line %d)", r, lineOf[r])
			}
			argv[r] = expandMultiProg(words, r, off)
			lineOf[r] = ln.num
		}
	}
	for r, a := range argv {
		if a == nil {
			return nil, mpErr(0, "no program specified for task rank %d", r)
		}
	}
	return argv, nil
}

func mpErr(line int, format string, args ...any) *Error {
	msg := fmt.Sprintf(format, args...)
	if line > 0 {
		return &Error{Msg: fmt.Sprintf("multi-prog configuration line %d: %s", line, msg)}
	}
	return &Error{Msg: "multi-prog configuration: " + msg}
}

type numberedLine struct {
	num  int // of its first physical line, from 1
	text string
}

// multiProgLines splits data into logical lines: a line ending in '\'
// (before an optional '\r') is joined with the next, without the
// backslash.
func multiProgLines(data string) []numberedLine {
	var out []numberedLine
	var cur strings.Builder
	start, cont := 0, false
	for i, l := range strings.Split(data, "\n") {
		l = strings.TrimSuffix(l, "\r")
		if !cont {
			start = i + 1
			cur.Reset()
		}
		cont = strings.HasSuffix(l, `\`)
		cur.WriteString(strings.TrimSuffix(l, `\`))
		if !cont {
			out = append(out, numberedLine{start, cur.String()})
		}
	}
	if cont {
		out = append(out, numberedLine{start, cur.String()})
	}
	return out
}

// parseMultiProgRanks reads "0,2-3" into the ranks in listed order.
func parseMultiProgRanks(spec string, ntasks int) ([]int, error) {
	bad := fmt.Errorf("invalid task rank specification %q (want ranks like 0,2-5 or *)", spec)
	num := func(s string) (int, error) {
		if s == "" || strings.Trim(s, "0123456789") != "" {
			return 0, bad
		}
		n, err := strconv.Atoi(s)
		if err != nil || n >= ntasks {
			return 0, fmt.Errorf("task rank %s is out of range: the step has %d tasks (ranks 0-%d)", s, ntasks, ntasks-1)
		}
		return n, nil
	}
	var out []int
	for _, item := range strings.Split(spec, ",") {
		los, his, isRange := strings.Cut(item, "-")
		lo, err := num(los)
		if err != nil {
			return nil, err
		}
		hi := lo
		if isRange {
			if his == "" || strings.Trim(his, "0123456789") != "" {
				return nil, bad
			}
			if hi, err = num(his); err != nil {
				return nil, err
			}
			if hi < lo {
				return nil, fmt.Errorf("invalid task range %s: the smaller rank must come first", item)
			}
		}
		for r := lo; r <= hi; r++ {
			out = append(out, r)
		}
	}
	return out, nil
}

// mpSeg is a piece of a word: literal (single-quoted) or subject to %t/%o.
type mpSeg struct {
	text    string
	literal bool
}

// splitMultiProgArgs splits the program and arguments of an entry.
func splitMultiProgArgs(s string) ([][]mpSeg, error) {
	var words [][]mpSeg
	var word []mpSeg
	inWord := false
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == '\r':
			if inWord {
				words, word, inWord = append(words, word), nil, false
			}
			i++
		case c == '\'' || c == '"':
			j := strings.IndexByte(s[i+1:], c)
			if j < 0 {
				return nil, fmt.Errorf("unterminated %c quote", c)
			}
			word = append(word, mpSeg{s[i+1 : i+1+j], c == '\''})
			inWord = true
			i += j + 2
		default:
			j := i
			for j < len(s) && !strings.ContainsRune(" \t\v\f\r'\"", rune(s[j])) {
				j++
			}
			word = append(word, mpSeg{s[i:j], false})
			inWord = true
			i = j
		}
	}
	if inWord {
		words = append(words, word)
	}
	return words, nil
}

// expandMultiProg builds one rank's argv, replacing %t and %o.
func expandMultiProg(words [][]mpSeg, rank, offset int) []string {
	out := make([]string, len(words))
	t, o := strconv.Itoa(rank), strconv.Itoa(offset)
	for i, w := range words {
		var b strings.Builder
		for _, seg := range w {
			if seg.literal || !strings.Contains(seg.text, "%") {
				b.WriteString(seg.text)
				continue
			}
			for k := 0; k < len(seg.text); k++ {
				if seg.text[k] == '%' && k+1 < len(seg.text) {
					switch seg.text[k+1] {
					case 't':
						b.WriteString(t)
						k++
						continue
					case 'o':
						b.WriteString(o)
						k++
						continue
					}
				}
				b.WriteByte(seg.text[k])
			}
		}
		out[i] = b.String()
	}
	return out
}
