package sreport

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os/user"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/drover-hpc/drover/internal/acct"
	"github.com/drover-hpc/drover/internal/cli"
	"github.com/drover-hpc/drover/internal/jobspec"
	"github.com/drover-hpc/drover/internal/model"
)

const helpText = `sreport [<OPTION>] [<COMMAND>]
    Valid <OPTION> values are:
     -a, --all_clusters: every cluster
     -M, --cluster:      comma separated clusters
     -n, --noheader:     no header lines
     -p, --parsable:     '|' after every field
     -P, --parsable2:    '|' between fields
     -t <unit>:          Minutes (default), Hours, Seconds, Percent
                         (or MinPer, HourPer, SecPer: both)
     -T, --tres:         comma separated TRES to report (default cpu)
     -h, --help, -V, --version

    Valid <COMMAND> values are:
     cluster Utilization
     cluster AccountUtilizationByUser
     cluster UserUtilizationByAccount
     user TopUsage [TopCount=N]
     job SizesByAccount [Grouping=N,N,...]
    with options Start=<time> End=<time> Accounts=<list> Users=<list>
`

// Run is the sreport command.
func Run(ctx context.Context, env *cli.Env, args []string) int {
	fs := pflag.NewFlagSet("sreport", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	var o opts
	var help, version bool
	fs.BoolVarP(&o.all, "all_clusters", "a", false, "")
	fs.StringVarP(&o.clusters, "cluster", "M", "", "")
	fs.BoolVarP(&o.noHeader, "noheader", "n", false, "")
	fs.BoolVarP(&o.parsable, "parsable", "p", false, "")
	fs.BoolVarP(&o.parsable2, "parsable2", "P", false, "")
	fs.StringVarP(&o.unit, "time", "t", "minutes", "")
	fs.StringVarP(&o.tres, "tres", "T", "cpu", "")
	fs.BoolVarP(&help, "help", "h", false, "")
	fs.BoolVar(&help, "usage", false, "")
	fs.BoolVarP(&version, "version", "V", false, "")
	fs.BoolP("quiet", "Q", false, "")
	fs.CountP("verbose", "v", "")
	if err := fs.Parse(args); err != nil {
		fmt.Fprintf(env.Stderr, "%s: %s\n", env.Prog, cli.GetoptMessage(err))
		fmt.Fprintf(env.Stderr, "Try \"sreport --help\" for more information\n")
		return 1
	}
	switch {
	case version:
		fmt.Fprintf(env.Stdout, "slurm %s\n", env.Version)
		return 0
	case help:
		fmt.Fprint(env.Stdout, helpText)
		return 0
	}
	w := bufio.NewWriter(env.Stdout)
	defer w.Flush()
	if err := report(ctx, env, w, &o, fs.Args()); err != nil {
		if errors.Is(err, cli.ErrAcctDisabled) {
			fmt.Fprintln(env.Stderr, "Slurm accounting storage is disabled")
		} else {
			fmt.Fprintf(env.Stderr, "%s: error: %v\n", env.Prog, err)
		}
		return 1
	}
	return 0
}

type opts struct {
	all, noHeader, parsable, parsable2 bool
	clusters, unit, tres               string
}

// params are a report's Key=Value words.
type params struct {
	start, end time.Time
	accounts   []string
	users      []string
	clusters   []string
	top        int
	grouping   []int
}

func report(ctx context.Context, env *cli.Env, w io.Writer, o *opts, words []string) error {
	if len(words) < 2 {
		return errors.New("Not enough arguments for report: say e.g. \"sreport cluster utilization\"")
	}
	now := env.Now()
	y, m, d := now.Date()
	today := time.Date(y, m, d, 0, 0, 0, 0, now.Location())
	p := &params{start: today.AddDate(0, 0, -1), end: today, top: 10, grouping: []int{50, 250, 500, 1000}}
	for _, kv := range words[2:] {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return fmt.Errorf("Unknown condition: %s", kv)
		}
		var err error
		switch strings.ToLower(k) {
		case "start":
			p.start, err = jobspec.ParseBegin(v, now)
		case "end":
			p.end, err = jobspec.ParseBegin(v, now)
		case "accounts", "account", "acct":
			p.accounts = strings.Split(strings.ToLower(v), ",")
		case "users", "user":
			p.users = strings.Split(v, ",")
		case "clusters", "cluster":
			p.clusters = strings.Split(v, ",")
		case "topcount":
			p.top, err = strconv.Atoi(v)
		case "grouping":
			p.grouping = nil
			for _, g := range strings.Split(v, ",") {
				n, e := strconv.Atoi(g)
				if e != nil || n <= 0 || (len(p.grouping) > 0 && n <= p.grouping[len(p.grouping)-1]) {
					return fmt.Errorf("Invalid grouping: %s", v)
				}
				p.grouping = append(p.grouping, n)
			}
		default:
			return fmt.Errorf("Unknown condition: %s", kv)
		}
		if err != nil {
			return fmt.Errorf("Invalid %s: %s", k, v)
		}
	}
	if !p.end.After(p.start) {
		return fmt.Errorf("start time %s is not before end time %s", stamp(p.start), stamp(p.end))
	}
	u, err := parseUnit(o.unit)
	if err != nil {
		return err
	}
	tres := strings.Split(strings.ToLower(o.tres), ",")
	kind, name := strings.ToLower(words[0]), strings.ToLower(words[1])
	var run func(*data) [][]string
	var title string
	var head []column
	switch {
	case prefix(kind, "cluster", 2) && name == "utilization":
		title, head, run = "Cluster Utilization", clusterUtilHead, clusterUtil
	case prefix(kind, "cluster", 2) && name == "accountutilizationbyuser":
		title, head, run = "Cluster/Account/User Utilization", acctByUserHead, acctByUser
	case prefix(kind, "cluster", 2) && name == "userutilizationbyaccount":
		title, head, run = "Cluster/User/Account Utilization", userByAcctHead, userByAcct
	case prefix(kind, "user", 2) && name == "topusage":
		title, head, run = fmt.Sprintf("Top %d Users", p.top), topHead, topUsage
	case prefix(kind, "job", 2) && name == "sizesbyaccount":
		title, head, run = "Job Sizes", sizesHead(p.grouping), sizes
	default:
		return fmt.Errorf("Not valid report %s %s", words[0], words[1])
	}
	c, err := env.Client()
	if err != nil {
		return err
	}
	q := acct.Query{Start: p.start.Unix(), End: p.end.Unix() - 1, NoSteps: true,
		Fields: []string{"user", "uid", "account", "ncpus", "alloc_tres", "start", "end"}}
	switch {
	case o.all:
		q.Clusters = []string{"all"}
	case o.clusters != "":
		q.Clusters = strings.Split(o.clusters, ",")
	case len(p.clusters) > 0:
		q.Clusters = p.clusters
	}
	jobs, err := c.AcctJobs(ctx, q)
	if err != nil {
		return err
	}
	db, err := c.AcctDB(ctx)
	if err != nil {
		return err
	}
	nodes, err := c.ListNodes(ctx)
	if err != nil {
		return err
	}
	dt := &data{p: p, db: db, unit: u, now: now.Unix(), nodes: nodes}
	out := &printer{w: w, mode: aligned}
	switch {
	case o.parsable2:
		out.mode = parsable2
	case o.parsable:
		out.mode = parsable
	}
	if len(tres) > 1 || tres[0] != "cpu" {
		head = append([]column{head[0], {"TRES Name", 14}}, head[1:]...)
	}
	if !o.noHeader && out.mode == aligned {
		banner(w, title, p, u, tres, name == "sizesbyaccount")
	}
	if !o.noHeader {
		out.header(head)
	}
	for _, t := range tres {
		dt.tres = t
		dt.jobs = dt.jobs[:0]
		for _, j := range jobs {
			if len(p.users) > 0 && !contains(p.users, j.User) {
				continue
			}
			dt.jobs = append(dt.jobs, j)
		}
		for _, r := range run(dt) {
			if len(tres) > 1 || tres[0] != "cpu" {
				r = append([]string{r[0], t}, r[1:]...)
			}
			out.row(head, r)
		}
	}
	return nil
}

