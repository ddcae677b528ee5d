package sacct

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"

	"strconv"
	"strings"
	"time"

	"github.com/drover-hpc/drover/internal/nss"

	"github.com/spf13/pflag"

	"github.com/drover-hpc/drover/internal/acct"
	"github.com/drover-hpc/drover/internal/cli"
	"github.com/drover-hpc/drover/internal/hostlist"
	"github.com/drover-hpc/drover/internal/jobspec"
)

const (
	defaultFormat    = "jobid,jobname,partition,account,alloccpus,state,exitcode"
	briefFormat      = "jobid,state,exitcode"
	completionFormat = "jobid,uid,jobname,partition,nnodes,nodelist,state,end"
	longFormat       = "jobid,jobidraw,jobname,partition,maxrss,maxrssnode,maxrsstask,averss,alloccpus,elapsed," +
		"state,exitcode,reqcpus,reqmem,reqtres,alloctres,totalcpu,usercpu,systemcpu,nnodes,ntasks,cputime"
)

const usageText = `Usage: sacct [-abcDeEhjlLnNoPpqrsStuvVX] [--delimiter=X] [--name=NAMES] [--json] [--units=KMGTP]
`

const helpText = `sacct [<OPTION>]
    Valid <OPTION> values are:
     -a, --allusers:    display jobs of all users (only yours by default)
     -A, --accounts:    comma separated list of accounts
     -b, --brief:       JobID, State and ExitCode only
     -c, --completion:  completion fields
     -D, --duplicates:  also show the earlier runs of requeued jobs
         --delimiter:   field delimiter of --parsable output (default "|")
     -e, --helpformat:  list the fields --format accepts
     -E, --endtime:     jobs that started before this time (default now)
     -S, --starttime:   jobs that ran after this time (default 00:00 today)
     -j, --jobs:        comma separated job[_task][.step] list
     -l, --long:        the long field list
     -L, --allclusters: every cluster of the database
     -M, --clusters:    comma separated clusters, or all
     -n, --noheader:    no header line
     -N, --nodelist:    jobs that ran on any of these nodes
         --name:        comma separated job names
     -o, --format:      comma separated fields (Name%%width)
     -p, --parsable:    '|' after every field
     -P, --parsable2:   '|' between fields
     -q, --qos:         comma separated QOS
     -r, --partition:   comma separated partitions
     -s, --state:       comma separated states (short or long names)
     -u, --user:        comma separated users (names or uids)
         --me:          your own jobs
         --units:       print memory in K, M, G, T or P
         --noconvert:   print memory without converting units
         --json:        JSON output
     -X, --allocations: jobs only, no steps
         --array:       one row per array task (pending ones too)
     -h, --help, --usage, -V, --version
`

type options struct {
	all, brief, completion, long, allClusters, noHeader, parsable, parsable2   bool
	allocations, me, noconvert, json, helpFormat, help, usage, version, dups   bool
	array                                                                      bool
	delimiter, format, accounts, clusters, nodes, names, jobs, qos, partitions string
	states, users, units, start, end                                           string
	verbose                                                                    int
	set                                                                        func(string) bool
}

