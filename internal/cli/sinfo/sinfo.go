package sinfo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/drover-hpc/drover/internal/cli"
	"github.com/drover-hpc/drover/internal/format"
	"github.com/drover-hpc/drover/internal/hostlist"
	"github.com/drover-hpc/drover/internal/model"
)

// Default formats (see the package comment).
const (
	DefaultFormat     = "%#P %.5a %.10l %.6D %.6t %N"
	LongFormat        = "%#P %.5a %.10l %.10s %.4r %.8h %.10g %.6D %.11T %N"
	SummarizeFormat   = "%#P %.5a %.10l %.16F %N"
	NodeFormat        = "%#N %.6D %.#P %6t"
	NodeLongFormat    = "%#N %.6D %.#P %.11T %4c %.8z %.6m %.8d %.6w %.8f %20E"
	ReasonFormat      = "%20E %9u %19H %N"
	ReasonLongFormat  = "%20E %12U %19H %6t %N"
	DefaultSort       = "#P,-t"
	NodeSort          = "N"
	reasonStates      = "down,fail,drain"
	noReservationsMsg = "No reservations in the system"
)

type options struct {
	format, formatLong, partitions, nodes, sort, states, clusters string
	all, dead, exact, noHeader, hide, long, noConvert, nodeFlag   bool
	responding, reasons, summarize, reservations, help, usage     bool
	version, json, yaml, federation, local                        bool
	iterate, verbose                                              int
}

// cli.ExitCode ends the command early with a status.

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

func parseArgs(env *cli.Env, args []string) (*options, error) {
	o := &options{}
	fs := pflag.NewFlagSet("sinfo", pflag.ContinueOnError)
	fs.SetOutput(discard{})
	fs.SortFlags = false
	fs.BoolVarP(&o.all, "all", "a", false, "")
	fs.BoolVarP(&o.dead, "dead", "d", false, "")
	fs.BoolVarP(&o.exact, "exact", "e", false, "")
	fs.BoolVar(&o.federation, "federation", false, "")
	fs.BoolVarP(&o.noHeader, "noheader", "h", false, "")
	fs.BoolVar(&o.help, "help", false, "")
	fs.BoolVar(&o.hide, "hide", false, "")
	fs.IntVarP(&o.iterate, "iterate", "i", 0, "")
	fs.BoolVar(&o.json, "json", false, "")
	fs.BoolVarP(&o.long, "long", "l", false, "")
	fs.BoolVar(&o.local, "local", false, "")
	fs.StringVarP(&o.clusters, "clusters", "M", "", "")
	fs.StringVarP(&o.nodes, "nodes", "n", "", "")
	fs.BoolVar(&o.noConvert, "noconvert", false, "")
	fs.BoolVarP(&o.nodeFlag, "Node", "N", false, "")
	fs.StringVarP(&o.format, "format", "o", "", "")
	fs.StringVarP(&o.formatLong, "Format", "O", "", "")
	fs.StringVarP(&o.partitions, "partition", "p", "", "")
	fs.BoolVarP(&o.responding, "responding", "r", false, "")
	fs.BoolVarP(&o.reasons, "list-reasons", "R", false, "")
	fs.BoolVarP(&o.summarize, "summarize", "s", false, "")
	fs.StringVarP(&o.sort, "sort", "S", "", "")
	fs.StringVarP(&o.states, "states", "t", "", "")
	fs.BoolVarP(&o.reservations, "reservation", "T", false, "")
	fs.BoolVar(&o.usage, "usage", false, "")
	fs.CountVarP(&o.verbose, "verbose", "v", "")
	fs.BoolVarP(&o.version, "version", "V", false, "")
	fs.BoolVar(&o.yaml, "yaml", false, "")

	if err := fs.Parse(args); err != nil {
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
		v := env.Version
		if v == "" {
			v = "unknown"
		}
		fmt.Fprintln(env.Stdout, "slurm "+v)
		return nil, cli.ExitCode(0)
	case o.yaml:
		env.Errorf("--yaml is not supported yet")
		return nil, cli.ExitCode(1)
	case len(fs.Args()) > 0:
		env.Errorf("Unrecognized option: %s", fs.Args()[0])
		io.WriteString(env.Stderr, usageText)
		return nil, cli.ExitCode(1)
	}
	_, envAll := env.LookupEnv("SINFO_ALL")
	envPart, envP := env.LookupEnv("SINFO_PARTITION")
	if envAll && envP {
		env.Errorf("Conflicting options, SINFO_ALL and SINFO_PARTITION, specified. Please choose one or the other.")
		return nil, cli.ExitCode(1)
	}
	if fs.Changed("all") && fs.Changed("partition") {
		env.Errorf("Conflicting options, -a and -p, specified. Please choose one or the other.")
		return nil, cli.ExitCode(1)
	}
	if envP && !fs.Changed("partition") && !fs.Changed("all") {
		o.partitions = envPart
	}
	if v, ok := env.LookupEnv("SINFO_SORT"); ok && !fs.Changed("sort") {
		o.sort = v
	}
	if o.long && (o.format != "" || o.formatLong != "") {
		fmt.Fprintf(env.Stderr, "%s: fatal: Options -o(--format) and -l(--long) are mutually exclusive. Please remove one and retry.\n", env.Prog)
		return nil, cli.ExitCode(1)
	}
	if fs.Changed("iterate") && o.iterate <= 0 {
		env.Errorf("Error: invalid entry for --iterate=%d", o.iterate)
		return nil, cli.ExitCode(1)
	}
	return o, nil
}

