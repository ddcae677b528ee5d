package sacctmgr

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/drover-hpc/drover/internal/acctmgr"
	"github.com/drover-hpc/drover/internal/cli"
)

// options are sacctmgr's command-line options (some also commands).
type options struct {
	immediate bool // -i: no question before committing
	noHeader  bool
	mode      int // acctmgr.Aligned, Parsable, Parsable2: the last given
	quiet     bool
	readonly  bool
	withAssoc bool // -s
	verbose   int
	oneLiner  bool
}

// errStop ends the option scan where getopt would act at once: -h, -V.
var errStop = errors.New("stop")

type flagValue func(string) error

func (v flagValue) Set(s string) error { return v(s) }
func (v flagValue) String() string     { return "" }
func (v flagValue) Type() string       { return "bool" }

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

func newFlagSet(o *options, action *string) *pflag.FlagSet {
	fs := pflag.NewFlagSet("sacctmgr", pflag.ContinueOnError)
	fs.SetOutput(discard{})
	fs.Usage = func() {}
	flag := func(name, short string, fn func()) {
		f := fs.VarPF(flagValue(func(string) error { fn(); return nil }), name, short, "")
		f.NoOptDefVal = "true"
	}
	stop := func(name, short, what string) {
		f := fs.VarPF(flagValue(func(string) error { *action = what; return errStop }), name, short, "")
		f.NoOptDefVal = "true"
	}
	stop("help", "h", "help")
	stop("usage", "", "help")
	stop("version", "V", "version")
	flag("immediate", "i", func() { o.immediate = true })
	flag("noheader", "n", func() { o.noHeader = true })
	flag("oneliner", "o", func() { o.oneLiner = true })
	flag("parsable", "p", func() { o.mode = acctmgr.Parsable })
	flag("parsable2", "P", func() { o.mode = acctmgr.Parsable2 })
	flag("quiet", "Q", func() { o.quiet = true })
	flag("readonly", "r", func() { o.readonly = true })
	flag("associations", "s", func() { o.withAssoc = true })
	flag("verbose", "v", func() { o.verbose++ })
	return fs
}

// Run is the sacctmgr command.
func Run(ctx context.Context, env *cli.Env, args []string) int {
	o := &options{}
	action := ""
	fs := newFlagSet(o, &action)
	err := fs.Parse(args)
	switch {
	case action == "help":
		fmt.Fprint(env.Stdout, helpText)
		return 0
	case action == "version":
		fmt.Fprintf(env.Stdout, "slurm %s\n", env.Version)
		return 0
	case err != nil:
		fmt.Fprintf(env.Stderr, "%s: %s\n", env.Prog, cli.GetoptMessage(err))
		fmt.Fprintf(env.Stderr, "Try \"%s --help\" for more information\n", env.Prog)
		return 1
	}
	s := &session{ctx: ctx, env: env, o: o, in: newInput(env.Stdin)}
	if fs.NArg() > 0 {
		s.command(fs.Args())
		if s.failed {
			return env.ExitError()
		}
		return 0
	}
	return s.interactive()
}

// session runs commands: one from the command line, or many read from
// stdin.
type session struct {
	ctx    context.Context
	env    *cli.Env
	o      *options
	in     *input
	failed bool // a command failed: the exit status is an error
	quit   bool
}

// fail prints sacctmgr's complaint and marks the session failed.
func (s *session) fail(format string, args ...any) {
	fmt.Fprintf(s.env.Stderr, format, args...)
	s.failed = true
}

// keyword matches a command word: name shortened to at least min.
func keyword(w, name string, min int) bool {
	return len(w) >= min && len(w) <= len(name) && strings.EqualFold(w, name[:len(w)])
}

