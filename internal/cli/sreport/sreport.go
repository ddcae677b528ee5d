package sreport

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/drover-hpc/drover/internal/acct"
	"github.com/drover-hpc/drover/internal/cli"
	"github.com/drover-hpc/drover/internal/model"
)

const helpText = `Usage: sreport [OPTIONS] [COMMAND]
Reports of cluster, account and user usage from the accounting records.
Without a command, sreport reads commands from its standard input.

Options:
  -a, --all_clusters   report on every cluster, not only the local one
  -M, --cluster=LIST   report on these clusters
  -n, --noheader       no banner and no column names
  -p, --parsable       '|' after every field
  -P, --parsable2      '|' between fields
  -Q, --quiet          no warnings, only errors
  -s, --sort=ORDER     order users by Time (usage, the default) or Name
  -t FORMAT            usage unit: Minutes (default), Hours, Seconds,
                       Percent, or SecPer, MinPer, HourPer for both
  -T, --tres=LIST      TRES to report (cpu, mem, node, gres/gpu, ...,
                       or ALL); one line per TRES
  -v, --verbose        more messages
  -h, --help, --usage  this text
  -V, --version        the version

Commands:
  cluster Utilization [Start= End= Clusters= Format=]
  cluster AccountUtilizationByUser [Accounts= Users= Tree Start= End= Format=]
  cluster UserUtilizationByAccount [Accounts= Users= Start= End= Format=]
  user TopUsage [TopCount=N Group Accounts= Users= Start= End= Format=]
  job SizesByAccount [Grouping=N,N,...|individual FlatView AcctAsParent
                      PrintJobCount Accounts= Users= Partitions= Start= End=]
  time FORMAT, parsable, parsable2, nonparsable, quiet, verbose, sort ORDER,
  help, version, exit, quit

Start= defaults to 00:00 yesterday and End= to 00:00 today; times take
Slurm's forms (YYYY-MM-DD[THH:MM[:SS]], MM/DD[/YY], HH:MM, now-1day, ...).
Format= lists columns, each with an optional %WIDTH (negative: left-justified).
`

// session is one sreport run: its settings, which interactive commands
// change, and the reports' output.
type session struct {
	ctx      context.Context
	env      *cli.Env
	out      *bufio.Writer
	header   bool
	mode     int
	unit     unit
	byName   bool
	tresArg  string
	all      bool
	clusters []string
	quiet    bool
	verbose  bool
	failed   bool
	quit     bool
}