// chooseFormat picks the format in Slurm's order.
func chooseFormat(env *cli.Env, o *options) (format.Format, error) {
	switch {
	case o.formatLong != "":
		return format.ParseLong(o.formatLong)
	case o.format != "":
		return format.Parse(o.format)
	}
	f := DefaultFormat
	switch {
	case o.summarize:
		f = SummarizeFormat
	case o.nodeFlag && o.long:
		f = NodeLongFormat
	case o.nodeFlag:
		f = NodeFormat
	case o.reasons && o.long:
		f = ReasonLongFormat
	case o.reasons:
		f = ReasonFormat
	case env.Getenv("SINFO_FORMAT") != "":
		f = env.Getenv("SINFO_FORMAT")
	case o.long:
		f = LongFormat
	}
	return format.Parse(f)
}

// Run is the sinfo command.
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
	c := &renderCtx{noConvert: o.noConvert, env: env}
	table := fields(c)
	fm, err := chooseFormat(env, o)
	if err != nil {
		env.Errorf("%v", err)
		return cli.ExitCode(1)
	}
	plain := make([]format.Field[*group], len(table))
	byName := map[string]*sinfoField{}
	for i := range table {
		plain[i] = table[i].Field
		byName[table[i].Name] = &table[i]
	}
	layout, err := format.NewTable(plain...).Compile(fm)
	if err != nil {
		var uf *format.UnknownFieldError
		if errors.As(err, &uf) {
			env.Errorf("Invalid node format specification: %s", uf.Spec.Name)
		} else {
			env.Errorf("%v", err)
		}
		return cli.ExitCode(1)
	}
	how := grouping{perNode: o.nodeFlag}
	seenKey := map[string]bool{}
	for _, col := range layout.Columns() {
		sf := byName[col.Field.Name]
		switch {
		case sf.kind == kindPart:
			how.byPartition = !o.reasons
			if col.Field.Letter == 'P' || col.Field.Letter == 'R' {
				how.emptyParts = !o.reasons && !o.nodeFlag
			}
		case sf.kind == kindKey || sf.kind == kindNum && o.exact:
			if !seenKey[sf.Name] {
				seenKey[sf.Name] = true
				how.keys = append(how.keys, sf.key)
			}
		}
	}
	nf := &nodeFilter{responding: o.responding, dead: o.dead}
	states := o.states
	if states == "" && o.reasons {
		states = reasonStates
	}
	if states != "" {
		sf, bad := parseStateFilter(states)
		if bad != "" {
			env.Errorf("Bad state string: \"%s\"", bad)
			env.Errorf("valid states: %s", validStates())
			return cli.ExitCode(1)
		}
		nf.states = sf
	}
	if o.nodes != "" {
		list, err := hostlist.Expand(o.nodes)
		if err != nil {
			env.Errorf("'%s' invalid entry for --nodes", o.nodes)
			return cli.ExitCode(1)
		}
		nf.names = map[string]bool{}
		for _, n := range list {
			nf.names[n] = true
		}
	}
	sortSpec := o.sort
	if sortSpec == "" {
		sortSpec = DefaultSort
		if o.nodeFlag {
			sortSpec = NodeSort
		}
	}
	keys := parseSort(sortSpec)
	client, err := env.Client()
	if err != nil {
		fmt.Fprintf(env.Stderr, "slurm_load_partitions: %v\n", err)
		return err
	}
	if o.reservations {
		return repeat(ctx, env, o, func() error { return reservationReport(ctx, env, client, o.noHeader) })
	}
	return repeat(ctx, env, o, func() error {
		parts, err := client.ListPartitions(ctx)
		if err != nil {
			fmt.Fprintf(env.Stderr, "slurm_load_partitions: %v\n", err)
			return err
		}
		nodes, err := client.ListNodes(ctx)
		if err != nil {
			fmt.Fprintf(env.Stderr, "slurm_load_node: %v\n", err)
			return err
		}
		markReserved(ctx, client, nodes)
		sel, idx := selectPartitions(parts, o.partitions)
		groups := buildGroups(sel, idx, nodes, nf, how)
		sortGroups(groups, keys)
		return layout.Render(env.Stdout, groups, format.Options{NoHeader: o.noHeader})
	})
}

