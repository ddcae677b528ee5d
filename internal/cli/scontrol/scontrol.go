package scontrol

import (
	"bufio"
	"context"
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/drover-hpc/drover/internal/cli"
)

// runner carries one scontrol invocation: its options and its outcome.
type runner struct {
	ctx      context.Context
	env      *cli.Env
	oneLiner bool
	details  int
	all      bool
	quiet    bool
	verbose  int
	failed   bool
	quit     bool

	users, groups map[uint32]string
}

// Run is the scontrol command. With no command words it reads commands from
// standard input, one per line, until end of input or "quit".
func Run(ctx context.Context, env *cli.Env, args []string) int {
	r := &runner{ctx: ctx, env: env}
	var version, help, usage, jsonOut bool
	var clusters, uid string
	fs := pflag.NewFlagSet("scontrol", pflag.ContinueOnError)
	fs.SetOutput(discard{})
	fs.BoolVarP(&r.all, "all", "a", false, "")
	fs.CountVarP(&r.details, "details", "d", "")
	fs.BoolVarP(&r.oneLiner, "oneliner", "o", false, "")
	fs.BoolVarP(&r.quiet, "quiet", "Q", false, "")
	fs.CountVarP(&r.verbose, "verbose", "v", "")
	fs.BoolVarP(&version, "version", "V", false, "")
	fs.StringVarP(&clusters, "clusters", "M", "", "")
	fs.StringVarP(&uid, "uid", "u", "", "")
	fs.BoolVar(&jsonOut, "json", false, "")
	fs.BoolVarP(&help, "help", "h", false, "")
	fs.BoolVar(&usage, "usage", false, "")
	fs.Bool("federation", false, "")
	fs.Bool("local", false, "")
	fs.Bool("sibling", false, "")
	fs.BoolP("future", "F", false, "")
	if err := fs.Parse(args); err != nil {
		fmt.Fprintf(env.Stderr, "%s: %v\n", env.Prog, err)
		fmt.Fprintf(env.Stderr, "Try \"%s --help\" for more information\n", env.Prog)
		return env.ExitError()
	}
	if _, ok := env.LookupEnv("SCONTROL_ALL"); ok {
		r.all = true
	}
	switch {
	case version:
		fmt.Fprintln(env.Stdout, versionLine(env.Version))
		return 0
	case help || usage:
		fmt.Fprint(env.Stdout, usageText)
		return 0
	case jsonOut:
		env.Errorf("--json is not supported by this scontrol")
		return env.ExitError()
	}
	if words := fs.Args(); len(words) > 0 {
		r.process(words)
	} else {
		r.readCommands()
	}
	if r.failed {
		return env.ExitError()
	}
	return 0
}

// readCommands runs one command per input line.
func (r *runner) readCommands() {
	sc := bufio.NewScanner(r.env.Stdin)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for !r.quit && sc.Scan() {
		if words := splitLine(sc.Text()); len(words) > 0 {
			r.process(words)
		}
	}
}

