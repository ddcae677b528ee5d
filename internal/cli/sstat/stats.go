package sstat

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"github.com/drover-hpc/drover/internal/cli"
	"github.com/drover-hpc/drover/internal/hostlist"
	"github.com/drover-hpc/drover/internal/model"
)

// row is one output line: a step with its nodes' reports merged, or (with
// -i) one node of a step.
type row struct {
	id     string // "7.0", "7.batch"
	nodes  string // the nodes that reported, as a host list
	pids   string
	ntasks int
	stats  *stepStats // nil when nothing was measured
}

// extreme is a figure with where it was found: the node, and the first
// task there (-1 when not known).
type extreme struct {
	v    int64
	node string
	task int
}

// stepStats are a step's figures, derived from its nodes' reports (see
// the package comment). CPU times are microseconds, memory bytes.
type stepStats struct {
	maxRSS, minRSS extreme
	aveRSS, totRSS int64
	maxCPU, minCPU extreme // per task
	aveCPU, totCPU int64
}

// firstTask is the lowest task rank the step has on node, or -1.
func firstTask(s *model.Step, node string) int {
	if s == nil {
		return -1
	}
	if n, _, ok := s.LayoutOn(node); ok && len(n.Tasks) > 0 {
		first := n.Tasks[0]
		for _, t := range n.Tasks {
			first = min(first, t)
		}
		return first
	}
	return -1
}

// stepID is a step's id as sstat prints it: the job's own id (an array
// task's too), a dot, and the step ("batch", "extern", a number).
func stepID(job model.JobID, step model.StepID) string {
	return strconv.FormatUint(uint64(job), 10) + "." + step.String()
}

// orderByLayout puts the reports in the step's node order (unknown nodes
// last, by name).
func orderByLayout(stats []cli.StepStat, s *model.Step) []cli.StepStat {
	pos := func(node string) int {
		if s != nil {
			if _, i, ok := s.LayoutOn(node); ok {
				return i
			}
		}
		return 1 << 30
	}
	out := slices.Clone(stats)
	slices.SortStableFunc(out, func(a, b cli.StepStat) int {
		if c := cmp.Compare(pos(a.Node), pos(b.Node)); c != 0 {
			return c
		}
		return strings.Compare(a.Node, b.Node)
	})
	return out
}

// stepRow merges one step's node reports into a row.
func stepRow(job model.JobID, id model.StepID, s *model.Step, stats []cli.StepStat) row {
	r := row{id: stepID(job, id)}
	var nodes, pids []string
	var st stepStats
	var merged model.Usage // for the sample-weighted mean memory use
	for _, x := range orderByLayout(stats, s) {
		nodes = append(nodes, x.Node)
		for _, p := range x.Pids {
			pids = append(pids, strconv.Itoa(p))
		}
		r.ntasks += x.NTasks
		u := x.Usage
		first := firstTask(s, x.Node)
		merged.Merge(x.Node, &u)
		if u.MaxRSS > st.maxRSS.v || st.maxRSS.node == "" {
			st.maxRSS = extreme{u.MaxRSS, x.Node, first}
		}
		if u.MaxRSS < st.minRSS.v || st.minRSS.node == "" {
			st.minRSS = extreme{u.MaxRSS, x.Node, first}
		}
		st.totRSS += u.MaxRSS
		cpu := u.TotalCPU()
		st.totCPU += cpu
		per := cpu / int64(max(1, x.NTasks))
		if per > st.maxCPU.v || st.maxCPU.node == "" {
			st.maxCPU = extreme{per, x.Node, first}
		}
		if per < st.minCPU.v || st.minCPU.node == "" {
			st.minCPU = extreme{per, x.Node, first}
		}
	}
	r.nodes = hostlist.Compress(nodes)
	r.pids = strings.Join(pids, ",")
	if len(nodes) > 0 {
		st.aveRSS = merged.AveRSS
		st.aveCPU = st.totCPU / int64(max(1, r.ntasks))
		r.stats = &st
	}
	return r
}

// pidRows is -i: one row per node of the step, with its processes.
func pidRows(job model.JobID, id model.StepID, s *model.Step, stats []cli.StepStat) []row {
	var out []row
	for _, x := range orderByLayout(stats, s) {
		pids := make([]string, len(x.Pids))
		for i, p := range x.Pids {
			pids[i] = strconv.Itoa(p)
		}
		out = append(out, row{id: stepID(job, id), nodes: x.Node, pids: strings.Join(pids, ",")})
	}
	return out
}