// selectPartitions keeps the partitions -p names (all when empty), in
// configuration order, with their configuration indexes.
func selectPartitions(parts []*model.Partition, list string) ([]*model.Partition, []int) {
	want := map[string]bool{}
	for p := range strings.SplitSeq(list, ",") {
		if p = strings.TrimSpace(p); p != "" {
			want[p] = true
		}
	}
	var sel []*model.Partition
	var idx []int
	for i, p := range parts {
		if p != nil && (len(want) == 0 || want[p.Name]) {
			sel, idx = append(sel, p), append(idx, i)
		}
	}
	return sel, idx
}

func validStates() string {
	var names []string
	for _, s := range nodeStates {
		names = append(names, strings.ToLower(s.long))
	}
	return strings.Join(names, ",")
}

// repeat prints once, or every -i seconds until ctx ends, with Slurm's
// date line first when asked for.
func repeat(ctx context.Context, env *cli.Env, o *options, print func() error) error {
	return cli.Repeat(ctx, env, o.iterate, !o.noHeader && (o.iterate > 0 || o.verbose > 0 || o.long), print)
}

const usageText = `Usage: sinfo [-adelNRrsTv] [-i seconds] [-t states] [-p partition] [-n nodes]
             [-S fields] [-o format] [-O Format]
`

const helpText = `Usage: sinfo [OPTIONS]
Show partitions and nodes.

  -a, --all                  all partitions (Drover hides none)
  -d, --dead                 only nodes that do not respond
  -e, --exact                split lines on every differing CPU/memory size
  -h, --noheader             leave the header line out
  -i, --iterate=SECONDS      print again every SECONDS
  -l, --long                 more columns, with a date line
  -n, --nodes=HOSTLIST       only these nodes
      --noconvert            print counts unconverted
  -N, --Node                 one line per node
  -o, --format=FORMAT        columns as "%[.][size]type", e.g. "%P %D %t"
  -O, --Format=LIST          columns as "name[:[.][size][suffix]]"
  -p, --partition=LIST       only these partitions
  -r, --responding           only nodes that respond
  -R, --list-reasons         why nodes are down or drained
  -s, --summarize            one line per partition, A/I/O/T node counts
  -S, --sort=FIELDS          sort by format letters, "-" for descending
  -t, --states=LIST          only nodes in these states ("idle,mix", "drain&idle")
  -T, --reservation          reservations
  -v, --verbose              add a date line
  -V, --version              print the version and exit

      --help                 this text
      --usage                a short usage line
`