func prefix(w, full string, min int) bool {
	return len(w) >= min && strings.HasPrefix(full, w)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func stamp(t time.Time) string { return t.Format("2006-01-02T15:04:05") }

// unit is -t: how usage prints.
type unit struct {
	div     float64 // seconds per unit
	name    string
	percent bool // only a percentage
	both    bool // count and percentage
}

func parseUnit(s string) (unit, error) {
	l := strings.ToLower(s)
	base, per := l, false
	if strings.HasSuffix(l, "per") && l != "percent" && l != "per" {
		base, per = strings.TrimSuffix(l, "per"), true
	}
	switch {
	case base == "percent" || base == "per" || base == "p":
		return unit{div: 60, name: "Percentage of Total", percent: true}, nil
	case prefix(base, "minutes", 1) || base == "min":
		return unit{div: 60, name: "Minutes", both: per}, nil
	case prefix(base, "hours", 1) || base == "hour":
		return unit{div: 3600, name: "Hours", both: per}, nil
	case prefix(base, "seconds", 1) || base == "sec":
		return unit{div: 1, name: "Seconds", both: per}, nil
	}
	return unit{}, fmt.Errorf("Invalid time unit: %s (Minutes, Hours, Seconds, Percent, or MinPer, HourPer, SecPer)", s)
}

// value prints usage (TRES-seconds) against a total.
func (u unit) value(secs, total float64) string {
	pct := 0.0
	if total > 0 {
		pct = 100 * secs / total
	}
	switch {
	case u.percent:
		return fmt.Sprintf("%.2f%%", pct)
	case u.both:
		return fmt.Sprintf("%d(%.2f%%)", int64(secs/u.div), pct)
	}
	return strconv.FormatInt(int64(secs/u.div), 10)
}

func banner(w io.Writer, title string, p *params, u unit, tres []string, sizes bool) {
	line := strings.Repeat("-", 80)
	fmt.Fprintln(w, line)
	if sizes {
		fmt.Fprintf(w, "%s %s - %s (%d secs)\n", title, stamp(p.start), stamp(p.end.Add(-time.Second)), int64(p.end.Sub(p.start).Seconds()))
		fmt.Fprintf(w, "Time reported in %s\n", strings.TrimPrefix(u.name, "Percentage of Total"))
	} else {
		fmt.Fprintf(w, "%s %s - %s\n", title, stamp(p.start), stamp(p.end.Add(-time.Second)))
		what := "CPU"
		if len(tres) > 1 || tres[0] != "cpu" {
			what = "TRES"
		}
		if u.percent {
			fmt.Fprintf(w, "Usage reported in Percentage of Total\n")
		} else {
			fmt.Fprintf(w, "Usage reported in %s %s\n", what, u.name)
		}
	}
	fmt.Fprintln(w, line)
}

// data is what the reports compute from.
type data struct {
	p     *params
	db    *model.AcctDB
	jobs  []*acct.Job
	nodes []*model.Node
	unit  unit
	tres  string
	now   int64
}

// used is a job's TRES-seconds inside the window.
func (d *data) used(j *acct.Job) float64 {
	if j.Start == 0 {
		return 0
	}
	end := j.End
	if end == 0 {
		end = d.now
	}
	s, e := max(j.Start, d.p.start.Unix()), min(end, d.p.end.Unix())
	if e <= s {
		return 0
	}
	return float64(e-s) * float64(tresCount(j, d.tres))
}

// tresCount is how many of a TRES a job holds ("cpu", "gres/gpu", "node").
func tresCount(j *acct.Job, name string) int64 {
	for _, kv := range strings.Split(j.AllocTRES, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if ok && k == name {
			n, _ := strconv.ParseInt(strings.TrimRight(v, "KMGTP"), 10, 64)
			return n
		}
	}
	if name == "cpu" {
		return int64(j.NCPUs)
	}
	return 0
}

// capacity is the cluster's TRES-seconds over the window.
func (d *data) capacity() float64 {
	var n int64
	for _, node := range d.nodes {
		switch {
		case d.tres == "cpu":
			n += int64(node.CPUs)
		case d.tres == "node":
			n++
		case strings.HasPrefix(d.tres, "gres/gpu"):
			items, _ := model.ParseGres(node.Gres)
			n += int64(model.GPUCount(items, strings.TrimPrefix(strings.TrimPrefix(d.tres, "gres/gpu"), ":")))
		}
	}
	return float64(n) * d.p.end.Sub(d.p.start).Seconds()
}

func (d *data) total() float64 {
	var t float64
	for _, j := range d.jobs {
		t += d.used(j)
	}
	return t
}

func clusterName(d *data) string {
	if len(d.db.Clusters) > 0 {
		return d.db.Clusters[0]
	}
	return ""
}

var clusterUtilHead = []column{{"Cluster", 9}, {"Allocated", 13}, {"Down", 9}, {"PLND Down", 9}, {"Idle", 13}, {"Planned", 9}, {"Reported", 13}}

func clusterUtil(d *data) [][]string {
	byCluster := map[string]float64{}
	for _, j := range d.jobs {
		byCluster[j.Cluster] += d.used(j)
	}
	if len(byCluster) == 0 {
		byCluster[clusterName(d)] = 0
	}
	var rows [][]string
	for _, c := range sortedKeys(byCluster) {
		total := d.capacity()
		alloc := min(byCluster[c], total)
		u := d.unit
		rows = append(rows, []string{c, u.value(alloc, total), u.value(0, total), u.value(0, total),
			u.value(total-alloc, total), u.value(0, total), u.value(total, total)})
	}
	return rows
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func properName(login string) string {
	u, err := user.Lookup(login)
	if err != nil {
		return ""
	}
	name, _, _ := strings.Cut(u.Name, ",")
	return name
}