func flags(o *options) *pflag.FlagSet {
	fs := pflag.NewFlagSet("sacct", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	fs.BoolVarP(&o.all, "allusers", "a", false, "")
	fs.StringVarP(&o.accounts, "accounts", "A", "", "")
	fs.StringVar(&o.accounts, "account", "", "")
	fs.BoolVarP(&o.brief, "brief", "b", false, "")
	fs.BoolVarP(&o.completion, "completion", "c", false, "")
	fs.BoolVarP(&o.dups, "duplicates", "D", false, "")
	fs.StringVar(&o.delimiter, "delimiter", "|", "")
	fs.BoolVarP(&o.helpFormat, "helpformat", "e", false, "")
	fs.StringVarP(&o.end, "endtime", "E", "", "")
	fs.StringVarP(&o.start, "starttime", "S", "", "")
	fs.StringVarP(&o.jobs, "jobs", "j", "", "")
	fs.BoolVarP(&o.long, "long", "l", false, "")
	fs.BoolVarP(&o.allClusters, "allclusters", "L", false, "")
	fs.StringVarP(&o.clusters, "clusters", "M", "", "")
	fs.BoolVarP(&o.noHeader, "noheader", "n", false, "")
	fs.StringVarP(&o.nodes, "nodelist", "N", "", "")
	fs.StringVar(&o.names, "name", "", "")
	fs.StringVarP(&o.format, "format", "o", "", "")
	fs.BoolVarP(&o.parsable, "parsable", "p", false, "")
	fs.BoolVarP(&o.parsable2, "parsable2", "P", false, "")
	fs.StringVarP(&o.qos, "qos", "q", "", "")
	fs.StringVarP(&o.partitions, "partition", "r", "", "")
	fs.StringVarP(&o.states, "state", "s", "", "")
	fs.StringVarP(&o.users, "user", "u", "", "")
	fs.StringVar(&o.users, "uid", "", "")
	fs.BoolVar(&o.me, "me", false, "")
	fs.StringVar(&o.units, "units", "", "")
	fs.BoolVar(&o.noconvert, "noconvert", false, "")
	fs.BoolVar(&o.json, "json", false, "")
	fs.BoolVarP(&o.allocations, "allocations", "X", false, "")
	fs.BoolVarP(&o.help, "help", "h", false, "")
	fs.BoolVar(&o.usage, "usage", false, "")
	fs.BoolVarP(&o.version, "version", "V", false, "")
	fs.CountVarP(&o.verbose, "verbose", "v", "")
	fs.Bool("truncate", false, "")
	fs.Bool("local", false, "")
	fs.Bool("federation", false, "")
	fs.BoolVar(&o.array, "array", false, "")
	fs.Bool("whole-hetjob", false, "")
	fs.SetNormalizeFunc(func(_ *pflag.FlagSet, name string) pflag.NormalizedName {
		return pflag.NormalizedName(name)
	})
	o.set = func(name string) bool { return fs.Changed(name) }
	return fs
}

// Run is the sacct command.
func Run(ctx context.Context, env *cli.Env, args []string) int {
	o := &options{}
	fs := flags(o)
	if err := fs.Parse(args); err != nil {
		fmt.Fprintf(env.Stderr, "%s: %s\n", env.Prog, cli.GetoptMessage(err))
		fmt.Fprintf(env.Stderr, "Try \"sacct --help\" for more information\n")
		return 1
	}
	switch {
	case o.version:
		fmt.Fprintf(env.Stdout, "slurm %s\n", env.Version)
		return 0
	case o.help:
		fmt.Fprint(env.Stdout, helpText)
		return 0
	case o.usage:
		fmt.Fprint(env.Stdout, usageText)
		return 0
	case o.helpFormat:
		printFields(env.Stdout)
		return 0
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(env.Stderr, "%s: error: Unknown arguments:", env.Prog)
		for _, a := range fs.Args() {
			fmt.Fprintf(env.Stderr, " %s", a)
		}
		fmt.Fprintln(env.Stderr)
		return 1
	}
	cols, err := columns(o, env)
	if err != nil {
		fmt.Fprintf(env.Stderr, "%s: error: %v\n", env.Prog, err)
		return 1
	}
	u := &units{noconvert: o.noconvert}
	if o.units != "" {
		c := strings.ToUpper(o.units)
		if len(c) != 1 || !strings.Contains(unitChars, c) {
			fmt.Fprintf(env.Stderr, "%s: error: Invalid unit type '%s'. Possible options are [KMGTP]\n", env.Prog, o.units)
			return 1
		}
		u.force = c[0]
	}
	now := env.Now()
	q, sel, err := query(o, env, now, cols)
	if err != nil {
		fmt.Fprintf(env.Stderr, "%s: error: %v\n", env.Prog, err)
		return 1
	}
	c, err := env.Client()
	if err != nil {
		fmt.Fprintf(env.Stderr, "%s: error: %v\n", env.Prog, err)
		return 1
	}
	jobs, err := cli.AcctJobs(ctx, c, q)
	if err != nil {
		if errors.Is(err, cli.ErrAcctDisabled) {
			fmt.Fprintln(env.Stderr, "Slurm accounting storage is disabled")
			return 1
		}
		fmt.Fprintf(env.Stderr, "%s: error: Problem talking to the database: %v\n", env.Prog, err)
		return 1
	}
	if o.nodes != "" {
		if jobs, err = onNodes(jobs, o.nodes); err != nil {
			fmt.Fprintf(env.Stderr, "%s: error: %v\n", env.Prog, err)
			return 1
		}
	}
	w := bufio.NewWriterSize(env.Stdout, 64<<10)
	defer w.Flush()
	if o.json {
		if err := writeJSON(w, jobs, fold(jobs, sel, o.array, 0), now.Unix(), sel, o.allocations); err != nil {
			fmt.Fprintf(env.Stderr, "%s: error: %v\n", env.Prog, err)
			return 1
		}
		return 0
	}
	p := &printer{w: w, cols: cols, delim: o.delimiter}
	switch {
	case o.parsable2:
		p.mode = parsable2
	case o.parsable:
		p.mode = parsable
	}
	if !o.noHeader {
		p.header()
	}
	r := &row{now: now.Unix(), u: u}
	rows := fold(jobs, sel, o.array, env.BitstrLen())
	for _, j := range jobs {
		rec, ok := rows.row(j)
		if !ok {
			continue
		}
		j = rec.j
		whole, steps := sel.match(j)
		r.tasks = ""
		if whole && o.dups {
			// -D: every run of a requeued job, the earlier ones REQUEUED.
			for i := range j.Runs {
				r.j, r.s = earlierRun(j, &j.Runs[i]), nil
				p.row(r)
			}
		}
		r.j, r.tasks = j, rec.tasks
		if whole {
			r.s = nil
			p.row(r)
		}
		if o.allocations {
			continue
		}
		for _, s := range j.Steps {
			if whole || steps[s.StepID] {
				r.s = s
				p.row(r)
			}
		}
	}
	return 0
}

// earlierRun is the record of one earlier run of a requeued job, as
// Slurm's database keeps it: the job's fields with the run's times,
// nodes and exit status, in state REQUEUED.
func earlierRun(j *acct.Job, run *acct.Run) *acct.Job {
	c := *j
	c.Runs, c.Steps = nil, nil
	c.State, c.Reason = "REQUEUED", "None"
	if run.Preempted {
		c.State = "PREEMPTED"
	}
	c.Submit, c.Eligible, c.Start, c.End = run.Submit, run.Eligible, run.Start, run.End
	c.NodeList, c.NCPUs, c.NNodes = run.NodeList, run.NCPUs, 1
	// Like a cancelled job's row, the run's row shows no signal (the
	// requeue's kill is not the job's doing).
	c.ExitStatus, c.ExitSignal = run.ExitStatus, 0
	c.DerivedExitStatus, c.DerivedExitSignal = 0, 0
	if n, err := hostlist.Expand(run.NodeList); err == nil && len(n) > 0 {
		c.NNodes = int32(len(n))
	}
	return &c
}

func printFields(w io.Writer) {
	for i, f := range fields {
		fmt.Fprintf(w, "%-20s", f.name)
		if i%4 == 3 || i == len(fields)-1 {
			fmt.Fprintln(w)
		}
	}
}

// column is a field with the width it prints at.
type column struct {
	f     *field
	width int
}

// columns resolves --format (or -b/-c/-l, SACCT_FORMAT, the default).
func columns(o *options, env *cli.Env) ([]column, error) {
	spec := defaultFormat
	switch {
	case o.format != "":
		spec = o.format
	case o.brief:
		spec = briefFormat
	case o.completion:
		spec = completionFormat
	case o.long:
		spec = longFormat
	case env.Getenv("SACCT_FORMAT") != "":
		spec = env.Getenv("SACCT_FORMAT")
	}
	var cols []column
	for _, item := range strings.Split(spec, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		name, width, hasWidth := strings.Cut(item, "%")
		f := fieldByName()[strings.ToLower(name)]
		if f == nil {
			return nil, fmt.Errorf("Invalid field requested: \"%s\"", name)
		}
		c := column{f: f, width: f.width}
		if hasWidth {
			n, err := strconv.Atoi(width)
			if err != nil || n == 0 || n > 1<<16 || n < -(1<<16) {
				return nil, fmt.Errorf("Invalid field width requested: \"%s\"", item)
			}
			// A width given keeps the field's justification unless it
			// is negative itself.
			if f.width < 0 && n > 0 {
				n = -n
			}
			c.width = n
		}
		cols = append(cols, c)
	}
	if len(cols) == 0 {
		return nil, errors.New("no fields to print")
	}
	return cols, nil
}

// selection is -j: whole jobs (ids, array tasks) and single steps.
type selection struct {
	any   bool
	whole map[acct.JobSel]bool
	steps map[acct.JobSel]map[int32]bool
}

// match reports whether a record's job row prints, and which of its
// steps print when it does not.
func (s *selection) match(j *acct.Job) (bool, map[int32]bool) {
	if !s.any {
		return true, nil
	}
	keys := []acct.JobSel{{JobID: j.JobID, ArrayTask: -1}}
	if j.ArrayTaskID >= 0 {
		keys = append(keys, acct.JobSel{JobID: j.ArrayJobID, ArrayTask: -1}, acct.JobSel{JobID: j.ArrayJobID, ArrayTask: j.ArrayTaskID})
	}
	var steps map[int32]bool
	for _, k := range keys {
		if s.whole[k] {
			return true, nil
		}
		for id := range s.steps[k] {
			if steps == nil {
				steps = map[int32]bool{}
			}
			steps[id] = true
		}
	}
	return false, steps
}

// parseJobs reads -j: 123, 123_4, 123.batch, 123_4.0, comma separated.
func parseJobs(list string) ([]acct.JobSel, *selection, error) {
	sel := &selection{any: true, whole: map[acct.JobSel]bool{}, steps: map[acct.JobSel]map[int32]bool{}}
	var out []acct.JobSel
	for _, item := range strings.Split(list, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		jobPart, stepPart, isStep := strings.Cut(item, ".")
		idPart, taskPart, isTask := strings.Cut(jobPart, "_")
		id, err := strconv.ParseUint(idPart, 10, 32)
		if err != nil || id == 0 {
			return nil, nil, fmt.Errorf("Invalid job id: %s", item)
		}
		js := acct.JobSel{JobID: uint32(id), ArrayTask: -1}
		if isTask {
			t, err := strconv.ParseInt(taskPart, 10, 32)
			if err != nil || t < 0 {
				return nil, nil, fmt.Errorf("Invalid job id: %s", item)
			}
			js.ArrayTask = int32(t)
		}
		out = append(out, js)
		if !isStep {
			sel.whole[js] = true
			continue
		}
		var sid int32
		switch stepPart {
		case "batch":
			sid = acct.StepBatch
		case "extern":
			sid = acct.StepExtern
		case "interactive":
			sid = acct.StepInteractive
		default:
			n, err := strconv.ParseInt(stepPart, 10, 32)
			if err != nil || n < 0 {
				return nil, nil, fmt.Errorf("Invalid job id: %s", item)
			}
			sid = int32(n)
		}
		if sel.steps[js] == nil {
			sel.steps[js] = map[int32]bool{}
		}
		sel.steps[js][sid] = true
	}
	return out, sel, nil
}

var shortStates = map[string]string{
	"PD": "PENDING", "R": "RUNNING", "CD": "COMPLETED", "CA": "CANCELLED", "F": "FAILED", "TO": "TIMEOUT",
	"NF": "NODE_FAIL", "PR": "PREEMPTED", "BF": "BOOT_FAIL", "DL": "DEADLINE", "OOM": "OUT_OF_MEMORY",
	"S": "SUSPENDED", "RQ": "REQUEUED", "RS": "RESIZING", "RV": "REVOKED", "SE": "SPECIAL_EXIT",
}

func parseStates(list string) ([]string, error) {
	long := map[string]bool{}
	for _, l := range shortStates {
		long[l] = true
	}
	var out []string
	for _, s := range strings.Split(list, ",") {
		s = strings.ToUpper(strings.TrimSpace(s))
		if s == "" {
			continue
		}
		if l, ok := shortStates[s]; ok {
			s = l
		}
		if !long[s] {
			return nil, fmt.Errorf("Invalid state: %s", s)
		}
		out = append(out, s)
	}
	return out, nil
}

func split(list string) []string {
	var out []string
	for _, s := range strings.Split(list, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// query builds the database query and the -j selection, with Slurm's
// default window: since 00:00 today; with -j and no -s since ever; with
// -s and neither -S nor -j only now.
func query(o *options, env *cli.Env, now time.Time, cols []column) (acct.Query, *selection, error) {
	q := acct.Query{NoSteps: o.allocations}
	sel := &selection{}
	if o.jobs != "" {
		var err error
		if q.Jobs, sel, err = parseJobs(o.jobs); err != nil {
			return q, nil, err
		}
	}
	var err error
	if o.states != "" {
		if q.States, err = parseStates(o.states); err != nil {
			return q, nil, err
		}
	}
	q.Accounts, q.Partitions, q.QOS, q.Names = split(o.accounts), split(o.partitions), split(o.qos), split(o.names)
	switch {
	case o.allClusters:
		q.Clusters = []string{"all"}
	case o.clusters != "":
		q.Clusters = split(o.clusters)
	}
	uid := uint32(env.Getuid())
	switch {
	case o.users != "" && o.users != "-1":
		for _, name := range split(o.users) {
			id, err := lookupUID(name)
			if err != nil {
				return q, nil, err
			}
			q.UIDs = append(q.UIDs, id)
		}
	case o.me:
		q.UIDs = []uint32{uid}
	case o.all || o.users == "-1" || uid == 0:
	default:
		q.UIDs = []uint32{uid}
	}
	end := now
	if o.end != "" {
		t, err := jobspec.ParseBegin(o.end, now)
		if err != nil {
			return q, nil, fmt.Errorf("Invalid time specification: %s", o.end)
		}
		end = t
	}
	var start time.Time
	switch {
	case o.start != "":
		t, err := jobspec.ParseBegin(o.start, now)
		if err != nil {
			return q, nil, fmt.Errorf("Invalid time specification: %s", o.start)
		}
		start = t
	case o.jobs != "":
	case o.states != "":
		start = end
	default:
		y, m, d := now.Date()
		start = time.Date(y, m, d, 0, 0, 0, 0, now.Location())
	}
	if !start.IsZero() {
		q.Start = start.Unix()
	}
	q.End = end.Unix()
	if q.Start > q.End {
		return q, nil, fmt.Errorf("start time (%s) is after end time (%s)", stamp(q.Start, ""), stamp(q.End, ""))
	}
	// Read only the columns printed; the steps only when they print or
	// their usage adds up on job rows.
	needSteps := !o.allocations
	set := map[string]bool{}
	for _, c := range cols {
		needSteps = needSteps || c.f.steps
		for _, n := range c.f.needs {
			set[n] = true
		}
	}
	if o.nodes != "" {
		set["node_list"] = true
	}
	if o.dups {
		set["runs"] = true
	}
	if !o.array {
		for _, n := range remainderFields {
			set[n] = true
		}
	}
	q.NoSteps = !needSteps
	if !o.json {
		for n := range set {
			q.Fields = append(q.Fields, n)
		}
		if len(q.Fields) == 0 {
			q.Fields = []string{"state"}
		}
	}
	return q, sel, nil
}

func lookupUID(name string) (uint32, error) {
	if n, err := strconv.ParseUint(name, 10, 32); err == nil {
		return uint32(n), nil
	}
	u, err := nss.Lookup(name)
	if err != nil {
		return 0, fmt.Errorf("Invalid user id: %s", name)
	}
	n, _ := strconv.ParseUint(u.Uid, 10, 32)
	return uint32(n), nil
}

// onNodes keeps the jobs that ran on any of the nodes (-N).
func onNodes(jobs []*acct.Job, list string) ([]*acct.Job, error) {
	want, err := hostlist.Expand(list)
	if err != nil {
		return nil, fmt.Errorf("Invalid node list: %s", list)
	}
	set := map[string]bool{}
	for _, n := range want {
		set[n] = true
	}
	var out []*acct.Job
	for _, j := range jobs {
		if j.NodeList == "" {
			continue
		}
		names, err := hostlist.Expand(j.NodeList)
		if err != nil {
			continue
		}
		for _, n := range names {
			if set[n] {
				out = append(out, j)
				break
			}
		}
	}
	return out, nil
}

const (
	aligned = iota
	parsable
	parsable2
)

type printer struct {
	w     *bufio.Writer
	cols  []column
	mode  int
	delim string
}

func (p *printer) header() {
	if p.mode != aligned {
		for i, c := range p.cols {
			p.w.WriteString(c.f.name)
			if i < len(p.cols)-1 || p.mode == parsable {
				p.w.WriteString(p.delim)
			}
		}
		p.w.WriteByte('\n')
		return
	}
	for _, c := range p.cols {
		p.cell(c.width, c.f.name)
	}
	p.w.WriteByte('\n')
	for _, c := range p.cols {
		p.w.WriteString(strings.Repeat("-", abs(c.width)))
		p.w.WriteByte(' ')
	}
	p.w.WriteByte('\n')
}

func (p *printer) row(r *row) {
	for i, c := range p.cols {
		v := c.f.val(r)
		if p.mode == aligned {
			p.cell(c.width, v)
			continue
		}
		p.w.WriteString(v)
		if i < len(p.cols)-1 || p.mode == parsable {
			p.w.WriteString(p.delim)
		}
	}
	p.w.WriteByte('\n')
}

// cell writes v in width columns (negative: left-justified), cut with a
// trailing '+' when longer, and the space that follows every field.
func (p *printer) cell(width int, v string) {
	w := abs(width)
	if len(v) > w {
		v = v[:w-1] + "+"
	}
	pad := w - len(v)
	if width > 0 {
		for range pad {
			p.w.WriteByte(' ')
		}
		p.w.WriteString(v)
	} else {
		p.w.WriteString(v)
		for range pad {
			p.w.WriteByte(' ')
		}
	}
	p.w.WriteByte(' ')
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
