package jobspec

import (
	"errors"
	"fmt"
	"io"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/drover-hpc/drover/internal/model"
)

// Kind is the command whose options are parsed.
type Kind int

// The commands sharing this package.
const (
	Sbatch Kind = iota
	Srun
	Salloc
)

func (k Kind) String() string {
	switch k {
	case Sbatch:
		return "sbatch"
	case Srun:
		return "srun"
	case Salloc:
		return "salloc"
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Context is the world Parse reads: nothing else is consulted.
type Context struct {
	Environ  []string // KEY=VALUE, like os.Environ()
	Cwd      string   // the submission directory; relative paths resolve here
	Hostname string   // becomes JobSpec.SubmitHost
	Now      time.Time
	ReadFile func(string) ([]byte, error) // reads the batch script; nil = os.ReadFile
	Stdin    io.Reader                    // the batch script when no path is given
	// Umask reports the submitter's umask (ok false: unknown; nil: none):
	// it becomes SLURM_UMASK unless the environment already sets one. A
	// function, so that --version and a job's own SLURM_UMASK never pay
	// for reading it.
	Umask func() (mask uint32, ok bool)
	// Root: the command runs as root, the only user sbatch lets name
	// another --uid/--gid (the controller checks again).
	Root bool
}

// Options is the parsed command: the job request plus the client-side
// behaviour that is never sent to the controller.
type Options struct {
	Kind Kind
	Spec *model.JobSpec

	Parsable, Quiet, Wait, TestOnly, Help, Usage, Version bool
	ScriptPath                                            string // "" when read from stdin or --wrap
	Label, Unbuffered, Pty                                bool   // srun
	Immediate                                             int64  // seconds, srun/salloc -I; 0 = not given
	Command                                               []string
	Verbose                                               int

	JobID          string // srun --jobid (or SLURM_JOB_ID): run a step in this job
	Exact, Overlap bool   // srun step resource sharing

	// srun step launch. Distribution is -m as validated and normalised
	// ("block", "cyclic:fcyclic", "plane=4,Pack"). WaitSec is -W (0: not
	// given, or no limit). MultiProg makes Command[0] a --multi-prog
	// configuration file (see ParseMultiProg). MPI is --mpi (lower case);
	// only "" and "none" get past Parse. Input is -i all|none|<rank>; an -i
	// file name pattern goes to Spec.StdIn instead. BcastSet is --bcast,
	// Bcast its destination ("" = the default place).
	Distribution  string
	KillOnBadExit bool
	WaitSec       int
	MultiProg     bool
	MPI           string
	Input         string
	Bcast         string
	BcastSet      bool

	// Extra holds options that were accepted but have no JobSpec field
	// (--gres, --mail-type, --constraint, ...), by long name; "" for options
	// without an argument. Notes says, one line each, that they were not
	// sent; callers print them with -v.
	Extra map[string]string
	Notes []string
}

type layer int

const (
	layerScript layer = iota + 1
	layerEnv
	layerCLI
)

// parser accumulates one Parse; the layers are applied in precedence order,
// lowest first, so that the last value set wins.
type parser struct {
	kind  Kind
	ctx   Context
	env   *environ
	idx   *optIndex
	opts  *Options
	spec  *model.JobSpec
	layer layer

	chdir, wrap, array, dependency, export string
	wrapSet, arraySet, depSet, exportSet   bool
	nameSet                                bool
	mpiFrom                                string // how --mpi was given, for its error
	memPerGPU                              int64
	memLayer                               map[string]layer
	gpu                                    gpuOpts
}

func newParser(kind Kind, ctx Context, env *environ, idx *optIndex) *parser {
	spec := &model.JobSpec{
		TimeLimit: model.Unset, TimeMin: model.Unset,
		MinNodes: model.Unset, MaxNodes: model.Unset, NTasks: model.Unset,
		CPUsPerTask: model.Unset, TasksPerNode: model.Unset,
		MemPerNode: model.Unset, MemPerCPU: model.Unset,
		Requeue: kind == Sbatch, // Slurm's default JobRequeue=1 for batch jobs
	}
	return &parser{
		kind: kind, ctx: ctx, env: env, idx: idx, spec: spec,
		opts:     &Options{Kind: kind, Spec: spec, Extra: map[string]string{}},
		memLayer: map[string]layer{},
	}
}

// optValue binds one option to the parser it fills, through a binding:
// Parse's two passes share one optSet.
type optValue struct {
	to *binding
	d  *optDef
}

// binding is the parser an optSet's options currently fill.
type binding struct{ p *parser }

// noValue is what an option given without an argument is set with.
const noValue = "\x00"

func (v *optValue) Set(s string) error {
	given := s != noValue || v.d.arg == reqArg
	if !given {
		s = ""
	}
	p := v.to.p
	if v.d.set == nil {
		p.opts.Extra[v.d.long] = s
		return nil
	}
	return v.d.set(p, s, given)
}

// optSet applies options already normalised by optIndex.normalize
// ("--long" or "--long=value", each known to the index) to the bound
// parser. It replaced a pflag FlagSet, which only dispatched them and
// whose ~150 options cost each sbatch ~50 µs to build; its error words
// for a value an option refuses are kept (invalidValue).
type optSet struct {
	idx *optIndex
	to  *binding
}

func (p *parser) flagSet() *optSet { return &optSet{p.idx, &binding{p}} }

// set gives option d the value v (noValue: given without one).
func (fs *optSet) set(d *optDef, v string) error {
	if err := (&optValue{fs.to, d}).Set(v); err != nil {
		return &invalidValue{d: d, value: v, cause: err}
	}
	return nil
}

// parse applies normalised options in order.
func (fs *optSet) parse(opts []string) error {
	for _, o := range opts {
		name, v, hasVal := strings.Cut(strings.TrimPrefix(o, "--"), "=")
		d := fs.idx.long[name]
		if d == nil {
			return fmt.Errorf("unknown flag: --%s", name)
		}
		if !hasVal {
			if d.arg == reqArg {
				return fmt.Errorf("flag needs an argument: --%s", name)
			}
			v = noValue
		}
		if err := fs.set(d, v); err != nil {
			return err
		}
	}
	return nil
}

// invalidValue is an option's refusal of its value, in pflag's words;
// the refusal itself (usually an *Error) is what callers look at.
type invalidValue struct {
	d     *optDef
	value string
	cause error
}

func (e *invalidValue) Error() string {
	name := "--" + e.d.long
	if e.d.short != 0 {
		name = "-" + string(e.d.short) + ", " + name
	}
	return fmt.Sprintf("invalid argument %q for %q flag: %v", e.value, name, e.cause)
}

func (e *invalidValue) Unwrap() error { return e.cause }

// apply parses normalized options (see optIndex.normalize) into p.
func (p *parser) apply(fs *optSet, opts []string) error {
	return p.wrapErr(fs.parse(opts))
}

func (p *parser) wrapErr(err error) error {
	if err == nil {
		return nil
	}
	var e *Error
	if !errors.As(err, &e) {
		e = &Error{Usage: true, Exit: exitOption, Msg: p.kind.String() + ": " + err.Error()}
	}
	e.Prog = p.kind.String()
	return e
}

// Parse builds the job request for kind from the command line args (without
// the program name), the input environment variables in ctx.Environ and, for
// sbatch, the #SBATCH directives of the batch script. When Help, Usage or
// Version is set in the result nothing else was read: the caller prints
// HelpText, UsageText or its version and exits 0. Errors are *Error.
func Parse(kind Kind, args []string, ctx Context) (*Options, error) {
	if kind < Sbatch || kind > Salloc {
		return nil, fmt.Errorf("jobspec: unknown kind %d", int(kind))
	}
	if ctx.Now.IsZero() {
		ctx.Now = time.Now()
	}
	idx := newOptIndex(kind)

	// First pass: the command line alone, to find --help and friends, the
	// script and its arguments, and --wrap.
	cli, rest, scanErr := idx.normalize(args)
	first := newParser(kind, ctx, nil, idx)
	for _, a := range cli { // these act as soon as getopt meets them
		switch a {
		case "--help":
			first.opts.Help = true
		case "--usage":
			first.opts.Usage = true
		case "--version":
			first.opts.Version = true
		}
	}
	if o := first.opts; o.Help || o.Usage || o.Version {
		return o, nil
	}
	// The environment only now: --version need not index it.
	env := newEnviron(ctx.Environ)
	first.env = env
	first.layer = layerCLI
	fs := first.flagSet()
	to := fs.to
	if err := first.apply(fs, cli); err != nil {
		return nil, err
	}
	if scanErr != nil {
		return nil, scanErr
	}

	p := newParser(kind, ctx, env, idx)
	to.p = p // the same options now fill the second pass's parser
	if kind == Sbatch {
		if err := p.loadScript(fs, first, rest); err != nil {
			return nil, err
		}
	} else {
		p.opts.Command = append([]string(nil), rest...)
	}
	p.layer = layerEnv
	if err := p.applyEnv(fs); err != nil {
		return nil, err
	}
	p.layer = layerCLI
	if err := p.apply(fs, cli); err != nil {
		return nil, err
	}
	if err := p.finish(args); err != nil {
		return nil, p.wrapErr(err)
	}
	return p.opts, nil
}

// loadScript reads the batch script (file, stdin or --wrap) and applies its
// #SBATCH directives as the lowest layer.
func (p *parser) loadScript(fs *optSet, first *parser, rest []string) error {
	shown := "stdin"
	switch {
	case first.wrapSet:
		if len(rest) > 0 {
			return p.wrapErr(&Error{Msg: "Script arguments not permitted with --wrap option"})
		}
		p.spec.Script = wrapScript(first.wrap)
		return nil
	case len(rest) > 0:
		shown = rest[0]
		p.opts.ScriptPath = p.resolve(rest[0])
		p.spec.Argv = append([]string(nil), rest[1:]...)
	}
	script, err := readScript(p.ctx, p.opts.ScriptPath, shown)
	if err != nil {
		return p.wrapErr(err)
	}
	p.spec.Script = script
	dargs, err := Directives([]byte(script), "#SBATCH")
	if err != nil {
		e := err.(*Error)
		e.Msg = shown + ": " + e.Msg
		return p.wrapErr(e)
	}
	opts, leftover, uerr := p.idx.normalize(dargs)
	if uerr != nil {
		return p.wrapErr(uerr)
	}
	p.layer = layerScript
	if err := p.apply(fs, opts); err != nil {
		return err
	}
	if len(leftover) > 0 {
		return p.wrapErr(optErr("Invalid directive found in batch script: " + leftover[0]))
	}
	return nil
}

// applyEnv applies the command's input environment variables.
func (p *parser) applyEnv(fs *optSet) error {
	for _, eo := range envTables[p.kind] {
		v, ok := p.env.lookup(eo.env)
		d := p.idx.long[eo.long]
		if !ok || d == nil {
			continue
		}
		switch {
		case d.arg == noArg:
			if !flagEnvTrue(v) {
				continue
			}
			v = noValue
		case d.arg == optArg && v == "":
			v = noValue
		case v == "":
			continue
		}
		if err := fs.set(d, v); err != nil {
			return p.wrapErr(err)
		}
	}
	return nil
}

// resolve makes a path absolute against ctx.Cwd.
func (p *parser) resolve(s string) string {
	if s == "" || filepath.IsAbs(s) || p.ctx.Cwd == "" {
		return s
	}
	return filepath.Join(p.ctx.Cwd, s)
}

// finish checks the combined request and fills in derived fields.
func (p *parser) finish(args []string) error {
	s, o := p.spec, p.opts
	if err := p.settleMemory(); err != nil {
		return err
	}
	if err := p.settleGPUs(); err != nil {
		return err
	}
	submitFailed := map[Kind]string{
		Sbatch: "Batch job submission failed: ",
		Srun:   "Unable to allocate resources: ",
		Salloc: "Job submit/allocate failed: ",
	}[p.kind]
	if p.arraySet {
		a, err := ParseArray(p.array)
		if err != nil {
			e := err.(*Error)
			e.Msg = submitFailed + e.Msg
			return e
		}
		s.Array = a
	}
	if p.depSet && p.dependency != "" {
		d, err := ParseDependency(p.dependency)
		if err != nil {
			e := err.(*Error)
			e.Msg = submitFailed + e.Msg
			return e
		}
		s.Dependency = d
	}
	s.WorkDir = p.ctx.Cwd
	if p.chdir != "" {
		s.WorkDir = p.resolve(p.chdir)
	}

	switch p.kind {
	case Sbatch:
		if !p.nameSet {
			switch {
			case p.wrapSet:
				s.Name = "wrap"
			case o.ScriptPath != "":
				s.Name = path.Base(filepath.ToSlash(o.ScriptPath))
			default:
				s.Name = "sbatch"
			}
		}
	case Srun:
		if err := p.checkMPI(); err != nil {
			return err
		}
		if len(o.Command) == 0 {
			return &Error{Fatal: true, Msg: "No command given to execute."}
		}
		if o.Pty && (s.StdOut != "" || s.StdErr != "" || s.StdIn != "") {
			return &Error{Msg: "--error/--input/--output are incompatible with --pty"}
		}
		if o.Overlap && s.Exclusive {
			return &Error{Msg: "--exclusive and --overlap are mutually exclusive"}
		}
		s.Argv = append([]string(nil), o.Command...)
		s.Interactive = true
		if !p.nameSet {
			s.Name = path.Base(o.Command[0])
		}
	case Salloc:
		s.Interactive = true
		if !p.nameSet {
			s.Name = "interactive"
			if _, ok := o.Extra["no-shell"]; ok {
				s.Name = "no-shell"
			}
		}
	}
	if _, ok := o.Extra["oversubscribe"]; ok && s.Exclusive {
		return &Error{Fatal: true, Msg: "--exclusive and --oversubscribe options are mutually exclusive"}
	}

	if p.kind == Salloc {
		s.Env = p.env.list()
	} else {
		s.Export = "ALL"
		if p.exportSet && p.export != "" {
			s.Export = p.export
		}
		s.Env = exportEnv(s.Export, p.env)
	}
	p.settleUmask()
	s.SubmitHost = p.ctx.Hostname
	s.SubmitLine = strings.TrimSpace(p.kind.String() + " " + strings.Join(args, " "))

	keys := make([]string, 0, len(o.Extra))
	for k := range o.Extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		o.Notes = append(o.Notes, fmt.Sprintf("--%s is accepted but not part of the job request Drover sends", k))
	}
	return nil
}

// mpiTypes is what --mpi=list prints: the MPI plugin types Drover has.
const mpiTypes = "MPI plugin types are...\n\tnone"

// checkMPI accepts --mpi=none (no PMI) only; --mpi=list ends the parse
// with the list of types.
func (p *parser) checkMPI() error {
	switch p.opts.MPI {
	case "", "none":
		return nil
	case "list":
		return &Error{Msg: mpiTypes}
	}
	return &Error{Fatal: true, Msg: p.mpiFrom + " is not supported by Drover yet: only --mpi=none (no PMI) is available"}
}

// settleMemory enforces that --mem, --mem-per-cpu and --mem-per-gpu are
// exclusive. Slurm counts #SBATCH lines and the command line as one layer;
// Drover lets each higher layer override a lower one instead, and rejects
// only two of them given in the same layer.
func (p *parser) settleMemory() error {
	top := layer(0)
	for _, l := range p.memLayer {
		top = max(top, l)
	}
	n := 0
	for _, l := range p.memLayer {
		if l == top {
			n++
		}
	}
	if n > 1 {
		if top == layerEnv {
			return &Error{Fatal: true, Msg: msgMemEnvExcl}
		}
		return &Error{Fatal: true, Msg: msgMemExclusive}
	}
	for name, l := range p.memLayer {
		if l == top {
			continue
		}
		switch name {
		case "mem":
			p.spec.MemPerNode = model.Unset
		case "mem-per-cpu":
			p.spec.MemPerCPU = model.Unset
		case "mem-per-gpu":
			p.memPerGPU = 0
		}
	}
	if p.memPerGPU > 0 {
		p.opts.Extra["mem-per-gpu"] = strconv.FormatInt(p.memPerGPU, 10)
	}
	return nil
}