// command runs one command line (words after the options).
func (s *session) command(words []string) {
	w, rest := words[0], words[1:]
	tooMany := func() {
		if len(rest) > 0 {
			s.fail("too many arguments for keyword:%s\n", w)
		}
	}
	switch {
	case keyword(w, "associations", 3):
		s.o.withAssoc = true
	case keyword(w, "help", 2):
		tooMany()
		fmt.Fprint(s.env.Stdout, helpText)
	case keyword(w, "oneliner", 1):
		tooMany()
		s.o.oneLiner = true
	case keyword(w, "quiet", 4):
		tooMany()
		s.o.quiet = true
	case keyword(w, "exit", 4), keyword(w, `\q`, 2), keyword(w, "quit", 4):
		tooMany()
		s.quit = true
	case keyword(w, "add", 3), keyword(w, "create", 3):
		s.change(acctmgr.VerbAdd, rest)
	case keyword(w, "show", 3), keyword(w, "list", 3):
		s.list(rest)
	case keyword(w, "modify", 1), keyword(w, "update", 1):
		s.change(acctmgr.VerbModify, rest)
	case keyword(w, "delete", 3), keyword(w, "remove", 3):
		s.change(acctmgr.VerbDelete, rest)
	case keyword(w, "verbose", 4):
		tooMany()
		s.o.verbose++
	case keyword(w, "readonly", 4):
		tooMany()
		s.o.readonly = true
	case keyword(w, "version", 4):
		tooMany()
		fmt.Fprintf(s.env.Stdout, "slurm %s\n", s.env.Version)
	case keyword(w, "dump", 3), keyword(w, "load", 2), keyword(w, "archive", 3), keyword(w, "clear", 3),
		keyword(w, "reconfigure", 4), keyword(w, "rollup", 2), keyword(w, "shutdown", 4):
		s.fail("%s: error: Drover does not support '%s'\n", s.env.Prog, w)
	default:
		s.fail("invalid keyword: %s\n", w)
	}
}

// printErr prints an error of the controller: sacctmgr's own lines as
// they are, a refusal of rights in the words of the command at hand,
// anything else as an error line.
func (s *session) printErr(err error, denied string) {
	msg := err.Error()
	switch {
	case strings.HasSuffix(msg, "\n"):
		s.fail("%s", msg)
	case msg == cli.MsgAccessDenied && denied != "":
		s.fail(" %s: %s\n", denied, msg)
	default:
		s.fail("%s: error: %s\n", s.env.Prog, msg)
	}
}

// deniedWords is how sacctmgr introduces the database's refusal.
func deniedWords(verb, entity string) string {
	if verb != acctmgr.VerbAdd {
		return "Error with request"
	}
	switch entity {
	case acctmgr.EntityAccount:
		return "Problem adding accounts"
	case acctmgr.EntityUser:
		return "Problem adding users"
	case acctmgr.EntityQOS:
		return "Problem adding QOS"
	}
	return "Problem adding clusters"
}

// change runs add, modify and delete: the controller describes the
// change, sacctmgr prints it, asks (unless -i) and commits.
func (s *session) change(verb string, words []string) {
	if s.o.readonly {
		s.fail("Can't run this command in readonly mode.\n")
		return
	}
	first := ""
	if len(words) > 0 {
		first = words[0]
	}
	entity, err := acctmgr.MatchEntity(verb, first)
	if err != nil {
		s.fail("%s", err.Error())
		return
	}
	req := buildRequest(verb, entity, words[1:])
	if verb == acctmgr.VerbModify && len(req.Where) == 0 && len(req.Set) > 0 {
		if !s.commitCheck("You didn't set any conditions with 'WHERE'.\nAre you sure you want to continue?") {
			fmt.Fprint(s.env.Stdout, "Aborted\n")
			return
		}
	}
	c, err := s.env.Client()
	if err != nil {
		s.printErr(err, "")
		return
	}
	text, err := c.AcctModify(s.ctx, req, s.o.immediate)
	var warn *acctmgr.Warning
	if errors.As(err, &warn) {
		err = nil // done in part: the change stands (see below)
	}
	if err != nil {
		s.printErr(err, deniedWords(verb, entity))
		return
	}
	fmt.Fprint(s.env.Stdout, text)
	if warn != nil {
		// A user added where the account exists: the warning about the
		// other clusters goes to stderr and the exit is 1.
		s.fail("%s", warn.Text)
	}
	if acctmgr.Unchanged(text) {
		s.failed = true
		return
	}
	if s.o.immediate {
		return
	}
	if !s.commitCheck("Would you like to commit changes?") {
		fmt.Fprint(s.env.Stdout, " Changes Discarded\n")
		return
	}
	var w *acctmgr.Warning
	if _, err := c.AcctModify(s.ctx, req, true); err != nil && !errors.As(err, &w) {
		s.printErr(err, deniedWords(verb, entity))
	}
}

