package squeue

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/drover-hpc/drover/internal/cli"
	"github.com/drover-hpc/drover/internal/format"
	"github.com/drover-hpc/drover/internal/hostlist"
	"github.com/drover-hpc/drover/internal/model"
)

// Default formats, as Slurm 22.05 prints them.
const (
	DefaultFormat   = "%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R"
	LongFormat      = "%.18i %.9P %.8j %.8u %.8T %.10M %.9l %.6D %R"
	StartFormat     = "%.18i %.9P %.8j %.8u %.2t %.19S %.6D %20Y %R"
	StepFormat      = "%.15i %.8j %.9P %.8u %.9M %N"
	JobStateFormat  = "%.18i %.2t"
	DefaultSort     = "P,t,-p"
	jobsNoValue     = "\x00"
	invalidJobIDMsg = "slurm_load_jobs error: " + cli.MsgInvalidJobID
)

// options is the parsed command line.
type options struct {
	format, formatLong, sort, states, jobs, steps string
	users, partitions, names, accounts, qos       string
	nodelist, clusters, licenses, reservation     string
	noHeader, long, array, start, all, hide, me   bool
	notMe, noConvert, onlyJobState, priority      bool
	help, usage, version, json, yaml              bool
	federation, local, sibling, arrayUnique       bool
	iterate, verbose                              int

	jobFlag, stepFlag bool
}

// cli.ExitCode ends the command early with a status.

func newFlagSet(o *options) *pflag.FlagSet {
	fs := pflag.NewFlagSet("squeue", pflag.ContinueOnError)
	fs.SetOutput(discard{})
	fs.SortFlags = false
	fs.StringVarP(&o.accounts, "account", "A", "", "")
	fs.StringVarP(&o.accounts, "accounts", "U", "", "") // Slurm's old -U
	fs.BoolVarP(&o.all, "all", "a", false, "")
	fs.BoolVarP(&o.array, "array", "r", false, "")
	fs.BoolVar(&o.arrayUnique, "array-unique", false, "")
	fs.StringVarP(&o.clusters, "clusters", "M", "", "")
	fs.BoolVar(&o.federation, "federation", false, "")
	fs.StringVarP(&o.format, "format", "o", "", "")
	fs.StringVarP(&o.formatLong, "Format", "O", "", "")
	fs.BoolVar(&o.help, "help", false, "")
	fs.BoolVar(&o.hide, "hide", false, "")
	fs.IntVarP(&o.iterate, "iterate", "i", 0, "")
	fs.StringVarP(&o.jobs, "jobs", "j", "", "")
	fs.Lookup("jobs").NoOptDefVal = jobsNoValue
	fs.BoolVar(&o.json, "json", false, "")
	fs.StringVarP(&o.licenses, "licenses", "L", "", "")
	fs.BoolVar(&o.local, "local", false, "")
	fs.BoolVarP(&o.long, "long", "l", false, "")
	fs.BoolVar(&o.me, "me", false, "")
	fs.StringVarP(&o.names, "name", "n", "", "")
	fs.BoolVar(&o.noConvert, "noconvert", false, "")
	fs.BoolVarP(&o.noHeader, "noheader", "h", false, "")
	fs.StringVarP(&o.nodelist, "nodelist", "w", "", "")
	fs.BoolVar(&o.notMe, "notme", false, "")
	fs.BoolVar(&o.onlyJobState, "only-job-state", false, "")
	fs.StringVarP(&o.partitions, "partition", "p", "", "")
	fs.BoolVarP(&o.priority, "priority", "P", false, "")
	fs.StringVarP(&o.qos, "qos", "q", "", "")
	fs.StringVarP(&o.reservation, "reservation", "R", "", "")
	fs.BoolVar(&o.sibling, "sibling", false, "")
	fs.StringVarP(&o.sort, "sort", "S", "", "")
	fs.BoolVar(&o.start, "start", false, "")
	fs.StringVarP(&o.states, "states", "t", "", "")
	fs.StringVarP(&o.steps, "steps", "s", "", "")
	fs.Lookup("steps").NoOptDefVal = jobsNoValue
	fs.BoolVar(&o.usage, "usage", false, "")
	fs.StringVarP(&o.users, "user", "u", "", "")
	fs.StringVar(&o.users, "users", "", "")
	fs.CountVarP(&o.verbose, "verbose", "v", "")
	fs.BoolVarP(&o.version, "version", "V", false, "")
	fs.BoolVar(&o.yaml, "yaml", false, "")
	return fs
}