// Run is the sreport command.
func Run(ctx context.Context, env *cli.Env, args []string) int {
	fs := pflag.NewFlagSet("sreport", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	var all, noHeader, p1, p2, quiet, verbose, help, version, fed, local bool
	var clusters, sortBy, timeFmt, tres string
	fs.BoolVarP(&all, "all_clusters", "a", false, "")
	fs.StringVarP(&clusters, "cluster", "M", "", "")
	fs.BoolVar(&fed, "federation", false, "")
	fs.BoolVar(&local, "local", false, "")
	fs.BoolVarP(&noHeader, "noheader", "n", false, "")
	fs.BoolVarP(&p1, "parsable", "p", false, "")
	fs.BoolVarP(&p2, "parsable2", "P", false, "")
	fs.BoolVarP(&quiet, "quiet", "Q", false, "")
	fs.StringVarP(&sortBy, "sort", "s", "", "")
	fs.StringVarP(&timeFmt, "time", "t", "", "")
	fs.StringVarP(&tres, "tres", "T", "", "")
	fs.BoolVarP(&verbose, "verbose", "v", false, "")
	fs.BoolVarP(&help, "help", "h", false, "")
	fs.BoolVar(&help, "usage", false, "")
	fs.BoolVarP(&version, "version", "V", false, "")
	fs.BoolP("immediate", "i", false, "")
	if err := fs.Parse(args); err != nil {
		fmt.Fprintf(env.Stderr, "%s: %s\n", env.Prog, cli.GetoptMessage(err))
		fmt.Fprintf(env.Stderr, "Try \"sreport --help\" for more information\n")
		return 1
	}
	s := &session{ctx: ctx, env: env, out: bufio.NewWriter(env.Stdout), header: !noHeader,
		quiet: quiet, verbose: verbose, all: all, tresArg: env.Getenv("SREPORT_TRES")}
	defer s.out.Flush()
	switch {
	case help:
		fmt.Fprint(s.out, helpText)
		return 0
	case version:
		fmt.Fprintf(s.out, "slurm %s\n", env.Version)
		return 0
	}
	switch {
	case p2:
		s.mode = parsable2
	case p1:
		s.mode = parsable
	}
	if fs.Changed("tres") {
		s.tresArg = tres
	}
	if v := env.Getenv("SREPORT_CLUSTER"); v != "" && clusters == "" {
		clusters = v
	}
	if n := btoi(all) + btoi(clusters != "") + btoi(local); n > 1 {
		fmt.Fprintln(env.Stderr, "Only one cluster option can be used (--all_clusters OR --cluster OR --local)")
		return 1
	}
	s.clusters = addList(nil, clusters, true)
	if timeFmt != "" && !s.setUnit(timeFmt) {
		return 1
	}
	if sortBy != "" && !s.setSort(sortBy) {
		return 1
	}
	if fs.NArg() == 0 {
		return s.interactive()
	}
	s.command(fs.Args())
	if s.failed {
		return 1
	}
	return 0
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (s *session) setUnit(v string) bool {
	u, ok := parseUnit(v)
	if !ok {
		s.out.Flush()
		fmt.Fprintf(s.env.Stderr, "unknown time format %s\n", v)
		s.failed = true
		return false
	}
	s.unit = u
	return true
}

func (s *session) setSort(v string) bool {
	switch {
	case abbrev(v, "Name", 1):
		s.byName = true
	case abbrev(v, "Time", 1):
		s.byName = false
	default:
		s.out.Flush()
		fmt.Fprintf(s.env.Stderr, "unknown timesort format %s\n", v)
		s.failed = true
		return false
	}
	return true
}

// fail reports an error on stderr after what was printed so far.
func (s *session) fail(format string, args ...any) {
	s.out.Flush()
	fmt.Fprintf(s.env.Stderr, format+"\n", args...)
	s.failed = true
}

// command runs one command line: a report or a setting.
func (s *session) command(words []string) {
	w, rest := words[0], words[1:]
	few := func() bool {
		if len(rest) == 0 {
			if !s.quiet {
				s.fail("too few arguments for keyword:%s", w)
			}
			s.failed = true
			return true
		}
		return false
	}
	many := func() {
		if len(rest) > 0 {
			s.fail("too many arguments for keyword:%s", w)
		}
	}
	switch {
	case abbrev(w, "cluster", 2):
		if !few() {
			s.clusterReport(rest)
		}
	case abbrev(w, "help", 2):
		many()
		fmt.Fprint(s.out, helpText)
	case abbrev(w, "job", 1):
		if !few() {
			if abbrev(rest[0], "SizesByAccount", 1) {
				s.run(kSizes, rest[1:])
			} else if abbrev(rest[0], "SizesByWcKey", 8) || abbrev(rest[0], "SizesByAccountAndWcKey", 15) {
				s.fail("WCKey reports are not supported: Drover does not track WCKeys")
			} else {
				s.fail("Not valid report %s\nValid job reports are, \"SizesByAccount, SizesByAccountAndWcKey, and  SizesByWckey\"", rest[0])
			}
		}
	case abbrev(w, "quiet", 4):
		many()
		s.quiet = true
	case abbrev(w, "exit", 1), abbrev(w, `\q`, 2), abbrev(w, "quit", 4):
		many()
		s.quit = true
	case abbrev(w, "local", 3):
		many()
	case abbrev(w, "nonparsable", 4):
		many()
		s.mode = aligned
	case abbrev(w, "parsable", 8):
		many()
		s.mode = parsable
	case abbrev(w, "parsable2", 9):
		many()
		s.mode = parsable2
	case abbrev(w, "reservation", 2), abbrev(w, "resv", 2):
		if !few() {
			s.fail("Reservation reports are not supported yet")
		}
	case abbrev(w, "sort", 1):
		if !few() {
			s.setSort(rest[0])
		}
	case abbrev(w, "time", 1):
		if !few() {
			s.setUnit(rest[0])
		}
	case abbrev(w, "verbose", 4):
		many()
		s.verbose = true
	case abbrev(w, "version", 4):
		many()
		fmt.Fprintf(s.out, "slurm %s\n", s.env.Version)
	case abbrev(w, "user", 1):
		if !few() {
			if ncmp(rest[0], "Top", 1) {
				s.run(kTop, rest[1:])
			} else {
				s.fail("Not valid report %s\nValid user reports are, \"Top\"", rest[0])
			}
		}
	default:
		s.fail("invalid keyword: %s", w)
	}
}

// clusterReport picks a cluster report by its name, as loosely as
// Slurm: AccountUtilizationByUser by its first letter, Utilization by
// its first two.
func (s *session) clusterReport(words []string) {
	r := words[0]
	switch {
	case ncmp(r, "AccountUtilizationByUser", 1):
		s.run(kAssoc, words[1:], "au")
	case ncmp(r, "UserUtilizationByAccount", 18), ncmp(r, "UA", 2):
		s.run(kAssoc, words[1:], "ua")
	case ncmp(r, "UserUtilizationByWckey", 18), ncmp(r, "UW", 2), ncmp(r, "WCKeyUtilizationByUser", 1):
		s.fail("WCKey reports are not supported: Drover does not track WCKeys")
	case ncmp(r, "Utilization", 2):
		s.run(kUtil, words[1:])
	default:
		s.fail("Not valid report %s\nValid cluster reports are, \"AccountUtilizationByUser\", \"UserUtilizationByAccount\", \"UserUtilizationByWckey\", \"Utilization\", and \"WCKeyUtilizationByUser\"", r)
	}
}

// run parses a report's conditions, reads the records and prints it.
func (s *session) run(k kind, words []string, which ...string) {
	now := s.env.Now()
	c, err := parseCond(k, words, now)
	if err != nil {
		s.fail("%s", err)
		return
	}
	c.window(now)
	w, err := s.load(k, c, now)
	if err != nil {
		s.out.Flush()
		if errors.Is(err, cli.ErrAcctDisabled) {
			fmt.Fprintln(s.env.Stderr, "Slurm accounting storage is disabled")
		} else {
			s.env.Errorf("%v", err)
		}
		s.failed = true
		return
	}
	tres, err := w.tresList(s.tresArg)
	if err == nil && contains(tres, "node") && s.tresArg != "" && !strings.EqualFold(s.tresArg, "all") {
		switch {
		case s.unit == uPercent || s.unit.per():
			err = condError("TRES node usage is no longer reported in percent format reports.  Please use TRES CPU instead.")
		case k == kUtil:
			err = condError("TRES node usage is no longer reported in the Cluster Utilization report.  Please use TRES CPU instead.")
		}
	}
	if err != nil {
		s.fail("%s", err)
		return
	}
	switch {
	case k == kUtil:
		s.utilization(w, c, tres)
	case k == kAssoc && which[0] == "au":
		s.acctByUser(w, c, tres)
	case k == kAssoc:
		s.userByAcct(w, c, tres)
	case k == kTop:
		s.topUsage(w, c, tres)
	case k == kSizes:
		if err := s.sizes(w, c, tres); err != nil {
			s.fail("%s", err)
		}
	}
	s.out.Flush()
}

// load reads the records of the period, the account tree and, but for
// the job reports, the local cluster's nodes and name.
func (s *session) load(k kind, c *cond, now time.Time) (*world, error) {
	cl, err := s.env.Client()
	if err != nil {
		return nil, err
	}
	q := acct.Query{Start: c.start.Unix(), End: c.end.Unix(), NoSteps: true,
		Fields: []string{"user", "uid", "account", "partition", "ncpus", "nnodes", "alloc_tres", "start", "end"}}
	switch {
	case c.all || s.all:
		q.Clusters = []string{"all"}
	case len(c.clusters) > 0 || len(s.clusters) > 0:
		q.Clusters = addList(append([]string(nil), s.clusters...), strings.Join(c.clusters, ","), true)
	}
	jobs, err := cli.AcctJobs(s.ctx, cl, q)
	if err != nil {
		return nil, err
	}
	db, err := cl.AcctDB(s.ctx)
	if err != nil {
		return nil, err
	}
	var nodes []*model.Node
	if k != kSizes {
		if nodes, err = cl.ListNodes(s.ctx); err != nil {
			return nil, err
		}
	}
	local := ""
	if kvs, err := cl.Config(s.ctx); err == nil {
		for _, kv := range kvs {
			if strings.EqualFold(kv.Key, "ClusterName") {
				local = strings.ToLower(kv.Value)
			}
		}
	}
	if local == "" && db != nil && len(db.Clusters) > 0 {
		local = db.Clusters[0]
	}
	return newWorld(jobs, db, nodes, local, c.start.Unix(), c.end.Unix(), now.Unix(), s.env.LookupUser), nil
}

// clusterList is the clusters a report covers, by name: the local one,
// those -M and Clusters= name, or with -a every one the database and
// the records know.
func (s *session) clusterList(w *world, c *cond) []string {
	var list []string
	switch {
	case c.all || s.all:
		list = addList(list, w.local, true)
		list = addList(list, strings.Join(w.db.Clusters, ","), true)
		for _, r := range w.recs {
			list = addList(list, r.Cluster, true)
		}
	case len(c.clusters) > 0 || len(s.clusters) > 0:
		// Clusters neither the database nor the records know have
		// nothing to report, as in Slurm.
		for _, cl := range addList(append([]string(nil), s.clusters...), strings.Join(c.clusters, ","), true) {
			if w.known(cl) {
				list = append(list, cl)
			}
		}
	default:
		list = []string{w.local}
	}
	sort.Strings(list)
	return list
}

// known reports whether the cluster is the local one, in the database
// or named by a record.
func (w *world) known(cluster string) bool {
	if strings.EqualFold(cluster, w.local) || contains(w.db.Clusters, cluster) {
		return true
	}
	for _, r := range w.recs {
		if strings.EqualFold(r.Cluster, cluster) {
			return true
		}
	}
	return false
}

func (s *session) printer() *printer { return &printer{w: s.out, mode: s.mode} }

// interactive reads commands from stdin until exit, quit or its end.
func (s *session) interactive() int {
	in := bufio.NewScanner(s.env.Stdin)
	in.Buffer(make([]byte, 64*1024), 1<<20)
	failed, last := false, ""
	for !s.quit {
		fmt.Fprint(s.out, "sreport: ")
		s.out.Flush()
		if s.env.Stdin == nil || !in.Scan() {
			fmt.Fprint(s.out, "\n")
			break
		}
		line := strings.TrimSpace(in.Text())
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
		return 1
	}
	return 0
}

// splitLine splits a command line at blanks outside quotes.
func splitLine(line string) []string {
	var words []string
	var cur strings.Builder
	in, dq, sq := false, false, false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '"' && !sq:
			dq = !dq
		case c == '\'' && !dq:
			sq = !sq
		case !dq && !sq && (c == ' ' || c == '\t'):
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
