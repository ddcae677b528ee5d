package sstat

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/drover-hpc/drover/internal/cli"
	"github.com/drover-hpc/drover/internal/model"
)

// defaultFields is sstat's column list when -o is not given.
const defaultFields = "JobID,MaxVMSize,MaxVMSizeNode,MaxVMSizeTask,AveVMSize,MaxRSS,MaxRSSNode,MaxRSSTask,AveRSS," +
	"MaxPages,MaxPagesNode,MaxPagesTask,AvePages,MinCPU,MinCPUNode,MinCPUTask,AveCPU,NTasks,AveCPUFreq," +
	"ReqCPUFreqMin,ReqCPUFreqMax,ReqCPUFreqGov,ConsumedEnergy,MaxDiskRead,MaxDiskReadNode,MaxDiskReadTask," +
	"AveDiskRead,MaxDiskWrite,MaxDiskWriteNode,MaxDiskWriteTask,AveDiskWrite,TRESUsageInAve,TRESUsageInMax," +
	"TRESUsageInMaxNode,TRESUsageInMaxTask,TRESUsageInMin,TRESUsageInMinNode,TRESUsageInMinTask,TRESUsageInTot," +
	"TRESUsageOutAve,TRESUsageOutMax,TRESUsageOutMaxNode,TRESUsageOutMaxTask,TRESUsageOutMin,TRESUsageOutMinNode," +
	"TRESUsageOutMinTask,TRESUsageOutTot"

// pidFields is -i/--pidformat.
const pidFields = "JobID,Nodelist,Pids"

type options struct {
	jobs                       string
	fields                     string
	allSteps, noHeader         bool
	parsable, parsable2        bool
	noConvert, pidFormat       bool
	help, usage, version, hfmt bool
	verbose                    int
}

