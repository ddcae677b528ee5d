// Package sprio is the sprio command: the factors that make up each
// pending job's multifactor priority, in Slurm 22.05's layout.
package sprio

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math"

	"slices"
	"strconv"
	"strings"

	"github.com/drover-hpc/drover/internal/nss"

	"github.com/drover-hpc/drover/internal/cli"
	"github.com/drover-hpc/drover/internal/cli/stdflag"
)

const usageText = "Usage: sprio [-j jid[s]] [-u user_name[s]] [-p partition[s]] [-o format] [-lhnvVw]\n"

// column is one field: its header, width (negative: left-aligned) and
// value.
type column struct {
	head  string
	width int
	val   func(j *cli.JobPriority) string
}

// Run is the sprio command.
func Run(ctx context.Context, env *cli.Env, args []string) int {
	fs, sf := stdflag.New("sprio")
	var long, noHeader, norm, weights bool
	var jobs, users, parts, format string
	fs.BoolVarP(&long, "long", "l", false, "")
	fs.BoolVarP(&noHeader, "noheader", "h", false, "")
	fs.BoolVarP(&norm, "norm", "n", false, "")
	fs.BoolVarP(&weights, "weights", "w", false, "")
	fs.StringVarP(&jobs, "jobs", "j", "", "")
	fs.StringVarP(&users, "user", "u", "", "")
	fs.StringVarP(&parts, "partition", "p", "", "")
	fs.StringVarP(&format, "format", "o", "", "")
	fs.StringP("cluster", "M", "", "")
	if code, done := stdflag.Parse(env, fs, sf, args, usageText, usageText); done {
		return code
	}
	c, err := env.Client()
	if err != nil {
		env.Errorf("%v", err)
		return env.ExitError()
	}
	info, err := c.Priorities(ctx)
	if err != nil {
		env.Errorf("%v", err)
		return env.ExitError()
	}
	if !info.Multifactor {
		fmt.Fprintln(env.Stderr, "You are not running a supported priority plugin")
		fmt.Fprintln(env.Stderr, "(priority/basic).")
		fmt.Fprintln(env.Stderr, "Only 'priority/multifactor' is supported.")
		return 1
	}
	sel := filter(info.Jobs, jobs, users, parts)
	w := bufio.NewWriter(env.Stdout)
	defer w.Flush()
	if format == "" {
		format = env.Getenv("SPRIO_FORMAT")
	}
	if format != "" && !weights {
		prefix, fields, err := parseFormat(info, format)
		if err != nil {
			env.Errorf("%v", err)
			return 1
		}
		writeFormatted(w, prefix, fields, sel, noHeader)
		return 0
	}
	cols := columns(info, long, norm)
	if !noHeader {
		writeRow(w, cols, func(c column) string { return c.head })
	}
	if weights {
		writeWeights(w, info, cols, norm)
		return 0
	}
	for i := range sel {
		j := &sel[i]
		writeRow(w, cols, func(c column) string { return c.val(j) })
	}
	return 0
}

func writeRow(w io.Writer, cols []column, cell func(column) string) {
	var b strings.Builder
	for i, c := range cols {
		if i > 0 {
			b.WriteByte(' ')
		}
		v := cell(c)
		if c.width < 0 {
			fmt.Fprintf(&b, "%-*.*s", -c.width, -c.width, v)
		} else {
			fmt.Fprintf(&b, "%*.*s", c.width, c.width, v)
		}
	}
	fmt.Fprintln(w, b.String())
}

