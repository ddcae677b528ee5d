package slurmconf

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
)

// maxLineLen bounds one physical line; longer lines are almost certainly
// not a config file and would otherwise be buffered whole.
const maxLineLen = 1 << 20

// logicalLine is one line after comments are removed and backslash
// continuations are joined; num is the first physical line's number.
type logicalLine struct {
	num  int
	text string
}

// readLines splits r into logical lines and calls fn for each non-blank one.
func readLines(r io.Reader, file string, fn func(logicalLine) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), maxLineLen)
	num := 0
	var pending strings.Builder
	start := 0
	flush := func() error {
		text := strings.TrimSpace(pending.String())
		pending.Reset()
		if text == "" {
			return nil
		}
		return fn(logicalLine{num: start, text: text})
	}
	for sc.Scan() {
		num++
		if pending.Len() == 0 {
			start = num
		}
		text := strings.TrimRight(stripComment(sc.Text()), " \t\r")
		if cont, ok := strings.CutSuffix(text, `\`); ok {
			pending.WriteString(cont)
			pending.WriteByte(' ')
			if pending.Len() > maxLineLen {
				return perr(file, start, "continued line too long")
			}
			continue
		}
		pending.WriteString(text)
		if err := flush(); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return perr(file, num+1, fmt.Sprintf("line longer than %d bytes", maxLineLen))
		}
		return perr(file, num, err.Error())
	}
	// A continuation on the last line simply ends the file.
	return flush()
}

// stripComment cuts s at the first '#' outside double quotes. "\#" stands
// for a literal '#', as in Slurm, so values such as MpiParams=ports=#-#
// can be written as ports=\#-\#.
func stripComment(s string) string {
	if !strings.ContainsRune(s, '#') {
		return s
	}
	var b strings.Builder
	inQuote := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"':
			inQuote = !inQuote
		case c == '\\' && i+1 < len(s) && s[i+1] == '#':
			b.WriteByte('#')
			i++
			continue
		case c == '#' && !inQuote:
			return b.String()
		}
		b.WriteByte(c)
	}
	return b.String()
}

// pair is one key=value token; key keeps the user's spelling.
type pair struct {
	key, value string
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f'
}

func isKeyChar(c byte) bool {
	return c == '_' || c == '.' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// splitPairs tokenizes a logical line into key=value pairs. Like Slurm it
// allows blanks around '=' and double-quoted values that may hold blanks.
func splitPairs(s string) ([]pair, error) {
	var out []pair
	i := 0
	skip := func() {
		for i < len(s) && isSpace(s[i]) {
			i++
		}
	}
	for {
		skip()
		if i >= len(s) {
			return out, nil
		}
		start := i
		for i < len(s) && isKeyChar(s[i]) {
			i++
		}
		key := s[start:i]
		if key == "" {
			return nil, fmt.Errorf("expected a key, found %q", clip(s[start:]))
		}
		skip()
		if i >= len(s) || s[i] != '=' {
			return nil, fmt.Errorf("expected key=value, found %q", clip(s[start:]))
		}
		i++
		skip()
		var val string
		if i < len(s) && s[i] == '"' {
			end := strings.IndexByte(s[i+1:], '"')
			if end < 0 {
				return nil, fmt.Errorf("unterminated quote in value of %s", key)
			}
			val = s[i+1 : i+1+end]
			i += end + 2
			if i < len(s) && !isSpace(s[i]) {
				return nil, fmt.Errorf("unexpected %q after quoted value of %s", clip(s[i:]), key)
			}
		} else {
			vs := i
			for i < len(s) && !isSpace(s[i]) {
				i++
			}
			val = s[vs:i]
		}
		out = append(out, pair{key: key, value: val})
	}
}

// clip shortens text quoted in error messages.
func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}