// Run is the sstat command.
func Run(ctx context.Context, env *cli.Env, args []string) int {
	o := &options{}
	fs := pflag.NewFlagSet("sstat", pflag.ContinueOnError)
	fs.SetOutput(discard{})
	fs.BoolVarP(&o.allSteps, "allsteps", "a", false, "")
	fs.StringVarP(&o.fields, "format", "o", "", "")
	fs.StringVar(&o.fields, "fields", "", "")
	fs.BoolVarP(&o.hfmt, "helpformat", "e", false, "")
	fs.BoolVarP(&o.help, "help", "h", false, "")
	fs.BoolVarP(&o.pidFormat, "pidformat", "i", false, "")
	fs.StringVarP(&o.jobs, "jobs", "j", "", "")
	fs.BoolVarP(&o.noHeader, "noheader", "n", false, "")
	fs.BoolVar(&o.noConvert, "noconvert", false, "")
	fs.BoolVarP(&o.parsable, "parsable", "p", false, "")
	fs.BoolVarP(&o.parsable2, "parsable2", "P", false, "")
	fs.BoolVar(&o.usage, "usage", false, "")
	fs.CountVarP(&o.verbose, "verbose", "v", "")
	fs.BoolVarP(&o.version, "version", "V", false, "")
	if err := fs.Parse(args); err != nil {
		env.Errorf("%v", err)
		fmt.Fprintf(env.Stderr, "Try \"sstat --help\" for more information\n")
		return env.ExitError()
	}
	switch {
	case o.version:
		fmt.Fprintf(env.Stdout, "slurm %s\n", env.Version)
		return 0
	case o.help || o.usage:
		fmt.Fprint(env.Stdout, usageText)
		return 0
	case o.hfmt:
		printFieldNames(env)
		return 0
	}
	if o.jobs == "" && fs.NArg() > 0 {
		o.jobs = strings.Join(fs.Args(), ",")
	}
	if o.jobs == "" {
		env.Errorf("You didn't give me any jobs to stat.")
		return env.ExitError()
	}
	list := o.fields
	switch {
	case o.pidFormat:
		list = pidFields
	case list == "":
		list = defaultFields
	}
	cols, err := parseFields(list)
	if err != nil {
		env.Errorf("%v", err)
		return env.ExitError()
	}
	c, err := env.Client()
	if err != nil {
		env.Errorf("%v", err)
		return env.ExitError()
	}
	var rows []row
	status := 0
	for _, target := range strings.Split(o.jobs, ",") {
		job, step, hasStep, err := parseTarget(target)
		if err != nil {
			env.Errorf("Invalid job id %s", target)
			status = env.ExitError()
			continue
		}
		stats, failed, err := c.StepStats(ctx, job, step, hasStep)
		if err != nil {
			env.Errorf("couldn't get steps for job %s: %v", target, err)
			status = env.ExitError()
			continue
		}
		for _, n := range failed {
			env.Errorf("node %s did not answer for job %d", n, job)
		}
		got := aggregate(stats)
		if !hasStep && !o.allSteps && len(got) > 1 {
			got = got[:1] // the lowest running step, as sstat does
		}
		rows = append(rows, got...)
	}
	w := &writer{cols: cols, o: o}
	out := w.render(rows)
	_, _ = env.Stdout.Write(out)
	return status
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// parseTarget reads JOB, JOB.STEP or JOB.batch.
func parseTarget(s string) (model.JobID, model.StepID, bool, error) {
	s = strings.TrimSpace(s)
	jobPart, stepPart, hasStep := strings.Cut(s, ".")
	id, err := strconv.ParseUint(jobPart, 10, 32)
	if err != nil || id == 0 {
		return 0, 0, false, fmt.Errorf("bad job id")
	}
	if !hasStep {
		return model.JobID(id), 0, false, nil
	}
	step, ok := model.ParseStepID(stepPart)
	if !ok {
		return 0, 0, false, fmt.Errorf("bad step id")
	}
	return model.JobID(id), step, true, nil
}

// row is one step: its nodes' reports merged.
type row struct {
	job    model.JobID
	step   model.StepID
	nodes  []string
	ntasks int
	pids   []string
	usage  model.Usage
}

// aggregate merges the nodes' reports per step, steps in id order with
// the batch step first (the lowest: Slurm numbers it below the others).
func aggregate(stats []cli.StepStat) []row {
	by := map[model.StepID]*row{}
	var order []model.StepID
	for _, s := range stats {
		r := by[s.Step]
		if r == nil {
			r = &row{job: s.Job, step: s.Step}
			by[s.Step] = r
			order = append(order, s.Step)
		}
		r.nodes = append(r.nodes, s.Node)
		r.ntasks += s.NTasks
		for _, p := range s.Pids {
			r.pids = append(r.pids, strconv.Itoa(p))
		}
		u := s.Usage
		r.usage.Merge(s.Node, &u)
	}
	slices.Sort(order)
	out := make([]row, 0, len(order))
	for _, id := range order {
		r := by[id]
		sort.Strings(r.nodes)
		out = append(out, *r)
	}
	return out
}

const usageText = `Usage: sstat [OPTIONS] -j <job(.stepid)>
    Use --help for help
      -a, --allsteps:
	                   Print all steps for the given job(s) when no step is
	                   specified.
      -e, --helpformat:
	                   Print a list of fields that can be specified with the
	                   '--format' option
      -h, --help:      Print this description of use.
      -i, --pidformat:
	                   Predefined format to list the pids running for each
	                   job step.  (JobId,Nodes,Pids)
      -j, --jobs:
	                   Format is <job(.step)>. Stat this job step
	                   or comma-separated list of job steps. This option is
	                   required.
      -n, --noheader:
	                   No header will be added to the beginning of output.
	                   The default is to print a header.
      --noconvert:
	                   Don't convert units from their original type
	                   (e.g. 2048M won't be converted to 2G).
      -o, --format:
	                   Comma separated list of fields. (use
	                   "--helpformat" for a list of available fields).
      -p, --parsable: output will be '|' delimited with a '|' at the end
      -P, --parsable2: output will be '|' delimited without a '|' at the end
      --usage:         Display brief usage message.
      -v, --verbose:
	                   Primarily for debugging purposes, report the state of
	                   various variables during processing.
      -V, --version:   Print version.
`