// parseArgs reads the command line, then the SQUEUE_* variables for what
// it left unset.
func parseArgs(env *cli.Env, args []string) (*options, error) {
	o := &options{}
	fs := newFlagSet(o)
	if err := fs.Parse(gluedOptionalArgs(args)); err != nil {
		fmt.Fprintf(env.Stderr, "%s: %v\n", env.Prog, err)
		fmt.Fprintf(env.Stderr, "Try \"%s --help\" for more information\n", env.Prog)
		return nil, cli.ExitCode(1)
	}
	switch {
	case o.help:
		io.WriteString(env.Stdout, helpText)
		return nil, cli.ExitCode(0)
	case o.usage:
		io.WriteString(env.Stdout, usageText)
		return nil, cli.ExitCode(0)
	case o.version:
		fmt.Fprintln(env.Stdout, versionLine(env.Version))
		return nil, cli.ExitCode(0)
	case o.yaml:
		env.Errorf("--yaml is not supported yet")
		return nil, cli.ExitCode(1)
	}
	o.jobFlag, o.stepFlag = fs.Changed("jobs"), fs.Changed("steps")
	if o.jobs == jobsNoValue {
		o.jobs = ""
	}
	if o.steps == jobsNoValue {
		o.steps = ""
	}
	if rest := fs.Args(); len(rest) > 0 {
		switch {
		case o.jobFlag:
			o.jobs = rest[0]
		case o.stepFlag:
			o.steps = rest[0]
		default:
			env.Errorf("Unrecognized option: %s", rest[0])
			io.WriteString(env.Stderr, usageText)
			return nil, cli.ExitCode(1)
		}
		if len(rest) > 1 {
			env.Errorf("Unrecognized option: %s", rest[1])
			io.WriteString(env.Stderr, usageText)
			return nil, cli.ExitCode(1)
		}
	}
	if o.format != "" && o.formatLong != "" {
		env.Errorf("-o (--format) is incompatible with -O (--Format)")
		return nil, cli.ExitCode(1)
	}
	if o.long && o.format != "" {
		fmt.Fprintf(env.Stderr, "%s: fatal: Options -o(--format) and -l(--long) are mutually exclusive. Please remove one and retry.\n", env.Prog)
		return nil, cli.ExitCode(1)
	}
	if fs.Changed("iterate") && o.iterate <= 0 {
		env.Errorf("--iterate=%d", o.iterate)
		return nil, cli.ExitCode(1)
	}
	override := o.format != "" || o.formatLong != "" || o.long || o.stepFlag || o.start || o.onlyJobState
	if !override {
		if v := env.Getenv("SQUEUE_FORMAT"); v != "" {
			o.format = v
		} else if v := env.Getenv("SQUEUE_FORMAT2"); v != "" {
			o.formatLong = v
		}
	}
	fromEnv := func(flag, key string, dst *string) {
		if v, ok := env.LookupEnv(key); ok && !fs.Changed(flag) {
			*dst = v
		}
	}
	fromEnv("sort", "SQUEUE_SORT", &o.sort)
	fromEnv("states", "SQUEUE_STATES", &o.states)
	fromEnv("user", "SQUEUE_USERS", &o.users)
	fromEnv("partition", "SQUEUE_PARTITION", &o.partitions)
	fromEnv("name", "SQUEUE_NAMES", &o.names)
	fromEnv("account", "SQUEUE_ACCOUNT", &o.accounts)
	fromEnv("qos", "SQUEUE_QOS", &o.qos)
	if _, ok := env.LookupEnv("SQUEUE_ARRAY"); ok {
		o.array = true
	}
	if o.start && !o.stepFlag {
		if o.sort == "" {
			o.sort = "S"
		}
		if !fs.Changed("states") {
			o.states = "PD"
		}
	}
	return o, nil
}

// gluedOptionalArgs rewrites "-j1008" and "-s1008.0" (also after grouped
// switches, "-hj1008") into "--jobs=1008" form: their argument is
// optional, and pflag would read the digits as further switches.
func gluedOptionalArgs(args []string) []string {
	const switches = "aPrhlvV" // shorthands that take no value
	out := make([]string, 0, len(args))
	for i, a := range args {
		if a == "--" {
			return append(out, args[i:]...)
		}
		if len(a) < 3 || a[0] != '-' || a[1] == '-' {
			out = append(out, a)
			continue
		}
		k := 1
		for k < len(a) && strings.IndexByte(switches, a[k]) >= 0 {
			k++
		}
		if k+1 >= len(a) || (a[k] != 'j' && a[k] != 's') || a[k+1] == '=' {
			out = append(out, a)
			continue
		}
		if k > 1 {
			out = append(out, a[:k])
		}
		name := "--jobs="
		if a[k] == 's' {
			name = "--steps="
		}
		out = append(out, name+a[k+1:])
	}
	return out
}

