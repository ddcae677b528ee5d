package jobspec

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
)

// MaxScriptSize is the largest batch script sbatch will read (Slurm's own
// client limit); the controller applies its configured, smaller limit.
const MaxScriptSize = 512 << 20

// Directives returns the arguments of the directive lines of script: lines
// starting with prefix (e.g. "#SBATCH"), read until the first line that is
// neither blank nor a comment. Within a line, arguments are separated by
// blanks; single or double quotes group (and are removed), a backslash
// escapes the next character, and an unquoted, unescaped '#' starts a
// trailing comment. A heterogeneous-job separator ("#SBATCH hetjob") is
// reported as an error, as Drover has no heterogeneous jobs.
func Directives(script []byte, prefix string) ([]string, error) {
	var args []string
	lineno := 0
	for rest := script; len(rest) > 0; {
		line := rest
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			line, rest = rest[:i], rest[i+1:]
		} else {
			rest = nil
		}
		lineno++
		if prefix != "" && bytes.HasPrefix(line, []byte(prefix)) {
			got, err := directiveArgs(line[len(prefix):], lineno, line)
			if err != nil {
				return nil, err
			}
			args = append(args, got...)
			continue
		}
		if t := bytes.TrimLeft(line, " \t\r\v\f"); len(t) > 0 && t[0] != '#' {
			break
		}
	}
	return args, nil
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f' || c == '\n'
}

// directiveArgs splits what follows the directive prefix on one line.
func directiveArgs(s []byte, lineno int, line []byte) ([]string, error) {
	i := 0
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	for _, sep := range []string{"hetjob", "packjob"} {
		if rest := s[i:]; len(rest) >= len(sep) && strings.EqualFold(string(rest[:len(sep)]), sep) &&
			(len(rest) == len(sep) || isSpace(rest[len(sep)])) {
			return nil, &Error{Msg: fmt.Sprintf("line %d: heterogeneous jobs (%q) are not supported", lineno, sep)}
		}
	}
	var args []string
	var cur []byte
	inArg, escaped := false, false
	var quote byte
	for ; i < len(s); i++ {
		c := s[i]
		switch {
		case escaped:
			escaped = false
		case c == '\\':
			escaped, inArg = true, true
			continue
		case quote != 0:
			if c == quote {
				quote = 0
				continue
			}
		case c == '"' || c == '\'':
			quote, inArg = c, true
			continue
		case c == '#':
			i = len(s) // the rest of the line is a comment
			continue
		case isSpace(c):
			if inArg {
				args = append(args, string(cur))
				cur, inArg = cur[:0], false
			}
			continue
		}
		cur, inArg = append(cur, c), true
	}
	if quote != 0 {
		return nil, &Error{Fatal: true, Msg: fmt.Sprintf("line %d: Unmatched `%c` in [%s]", lineno, quote, line)}
	}
	if inArg {
		args = append(args, string(cur))
	}
	return args, nil
}

// wrapScript is the script sbatch --wrap submits (same text as Slurm's).
func wrapScript(cmd string) string {
	return "#!/bin/sh\n# This script was created by sbatch --wrap.\n\n" + cmd + "\n"
}

// readScript reads the batch script from path (relative to ctx.Cwd), or from
// ctx.Stdin when path is empty, and checks that it looks like a script.
func readScript(ctx Context, path, shown string) (string, error) {
	var b []byte
	if path == "" {
		if ctx.Stdin != nil {
			var err error
			b, err = io.ReadAll(io.LimitReader(ctx.Stdin, MaxScriptSize+1))
			if err != nil {
				return "", &Error{Msg: "Unable to read batch script from standard input", Detail: err.Error()}
			}
		}
	} else {
		read := ctx.ReadFile
		if read == nil {
			read = os.ReadFile
		}
		var err error
		if b, err = read(path); err != nil {
			return "", &Error{Msg: "Unable to open file " + shown, Detail: err.Error()}
		}
	}
	if len(b) > MaxScriptSize {
		return "", &Error{Fatal: true, Msg: fmt.Sprintf("Script %s is too big, read more than %d bytes.", shown, MaxScriptSize)}
	}
	return string(b), checkScript(b)
}

// checkScript applies sbatch's sanity checks, in Slurm's order.
func checkScript(b []byte) error {
	switch {
	case len(b) == 0:
		return &Error{Msg: "Batch script is empty!"}
	case len(bytes.TrimLeft(b, " \t\r\n\v\f")) == 0:
		return &Error{Msg: "Batch script contains only whitespace!"}
	case !bytes.HasPrefix(b, []byte("#!")):
		return &Error{Msg: msgNotScript}
	case bytes.IndexByte(b, 0) >= 0:
		return &Error{Msg: "The Slurm controller does not allow scripts that\ncontain a NULL character '\\0'."}
	case bytes.Contains(b, []byte("\r\n")):
		return &Error{Msg: "Batch script contains DOS line breaks (\\r\\n)\ninstead of expected UNIX line breaks (\\n)."}
	}
	return nil
}