// buildRequest splits the words of a change: for add, all are settings;
// for modify, words before "set" (and after "where") are conditions,
// those after "set" settings; delete takes conditions only.
func buildRequest(verb, entity string, words []string) *acctmgr.Request {
	req := &acctmgr.Request{Verb: verb, Entity: entity}
	set := verb == acctmgr.VerbAdd
	for _, w := range words {
		switch {
		case acctmgr.IsKeyword(w, "where"):
			set = verb == acctmgr.VerbAdd
		case acctmgr.IsKeyword(w, "set"):
			set = verb != acctmgr.VerbDelete
		case set:
			req.Set = append(req.Set, acctmgr.SplitOption(w))
		default:
			req.Where = append(req.Where, acctmgr.SplitOption(w))
		}
	}
	return req
}

// list runs list (show).
func (s *session) list(words []string) {
	first := ""
	if len(words) > 0 {
		first = words[0]
	}
	entity, err := acctmgr.MatchEntity(acctmgr.VerbList, first)
	if err != nil {
		s.fail("%s", err.Error())
		return
	}
	l, err := acctmgr.ParseList(entity, words[1:], acctmgr.ListOptions{
		Mode: s.o.mode, NoHeader: s.o.noHeader, WithAssoc: s.o.withAssoc})
	if err != nil {
		s.fail("%s", err.Error())
		return
	}
	if l.AskWithAssoc && !s.commitCheck("You requested options that are only valid when querying with the withassoc option.\nAre you sure you want to continue?") {
		fmt.Fprint(s.env.Stdout, "Aborted\n")
		return
	}
	c, err := s.env.Client()
	if err != nil {
		s.printErr(err, "")
		return
	}
	db, err := c.AcctDB(s.ctx)
	if err != nil {
		s.printErr(err, "Error with request")
		return
	}
	var ctl *acctmgr.Controller
	if l.NeedsController() {
		ctl = s.controller(c)
	}
	fmt.Fprint(s.env.Stdout, l.Render(db, ctl))
}

// rpcVersion is the protocol version of the Slurm release Drover
// speaks for (22.05), as the cluster listing shows it.
const rpcVersion = 38 << 8

// controller reads what the cluster listing shows of the controller
// from its configuration; nil when it cannot be read.
func (s *session) controller(c cli.Client) *acctmgr.Controller {
	kvs, err := c.Config(s.ctx)
	if err != nil {
		return nil
	}
	ctl := &acctmgr.Controller{RPC: rpcVersion}
	for _, kv := range kvs {
		k := strings.ToLower(kv.Key)
		switch {
		case k == "clustername":
			ctl.Cluster = strings.ToLower(kv.Value)
		case strings.HasPrefix(k, "slurmctldhost") && ctl.Host == "":
			host, addr, ok := strings.Cut(kv.Value, "(")
			if ok {
				host = strings.TrimSuffix(addr, ")")
			}
			ctl.Host = host
		case k == "slurmctldport":
			p, _, _ := strings.Cut(kv.Value, "-")
			ctl.Port, _ = strconv.Atoi(strings.TrimSpace(p))
		}
	}
	return ctl
}

// interactive reads commands from stdin until exit or its end.
func (s *session) interactive() int {
	failed := false
	last := ""
	for !s.quit {
		fmt.Fprint(s.env.Stdout, "sacctmgr: ")
		line, ok := s.in.line()
		if !ok {
			fmt.Fprint(s.env.Stdout, "\n")
			break
		}
		switch {
		case strings.HasPrefix(line, "#"):
			continue
		case line == "!!":
			line = last
		default:
			last = line
		}
		words := splitLine(line)
		if len(words) == 0 {
			continue
		}
		s.failed = false
		s.command(words)
		failed = failed || s.failed
	}
	if failed {
		return s.env.ExitError()
	}
	return 0
}

// splitLine splits a command line at blanks outside quotes; the quotes
// stay in the words (values are unquoted where they are read).
func splitLine(line string) []string {
	var words []string
	var cur strings.Builder
	in := false
	var dq, sq bool
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '"' && !sq:
			dq = !dq
		case c == '\'' && !dq:
			sq = !sq
		case !dq && !sq && (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'):
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
			continue
		}
		cur.WriteByte(c)
		in = true
	}
	if in {
		words = append(words, cur.String())
	}
	return words
}