// splitLine splits an input line on white space; quotes group words and
// are removed.
func splitLine(line string) []string {
	var words []string
	var cur strings.Builder
	inWord := false
	var quote rune
	for _, c := range line {
		switch {
		case quote != 0 && c == quote:
			quote = 0
		case quote == 0 && (c == '"' || c == '\''):
			quote, inWord = c, true
		case quote == 0 && (c == ' ' || c == '\t'):
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}

// abbrev reports whether tag names keyword: a case-insensitive prefix of it
// at least min characters long, as scontrol accepts.
func abbrev(tag, keyword string, min int) bool {
	return len(tag) >= min && len(tag) <= len(keyword) && strings.EqualFold(tag, keyword[:len(tag)])
}

type command struct {
	name string
	min  int
	run  func(r *runner, argv []string)
}

// commands in the order scontrol tries them; nil run = known to Slurm but
// not provided by Drover.
var commands = []command{
	{"abort", 5, nil},
	{"all", 2, func(r *runner, _ []string) { r.all = true }},
	{"cancel_reboot", 3, nil},
	{"completing", 2, nil},
	{"cluster", 2, nil},
	{"create", 2, (*runner).create},
	{"details", 1, func(r *runner, _ []string) { r.details = 1 }},
	{"errnumstr", 2, nil},
	{"exit", 2, func(r *runner, _ []string) { r.quit = true }},
	{"help", 2, func(r *runner, _ []string) { fmt.Fprint(r.env.Stdout, usageText) }},
	{"hide", 2, func(r *runner, _ []string) { r.all, r.details = false, 0 }},
	{"oneliner", 1, func(r *runner, _ []string) { r.oneLiner = true }},
	{"pidinfo", 3, nil},
	{"ping", 3, (*runner).ping},
	{"quiet", 4, func(r *runner, _ []string) { r.quiet = true }},
	{"quit", 4, func(r *runner, _ []string) { r.quit = true }},
	{"reboot_nodes", 3, nil},
	{"reconfigure", 3, (*runner).reconfigure},
	{"requeue", 3, (*runner).control},
	{"requeuehold", 11, (*runner).control},
	{"hold", 4, (*runner).control},
	{"holdu", 5, (*runner).control},
	{"uhold", 5, (*runner).control},
	{"release", 3, (*runner).control},
	{"suspend", 2, (*runner).control},
	{"resume", 3, (*runner).control},
	{"top", 3, (*runner).top},
	{"token", 3, nil},
	{"wait_job", 2, nil},
	{"setdebugflags", 9, nil},
	{"fsdampeningfactor", 3, nil},
	{"setdebug", 2, nil},
	{"schedloglevel", 3, nil},
	{"show", 3, (*runner).show},
	{"write", 5, nil},
	{"takeover", 8, nil},
	{"shutdown", 8, nil},
	{"update", 1, (*runner).update},
	{"delete", 1, (*runner).deleteIt},
	{"verbose", 4, func(r *runner, _ []string) { r.verbose++ }},
	{"version", 4, func(r *runner, _ []string) { fmt.Fprintln(r.env.Stdout, versionLine(r.env.Version)) }},
	{"listpids", 1, nil},
	{"getent", 6, nil},
	{"notify", 1, nil},
	{"callerid", 3, nil},
}

// process runs one command line.
func (r *runner) process(argv []string) {
	tag := argv[0]
	for _, c := range commands {
		if !abbrev(tag, c.name, c.min) {
			continue
		}
		if c.run == nil {
			r.fail()
			r.env.Errorf("%s: command not supported by Drover", c.name)
			return
		}
		c.run(r, argv)
		return
	}
	r.fail()
	fmt.Fprintf(r.env.Stderr, "invalid keyword: %s\n", tag)
}

// fail marks the command as failed.
func (r *runner) fail() { r.failed = true }

// complain prints a message on stderr unless -Q, and marks failure.
func (r *runner) complain(format string, args ...any) {
	r.fail()
	if !r.quiet {
		fmt.Fprintf(r.env.Stderr, format+"\n", args...)
	}
}

// perror prints "<what>: <err>" the way Slurm's slurm_perror does.
func (r *runner) perror(what string, err error) {
	r.complain("%s: %v", what, err)
}

// client dials the controller, reporting failure as what's error.
func (r *runner) client(what string) cli.Client {
	c, err := r.env.Client()
	if err != nil {
		r.perror(what, err)
		return nil
	}
	return c
}

// versionLine is what -V prints: "slurm <version>" like Slurm's clients,
// unless the build's version string already names its package.
func versionLine(v string) string {
	if v == "" {
		v = "unknown"
	}
	if strings.ContainsRune(v, ' ') {
		return v
	}
	return "slurm " + v
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

const usageText = `Usage: scontrol [OPTIONS] [COMMAND [ARGUMENTS...]]

Options:
  -a, --all         include hidden partitions (same as the "all" command)
  -d, --details     more detail in "show job" (same as "details")
  -h, --help        print this text (same as "help")
  -o, --oneliner    one line per record (same as "oneliner")
  -Q, --quiet       report no errors (same as "quiet")
  -v, --verbose     more messages (same as "verbose")
  -V, --version     print the version (same as "version")

Without a command, scontrol reads commands from standard input, one per
line, until end of input or "quit".

Commands:
  show config                     the controller's configuration
  show job [<id>]                 jobs (all, or one job or array)
  show node [<hostlist>]          nodes
  show partition [<name>]         partitions
  show step [<job>[.<step>]]      running job steps (all, a job's, or one)
  show hostnames [<hostlist>]     expand a hostlist ($SLURM_JOB_NODELIST)
  show hostlist <names>           compress names, keeping their order
  show hostlistsorted <names>     compress names, sorted
  hold|uhold|release <jobs>       hold (admin or user) or release jobs
  requeue|requeuehold <jobs>      requeue batch jobs (and hold them)
  update JobId=<jobs> <field>=<value>...
                                  fields: TimeLimit Partition Name Comment Nice
  update NodeName=<hostlist> State=<state> [Reason=<text>]
                                  states: DRAIN DOWN IDLE RESUME UNDRAIN
  ping                            report whether the controllers are up
  reconfigure                     make the controller re-read its files
  version                         print the version
  all, details, oneliner, quiet, verbose, hide
                                  change the options for later commands
  exit, quit                      leave interactive mode
`
