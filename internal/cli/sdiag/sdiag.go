package sdiag

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/drover-hpc/drover/internal/cli"
	"github.com/drover-hpc/drover/internal/cli/stdflag"
)

const usageText = "Usage: sdiag [-M cluster] [-aritT]\n"

const helpText = `Usage: sdiag [OPTIONS]
  -a, --all             all statistics
  -M, --cluster=NAME    cluster to query (the local one)
  -r, --reset           reset statistics
  -i, --sort-by-id      sort RPCs by name
  -t, --sort-by-time    sort RPCs by total time
  -T, --sort-by-time2   sort RPCs by average time

Help options:
  --help                show this help message
  --usage               display brief usage message
  -V, --version         display the version
`

// Run is the sdiag command.
func Run(ctx context.Context, env *cli.Env, args []string) int {
	fs, sf := stdflag.New("sdiag")
	var all, reset, byID, byTime, byTime2 bool
	var clusters string
	fs.BoolVarP(&all, "all", "a", false, "")
	fs.BoolVarP(&reset, "reset", "r", false, "")
	fs.BoolVarP(&byID, "sort-by-id", "i", false, "")
	fs.BoolVarP(&byTime, "sort-by-time", "t", false, "")
	fs.BoolVarP(&byTime2, "sort-by-time2", "T", false, "")
	fs.StringVarP(&clusters, "cluster", "M", "", "")
	if code, done := stdflag.Parse(env, fs, sf, args, helpText, usageText); done {
		return code
	}
	c, err := env.Client()
	if err != nil {
		env.Errorf("%v", err)
		return env.ExitError()
	}
	d, err := c.Diag(ctx, reset)
	if err != nil {
		env.Errorf("%v", err)
		return env.ExitError()
	}
	if reset {
		fmt.Fprintln(env.Stdout, "Reset scheduling statistics")
		return 0
	}
	order := "count"
	switch {
	case byID:
		order = "name"
	case byTime:
		order = "time"
	case byTime2:
		order = "average"
	}
	w := bufio.NewWriter(env.Stdout)
	report(w, d, order)
	_ = w.Flush()
	return 0
}

// stamp is sdiag's time: ctime's form and the epoch seconds.
func stamp(unix int64) string {
	return fmt.Sprintf("%s (%d)", time.Unix(unix, 0).Format(time.ANSIC), unix)
}

func report(w io.Writer, d *cli.DiagInfo, order string) {
	stars := strings.Repeat("*", 55)
	fmt.Fprintln(w, stars)
	fmt.Fprintf(w, "sdiag output at %s\n", stamp(d.Now))
	fmt.Fprintf(w, "Data since      %s\n", stamp(d.Since))
	fmt.Fprintln(w, stars)
	fmt.Fprintf(w, "Server thread count:  %d\n", d.ServerThreads)
	fmt.Fprintf(w, "Agent queue size:     0\n")
	fmt.Fprintf(w, "Agent count:          0\n")
	fmt.Fprintf(w, "Agent thread count:   0\n")
	if !d.AcctDisabled {
		fmt.Fprintf(w, "DBD Agent queue size: %d\n", d.AcctBacklog)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "Jobs submitted: %d\n", d.JobsSubmitted)
	fmt.Fprintf(w, "Jobs started:   %d\n", d.JobsStarted)
	fmt.Fprintf(w, "Jobs completed: %d\n", d.JobsCompleted)
	fmt.Fprintf(w, "Jobs canceled:  %d\n", d.JobsCanceled)
	fmt.Fprintf(w, "Jobs failed:    %d\n", d.JobsFailed)
	fmt.Fprintln(w)
	fmt.Fprintf(w, "Job states ts:  %s\n", stamp(d.Now))
	fmt.Fprintf(w, "Jobs pending:   %d\n", d.JobsPending)
	fmt.Fprintf(w, "Jobs running:   %d\n", d.JobsRunning)
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Main schedule statistics (microseconds):")
	fmt.Fprintf(w, "\tLast cycle:   %d\n", d.SchedLast)
	fmt.Fprintf(w, "\tMax cycle:    %d\n", d.SchedMax)
	fmt.Fprintf(w, "\tTotal cycles: %d\n", d.SchedCycles)
	if d.SchedCycles > 0 {
		fmt.Fprintf(w, "\tMean cycle:   %d\n", d.SchedTotal/int64(d.SchedCycles))
		fmt.Fprintf(w, "\tMean depth cycle:  %d\n", d.SchedDepthSum/d.SchedCycles)
	}
	if mins := (d.Now - d.SchedSince) / 60; mins > 0 {
		fmt.Fprintf(w, "\tCycles per minute: %d\n", int64(d.SchedCycles)/mins)
	}
	fmt.Fprintf(w, "\tLast queue length: %d\n", d.SchedLastQueue)
	fmt.Fprintln(w)
	fmt.Fprintf(w, "Latency for 1000 calls to gettimeofday(): %d microseconds\n", clockLatency())
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Remote Procedure Call statistics by message type")
	for _, s := range sorted(d.RPCByType, order) {
		fmt.Fprintf(w, "\t%-40s count:%-6d ave_time:%-6d total_time:%d\n", s.Name, s.Count, avg(s), s.TotalUs)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Remote Procedure Call statistics by user")
	for _, s := range sorted(d.RPCByUser, order) {
		fmt.Fprintf(w, "\t%-16s(%8d) count:%-6d ave_time:%-6d total_time:%d\n", s.Name, s.UID, s.Count, avg(s), s.TotalUs)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Pending RPC statistics")
	fmt.Fprintln(w, "\tNo pending RPCs")
}

func avg(s cli.RPCStat) int64 {
	if s.Count == 0 {
		return 0
	}
	return s.TotalUs / int64(s.Count)
}

// sorted orders RPC lines: by count (the default), name, total or
// average time, largest first.
func sorted(in []cli.RPCStat, order string) []cli.RPCStat {
	out := append([]cli.RPCStat(nil), in...)
	sort.SliceStable(out, func(a, b int) bool {
		x, y := out[a], out[b]
		switch order {
		case "name":
			return x.Name < y.Name
		case "time":
			return x.TotalUs > y.TotalUs
		case "average":
			return avg(x) > avg(y)
		}
		return x.Count > y.Count
	})
	return out
}

// clockLatency measures 1000 reads of the clock, as sdiag does.
func clockLatency() int64 {
	t0 := time.Now()
	var last time.Time
	for range 1000 {
		last = time.Now()
	}
	return last.Sub(t0).Microseconds()
}
