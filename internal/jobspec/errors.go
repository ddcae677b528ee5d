package jobspec

import (
	"fmt"
	"io"
	"strings"
)

// Error is a failure to print to the user in Slurm's wording.
//
// Msg is exactly the text Slurm prints after "<prog>: error: " (one line per
// "\n"-separated line, each with its own prefix), except:
//   - Usage errors (unknown option, missing argument): Msg is the whole
//     getopt-style line, e.g. "sbatch: unrecognized option '--foo'", and the
//     line `Try "sbatch --help" for more information` follows it;
//   - Fatal errors: each line is printed as "<prog>: fatal: <line>".
//
// Callers print it with Lines and exit with Exit, or with their default error
// status (SLURM_EXIT_ERROR, else 1) when Exit is 0:
//
//	var je *jobspec.Error
//	if errors.As(err, &je) {
//		for _, l := range je.Lines() {
//			fmt.Fprintln(stderr, l)
//		}
//	}
type Error struct {
	Msg    string
	Prog   string // "sbatch", "srun" or "salloc"; empty from the standalone parsers
	Usage  bool   // getopt-style complaint followed by the "Try ... --help" line
	Fatal  bool   // printed with "fatal:" instead of "error:"
	Exit   int    // exit status Slurm uses for this failure; 0 = caller's default
	Detail string // what exactly was wrong, for -v output; not Slurm wording
}

func (e *Error) Error() string {
	msg := strings.ReplaceAll(e.Msg, "\n", " ")
	if e.Detail != "" {
		return msg + " (" + e.Detail + ")"
	}
	return msg
}

// Lines returns the stderr lines Slurm prints for e, without newlines.
func (e *Error) Lines() []string {
	prog := e.Prog
	if prog == "" {
		prog = "drover"
	}
	if e.Usage {
		return append(strings.Split(e.Msg, "\n"),
			`Try "`+prog+` --help" for more information`)
	}
	level := ": error: "
	if e.Fatal {
		level = ": fatal: "
	}
	lines := strings.Split(e.Msg, "\n")
	for i, l := range lines {
		lines[i] = prog + level + l
	}
	return lines
}

// Print writes Lines to w, one per line, naming the program prog (e.g. the
// name the command was invoked as); an empty prog keeps e.Prog.
func (e *Error) Print(w io.Writer, prog string) {
	c := *e
	if prog != "" {
		if c.Usage && c.Prog != "" && strings.HasPrefix(c.Msg, c.Prog+": ") {
			c.Msg = prog + c.Msg[len(c.Prog):]
		}
		c.Prog = prog
	}
	for _, l := range c.Lines() {
		fmt.Fprintln(w, l)
	}
}

// exitOption is the status Slurm's clients use when an option value is
// rejected (they call exit(-1)).
const exitOption = 255

func optErr(msg string) *Error { return &Error{Msg: msg, Exit: exitOption} }

// Messages scripts and tests grep for.
const (
	msgInvalidArray = "Invalid job array specification"
	msgDependency   = "Job dependency problem"
	msgMemExclusive = "--mem, --mem-per-cpu, and --mem-per-gpu are mutually exclusive."
	msgMemEnvExcl   = "SLURM_MEM_PER_CPU, SLURM_MEM_PER_GPU, and SLURM_MEM_PER_NODE are mutually exclusive."
	msgNotScript    = "This does not look like a batch script.  The first\n" +
		"line must start with #! followed by the path to an interpreter.\n" +
		"For instance: #!/bin/sh"
)
