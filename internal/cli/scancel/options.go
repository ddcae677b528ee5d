package scancel

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/drover-hpc/drover/internal/cli"
	"github.com/drover-hpc/drover/internal/hostlist"
	"github.com/drover-hpc/drover/internal/model"
)

// options is everything scancel was asked to do.
type options struct {
	account, name, partition, qos, user, state string
	nodelist, signal, reservation, wckey       string
	clusters, sibling                          string
	me, batch, full, interactive, quiet, hurry bool
	ctld, version, help, usage                 bool
	verbose                                    int

	sig    int // parsed signal; 0 = cancel
	states []model.JobState
	nodes  []string
	ids    []string
}

// exitNow is a parse outcome that ends the command with code.
type exitNow struct{ code int }

func (e exitNow) Error() string { return "exit " + strconv.Itoa(e.code) }

// parseArgs reads SCANCEL_* variables, then the command line (which wins).
// Errors are reported on env.Stderr; the returned exitNow carries the code.
func parseArgs(env *cli.Env, args []string) (*options, error) {
	o := &options{}
	fs := pflag.NewFlagSet("scancel", pflag.ContinueOnError)
	fs.SetOutput(discard{})
	fs.SortFlags = false
	fs.StringVarP(&o.account, "account", "A", "", "")
	fs.BoolVarP(&o.batch, "batch", "b", false, "")
	fs.BoolVar(&o.ctld, "ctld", false, "")
	fs.BoolVarP(&o.full, "full", "f", false, "")
	fs.BoolVarP(&o.hurry, "hurry", "H", false, "")
	fs.BoolVarP(&o.interactive, "interactive", "i", false, "")
	fs.StringVarP(&o.clusters, "clusters", "M", "", "")
	fs.StringVar(&o.clusters, "cluster", "", "")
	fs.BoolVar(&o.me, "me", false, "")
	fs.StringVarP(&o.name, "name", "n", "", "")
	fs.StringVar(&o.name, "jobname", "", "")
	fs.StringVarP(&o.nodelist, "nodelist", "w", "", "")
	fs.StringVarP(&o.partition, "partition", "p", "", "")
	fs.StringVarP(&o.qos, "qos", "q", "", "")
	fs.BoolVarP(&o.quiet, "quiet", "Q", false, "")
	fs.StringVarP(&o.reservation, "reservation", "R", "", "")
	fs.StringVar(&o.sibling, "sibling", "", "")
	fs.StringVarP(&o.signal, "signal", "s", "", "")
	fs.StringVarP(&o.state, "state", "t", "", "")
	fs.StringVarP(&o.user, "user", "u", "", "")
	fs.CountVarP(&o.verbose, "verbose", "v", "")
	fs.BoolVarP(&o.version, "version", "V", false, "")
	fs.StringVar(&o.wckey, "wckey", "", "")
	fs.BoolVar(&o.help, "help", false, "")
	fs.BoolVar(&o.usage, "usage", false, "")

	if err := fs.Parse(args); err != nil {
		fmt.Fprintf(env.Stderr, "%s: %v\n", env.Prog, err)
		fmt.Fprintf(env.Stderr, "Try \"%s --help\" for more information\n", env.Prog)
		return nil, exitNow{1}
	}
	if o.help {
		fmt.Fprint(env.Stdout, helpText)
		return nil, exitNow{0}
	}
	if o.usage {
		fmt.Fprint(env.Stdout, usageText)
		return nil, exitNow{0}
	}
	if o.version {
		fmt.Fprintln(env.Stdout, versionLine(env.Version))
		return nil, exitNow{0}
	}
	if err := o.applyEnv(env, fs); err != nil {
		return nil, err
	}
	if err := o.finish(env, fs); err != nil {
		return nil, err
	}
	o.ids = fs.Args()
	return o, nil
}

// applyEnv fills options the command line left alone from SCANCEL_*.
func (o *options) applyEnv(env *cli.Env, fs *pflag.FlagSet) error {
	str := func(flag, key string, dst *string) {
		if v, ok := env.LookupEnv(key); ok && !fs.Changed(flag) {
			*dst = v
		}
	}
	str("account", "SCANCEL_ACCOUNT", &o.account)
	str("name", "SCANCEL_NAME", &o.name)
	str("partition", "SCANCEL_PARTITION", &o.partition)
	str("qos", "SCANCEL_QOS", &o.qos)
	str("user", "SCANCEL_USER", &o.user)
	str("wckey", "SCANCEL_WCKEY", &o.wckey)
	str("clusters", "SLURM_CLUSTERS", &o.clusters)
	boolean := func(flag, key string, dst *bool) {
		v, ok := env.LookupEnv(key)
		if !ok || fs.Changed(flag) {
			return
		}
		switch strings.ToLower(v) {
		case "true", "t":
			*dst = true
		case "false", "f":
			*dst = false
		default:
			env.Errorf("Unrecognized %s value: %s", key, v)
		}
	}
	boolean("batch", "SCANCEL_BATCH", &o.batch)
	boolean("full", "SCANCEL_FULL", &o.full)
	boolean("interactive", "SCANCEL_INTERACTIVE", &o.interactive)
	if _, ok := env.LookupEnv("SCANCEL_HURRY"); ok && !fs.Changed("hurry") {
		o.hurry = true
	}
	if _, ok := env.LookupEnv("SCANCEL_CTLD"); ok && !fs.Changed("ctld") {
		o.ctld = true
	}
	if !fs.Changed("verbose") {
		var v bool
		boolean("verbose", "SCANCEL_VERBOSE", &v)
		if v {
			o.verbose = 1
		}
	}
	if v, ok := env.LookupEnv("SCANCEL_STATE"); ok && !fs.Changed("state") {
		states, bad := parseStates(v)
		if bad != "" {
			fmt.Fprintf(env.Stderr, "Unrecognized SCANCEL_STATE value: %s\n", bad)
			fmt.Fprintln(env.Stderr, validStatesMsg)
			return exitNow{1}
		}
		o.states = states
	}
	return nil
}