func versionLine(v string) string {
	if v == "" {
		v = "unknown"
	}
	return "slurm " + v
}

func splitList(s string) []string {
	var out []string
	for p := range strings.SplitSeq(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// buildFilter turns options into a filter, reporting bad values.
func buildFilter(env *cli.Env, o *options) (*filter, error) {
	f := &filter{notUID: -1, partitions: splitList(o.partitions), names: splitList(o.names),
		accounts: splitList(o.accounts), qos: splitList(o.qos)}
	if o.jobs != "" {
		ts, err := cli.ParseJobTargets([]string{o.jobs})
		var bad *cli.InvalidJobIDError
		if errors.As(err, &bad) {
			env.Errorf("Invalid job id: %s", bad.Arg)
			return nil, cli.ExitCode(1)
		}
		f.targets = ts
	}
	if o.states != "" {
		s, bad := parseStates(o.states)
		if bad != "" {
			env.Errorf("Invalid job state specified: %s", bad)
			fmt.Fprintf(env.Stderr, "%s: error: Valid job states include: %s,COMPLETING\n", env.Prog, strings.Join(model.JobStateNames(), ","))
			return nil, cli.ExitCode(1)
		}
		f.states = &s
	}
	if o.me || o.notMe {
		u, err := env.CurrentUser()
		if err != nil {
			env.Errorf("cannot tell who you are: %v", err)
			return nil, cli.ExitCode(1)
		}
		uid, _ := strconv.ParseUint(u.Uid, 10, 32)
		if o.notMe {
			f.notUID = int64(uid)
		} else {
			o.users = u.Uid
		}
	}
	if o.users != "" {
		f.uids, f.userNames = map[uint32]bool{}, map[string]bool{}
		for _, u := range splitList(o.users) {
			if n, err := strconv.ParseUint(u, 10, 32); err == nil {
				f.uids[uint32(n)] = true
				continue
			}
			f.userNames[u] = true
			if acct, err := env.LookupUser(u); err == nil {
				if uid, err := strconv.ParseUint(acct.Uid, 10, 32); err == nil {
					f.uids[uint32(uid)] = true
				}
			}
		}
	}
	if o.nodelist != "" {
		nodes, err := hostlist.Expand(o.nodelist)
		if err != nil {
			env.Errorf("'%s' invalid entry for --nodelist", o.nodelist)
			return nil, cli.ExitCode(1)
		}
		f.nodes = map[string]bool{}
		for _, n := range nodes {
			f.nodes[n] = true
		}
	}
	return f, nil
}

// chooseFormat picks the format in Slurm's order of precedence.
func chooseFormat(o *options) (format.Format, error) {
	switch {
	case o.format != "":
		return format.Parse(o.format)
	case o.formatLong != "":
		return format.ParseLong(o.formatLong)
	case o.stepFlag:
		return format.Parse(StepFormat)
	case o.onlyJobState:
		return format.Parse(JobStateFormat)
	case o.start:
		return format.Parse(StartFormat)
	case o.long:
		return format.Parse(LongFormat)
	}
	return format.Parse(DefaultFormat)
}

// formatError reports a format that does not parse or names unknown fields.
func formatError(env *cli.Env, err error) error {
	var uf *format.UnknownFieldError
	if errors.As(err, &uf) {
		env.Errorf("Invalid job format specification: %s", uf.Spec.Name)
	} else {
		env.Errorf("%v", err)
	}
	return cli.ExitCode(1)
}

// fullSpecFields print spec strings that a summary listing leaves out.
var fullSpecFields = map[string]bool{
	"Dependency": true, "ReqNodes": true, "ExcNodes": true, "Command": true, "WorkDir": true,
	"AllocNodes": true, "STDERR": true, "STDIN": true, "STDOUT": true,
}

// needsFullSpec reports whether the format or the sort reads spec strings
// that a summary listing (cli.JobQuery.Summary) does not carry.
func needsFullSpec(l *format.Layout[*jobRow], keys []sortKey) bool {
	for _, c := range l.Columns() {
		if fullSpecFields[c.Field.Name] {
			return true
		}
	}
	for _, k := range keys {
		if k.letter == 'E' {
			return true
		}
	}
	return false
}

// Run is the squeue command.
func Run(ctx context.Context, env *cli.Env, args []string) int {
	o, err := parseArgs(env, args)
	if err == nil {
		err = run(ctx, env, o)
	}
	return env.Status(err)
}

func run(ctx context.Context, env *cli.Env, o *options) error {
	if o.json {
		return runJSON(ctx, env)
	}
	fm, err := chooseFormat(o)
	if err != nil {
		return formatError(env, err)
	}
	if o.stepFlag {
		return runSteps(ctx, env, o, fm)
	}
	c := &renderCtx{noConvert: o.noConvert, env: env}
	layout, err := format.NewTable(jobFields(c)...).Compile(fm)
	if err != nil {
		return formatError(env, err)
	}
	sortSpec := o.sort
	if sortSpec == "" {
		sortSpec = DefaultSort
	}
	keys, err := parseSort(sortSpec)
	if err != nil {
		env.Errorf("%v", err)
		return cli.ExitCode(1)
	}
	f, err := buildFilter(env, o)
	if err != nil {
		return err
	}
	bitstr := env.BitstrLen()
	if o.array {
		bitstr = 0
	}
	client, err := env.Client()
	if err != nil {
		fmt.Fprintf(env.Stderr, "slurm_load_jobs error: %v\n", err)
		return err
	}
	q := cli.JobQuery{IncludeAll: f.states.wantsFinished() || len(f.targets) == 1, Summary: !needsFullSpec(layout, keys)}
	for _, t := range f.targets {
		q.IDs = append(q.IDs, t.ID)
	}
	return printTimes(ctx, env, o, func() error {
		list, err := client.ListJobs(ctx, q)
		if err != nil {
			fmt.Fprintf(env.Stderr, "slurm_load_jobs error: %v\n", err)
			return err
		}
		if len(f.targets) == 1 && !anyMatchesID(list.Jobs, f) {
			fmt.Fprintln(env.Stderr, invalidJobIDMsg)
			return cli.ExitCode(1)
		}
		c.now = list.Now
		if c.now == 0 {
			c.now = env.Now().Unix()
		}
		rows := buildRows(list.Jobs, f, o.array, bitstr)
		sortRows(rows, keys, c)
		// A field's value depends on its row alone (and renderCtx, whose
		// one cache is locked): a long table is rendered in parts at once.
		return layout.Render(env.Stdout, rows, format.Options{NoHeader: o.noHeader, Workers: runtime.GOMAXPROCS(0)})
	})
}

// anyMatchesID reports whether the controller knows the one job -j named.
func anyMatchesID(jobs []*model.Job, f *filter) bool {
	id := f.targets[0].ID
	for _, j := range jobs {
		if j != nil && (j.ID == id || j.IsArrayTask() && j.ArrayJobID == id) {
			return true
		}
	}
	return false
}

// printTimes runs print once, or every -i seconds until ctx ends, with
// Slurm's date line before each table when asked for.
func printTimes(ctx context.Context, env *cli.Env, o *options, print func() error) error {
	return cli.Repeat(ctx, env, o.iterate, !o.noHeader && (o.iterate > 0 || o.verbose > 0 || o.long), print)
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

const usageText = `Usage: squeue [-A account] [--clusters names] [-i seconds] [--job jobid]
              [-n name] [-o format] [--only-job-state] [-p partitions]
              [--qos qos] [--reservation reservation] [--sort fields] [--start]
              [--step step_id] [-t states] [-u user_name] [--usage]
              [-L licenses] [-w nodes] [--federation] [--local] [--sibling]
              [--me] [--notme] [-ahjlrsv]
`

const helpText = `Usage: squeue [OPTIONS]
List the jobs in the queue.

  -A, --account=LIST         only jobs charged to these accounts
  -a, --all                  all partitions (Drover hides none)
  -r, --array                one line per array task
  -h, --noheader             leave the header line out
  -i, --iterate=SECONDS      print again every SECONDS
  -j, --jobs[=LIST]          only these jobs (123, 123_4); write -j123
  -l, --long                 more columns, with a date line
  -L, --licenses=LIST        accepted; Drover has no licenses
      --me                   only my jobs
  -n, --name=LIST            only jobs with these names
      --noconvert            print memory in MiB, unconverted
      --notme                leave my jobs out
  -o, --format=FORMAT        columns as "%[.][size]type", e.g. "%.18i %T"
  -O, --Format=LIST          columns as "name[:[.][size][suffix]]"
      --only-job-state       job id and compact state only
  -p, --partition=LIST       only jobs in these partitions
  -q, --qos=LIST             only jobs with these QOS
  -s, --steps[=LIST]         running job steps (123.0, 123_4.batch); write -s123.0
  -S, --sort=FIELDS          sort by format letters, "-" for descending
      --start                expected start of pending jobs
  -t, --states=LIST          only jobs in these states, or "all"
  -u, --user=LIST            only jobs of these users (names or uids)
  -v, --verbose              add a date line
  -V, --version              print the version and exit
  -w, --nodelist=HOSTLIST    only jobs on these nodes

      --help                 this text
      --usage                a short usage line
`