// columns are Slurm's default set (weighted values, factors whose weight
// is zero left out) or -l's full set; -n prints the factors themselves.
func columns(info *cli.PriorityInfo, long, norm bool) []column {
	weighted := func(f func(*cli.JobPriority) float64, w uint32) func(*cli.JobPriority) string {
		if norm {
			return func(j *cli.JobPriority) string { return fmt.Sprintf("%.7f", f(j)) }
		}
		return func(j *cli.JobPriority) string { return strconv.FormatInt(int64(math.Round(f(j)*float64(w))), 10) }
	}
	width := 10
	if norm {
		width = -10
	}
	cols := []column{{"JOBID", 15, func(j *cli.JobPriority) string { return j.ID }},
		{"PARTITION", -9, func(j *cli.JobPriority) string { return j.Partition }}}
	if long {
		cols = append(cols, column{"USER", 8, func(j *cli.JobPriority) string { return j.User }})
	}
	prio := column{"PRIORITY", 10, func(j *cli.JobPriority) string { return strconv.FormatUint(uint64(j.Priority), 10) }}
	if norm {
		prio = column{"PRIORITY", -10, func(j *cli.JobPriority) string { return fmt.Sprintf("%.8f", float64(j.Priority)/math.MaxUint32) }}
	}
	cols = append(cols, prio)
	if !norm {
		cols = append(cols, column{"SITE", 10, func(*cli.JobPriority) string { return "0" }})
	}
	factor := func(head string, w uint32, f func(*cli.JobPriority) float64) {
		if long || w > 0 {
			cols = append(cols, column{head, width, weighted(f, w)})
		}
	}
	factor("AGE", info.WAge, func(j *cli.JobPriority) float64 { return j.Age })
	if long {
		cols = append(cols, column{"ASSOC", width, func(*cli.JobPriority) string { return zero(norm) }})
	}
	factor("FAIRSHARE", info.WFairShare, func(j *cli.JobPriority) float64 { return j.FairShare })
	factor("JOBSIZE", info.WJobSize, func(j *cli.JobPriority) float64 { return j.JobSize })
	factor("PARTITION", info.WPart, func(j *cli.JobPriority) float64 { return j.Part })
	factor("QOS", info.WQOS, func(j *cli.JobPriority) float64 { return j.QOS })
	if long {
		cols = append(cols, column{"NICE", 11, func(j *cli.JobPriority) string { return strconv.Itoa(j.Nice) }})
	}
	if long || info.WTRES != "" {
		cols = append(cols, column{"TRES", 20, func(j *cli.JobPriority) string { return tres(j, norm) }})
	}
	return cols
}

// tres is the TRES column: name=value for each weighted TRES that adds
// something, what it adds (%.0f) or with -n its factor (%.2f).
func tres(j *cli.JobPriority, norm bool) string {
	var b strings.Builder
	for i, t := range j.TRES {
		if i > 0 {
			b.WriteByte(',')
		}
		if norm {
			fmt.Fprintf(&b, "%s=%.2f", t.Name, t.Factor)
		} else {
			fmt.Fprintf(&b, "%s=%.0f", t.Name, t.Weighted)
		}
	}
	return b.String()
}

func zero(norm bool) string {
	if norm {
		return "0.0000000"
	}
	return "0"
}

// writeWeights is -w: the configured weights under the columns.
func writeWeights(w io.Writer, info *cli.PriorityInfo, cols []column, norm bool) {
	weight := map[string]uint32{"AGE": info.WAge, "FAIRSHARE": info.WFairShare, "JOBSIZE": info.WJobSize, "QOS": info.WQOS}
	seenPart := false
	writeRow(w, cols, func(c column) string {
		switch c.head {
		case "JOBID":
			return "Weights"
		case "SITE":
			return "1"
		case "PARTITION":
			if !seenPart {
				seenPart = true
				return ""
			}
			return strconv.FormatUint(uint64(info.WPart), 10)
		}
		if v, ok := weight[c.head]; ok {
			return strconv.FormatUint(uint64(v), 10)
		}
		if c.head == "TRES" {
			return info.WTRES
		}
		return ""
	})
}

// filter keeps the jobs -j, -u and -p select, in job id order.
func filter(jobs []cli.JobPriority, ids, users, parts string) []cli.JobPriority {
	split := func(s string) []string {
		if s == "" {
			return nil
		}
		return strings.Split(s, ",")
	}
	idList, userList, partList := split(ids), split(users), split(parts)
	var uids []uint32
	for _, u := range userList {
		if n, err := strconv.ParseUint(u, 10, 32); err == nil {
			uids = append(uids, uint32(n))
		} else if pu, err := nss.Lookup(u); err == nil {
			n, _ := strconv.ParseUint(pu.Uid, 10, 32)
			uids = append(uids, uint32(n))
		}
	}
	var out []cli.JobPriority
	for _, j := range jobs {
		if len(idList) > 0 && !slices.Contains(idList, j.ID) && !slices.Contains(idList, strconv.FormatUint(uint64(j.JobID), 10)) {
			continue
		}
		if len(userList) > 0 && !slices.Contains(uids, j.UID) && !slices.Contains(userList, j.User) {
			continue
		}
		if len(partList) > 0 && !slices.Contains(partList, j.Partition) {
			continue
		}
		out = append(out, j)
	}
	slices.SortFunc(out, func(a, b cli.JobPriority) int { return int(a.JobID) - int(b.JobID) })
	return out
}