const validStatesMsg = "Valid job states are PENDING, RUNNING, and SUSPENDED"

// finish validates and converts option values.
func (o *options) finish(env *cli.Env, fs *pflag.FlagSet) error {
	o.account = strings.ToLower(o.account)
	o.qos = strings.ToLower(o.qos)
	if fs.Changed("state") {
		states, bad := parseStates(o.state)
		if bad != "" {
			fmt.Fprintf(env.Stderr, "Invalid job state specified: %s\n", bad)
			fmt.Fprintln(env.Stderr, validStatesMsg)
			return exitNow{1}
		}
		o.states = states
	}
	if fs.Changed("signal") {
		n, ok := parseSignal(o.signal)
		if !ok {
			fmt.Fprintf(env.Stderr, "Unknown job signal: %s\n", o.signal)
			return exitNow{1}
		}
		o.sig = n
	}
	if o.me {
		o.user = strconv.Itoa(env.Getuid())
	}
	if o.nodelist != "" {
		expr := o.nodelist
		if strings.Contains(expr, "/") { // a file of host names
			data, err := os.ReadFile(expr)
			if err != nil {
				env.Errorf("Unable to read nodelist file %s: %v", expr, err)
				return exitNow{1}
			}
			expr = strings.Join(strings.Fields(string(data)), ",")
		}
		nodes, err := hostlist.Expand(expr)
		if err != nil || len(nodes) == 0 {
			env.Errorf("Invalid node list specified: %s", o.nodelist)
			return exitNow{1}
		}
		o.nodes = nodes
	}
	return nil
}

// parseStates accepts a comma list of job state names, long or short.
func parseStates(v string) ([]model.JobState, string) {
	var out []model.JobState
	for _, s := range strings.Split(v, ",") {
		st, ok := model.ParseJobState(s)
		if !ok {
			return nil, s
		}
		out = append(out, st)
	}
	return out, ""
}

// Signal numbers as Linux defines them: the controller and agents run on
// Linux whatever the client's platform.
var signalNumbers = []struct {
	name string
	num  int
}{
	{"HUP", 1}, {"INT", 2}, {"QUIT", 3}, {"ABRT", 6}, {"KILL", 9},
	{"USR1", 10}, {"USR2", 12}, {"ALRM", 14}, {"TERM", 15}, {"CONT", 18},
	{"STOP", 19}, {"TSTP", 20}, {"TTIN", 21}, {"TTOU", 22}, {"URG", 23},
	{"XCPU", 24},
}

// parseSignal accepts a number or a name with or without "SIG", in any case.
func parseSignal(s string) (int, bool) {
	s = strings.TrimSpace(s)
	if n, err := strconv.Atoi(s); err == nil {
		return n, n > 0 && n < 65
	}
	name := strings.ToUpper(s)
	name = strings.TrimPrefix(name, "SIG")
	for _, sg := range signalNumbers {
		if sg.name == name {
			return sg.num, true
		}
	}
	return 0, false
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

const usageText = `Usage: scancel [-bfHiQvV] [-A account] [-M clusters] [--me] [-n name]
        [-p partition] [-q qos] [-R reservation] [-s signal] [-t states]
        [-u user] [-w hostlist] [--wckey=wckey] [job_id[_task_id][.step_id]...]
`

const helpText = `Usage: scancel [OPTIONS] [job_id[_array_id][.step_id]]
  -A, --account=account           only jobs charged to this account
  -b, --batch                     signal only the batch shell
  -f, --full                      signal the batch shell and every step
  -H, --hurry                     accepted; Drover has no burst buffers
  -i, --interactive               ask before acting on each job
  -M, --clusters=names            accepted for compatibility
      --me                        only your own jobs
  -n, --name=job_name             only jobs with this name (also --jobname)
  -p, --partition=partition       only jobs in this partition
  -Q, --quiet                     do not report jobs already gone
  -q, --qos=qos                   only jobs with this QOS
  -R, --reservation=name          only jobs in this reservation
  -s, --signal=name | integer     send this signal instead of cancelling
  -t, --state=states              only jobs in these states (PENDING,
                                  RUNNING, SUSPENDED)
  -u, --user=user_name            only jobs of this user (name or uid)
  -V, --version                   print the version and exit
  -v, --verbose                   report each job acted on
  -w, --nodelist=hosts            only jobs running on these hosts
      --wckey=wckey               only jobs with this wckey

Help options:
  --help                          show this help message
  --usage                         display brief usage message
`
