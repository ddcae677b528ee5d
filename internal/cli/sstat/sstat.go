package sstat

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/drover-hpc/drover/internal/cli"
	"github.com/drover-hpc/drover/internal/model"
)

// options is the parsed command line.
type options struct {
	fields    []string // -o lists and -i's, in the order given
	sels      []selection
	allSteps  bool
	noHeader  bool
	noConvert bool
	pidFormat bool
	mode      int // aligned, parsable (-p), parsable2 (-P): the last given
	help      int // 1 -h, 2 -e, 3 --usage: the last given
	verbose   int
	fatal     string // a job list sstat cannot read
}

// errStop ends the option scan early: -V, or a job list that cannot be
// read (Slurm acts on both as getopt meets them).
var errStop = errors.New("stop")

// value is a pflag.Value running set for each occurrence.
type value func(string) error

func (v value) Set(s string) error { return v(s) }
func (v value) String() string     { return "" }
func (v value) Type() string       { return "string" }

func newFlagSet(o *options, version *bool) *pflag.FlagSet {
	fs := pflag.NewFlagSet("sstat", pflag.ContinueOnError)
	fs.SetOutput(discard{})
	fs.Usage = func() {}
	flag := func(name, short string, v value, hasArg bool) {
		f := fs.VarPF(v, name, short, "")
		if !hasArg {
			f.NoOptDefVal = "true"
		}
	}
	fs.BoolVarP(&o.allSteps, "allsteps", "a", false, "")
	fields := value(func(s string) error { o.fields = append(o.fields, s); return nil })
	flag("format", "o", fields, true)
	flag("fields", "", fields, true)
	flag("helpformat", "e", func(string) error { o.help = 2; return nil }, false)
	flag("help", "h", func(string) error { o.help = 1; return nil }, false)
	flag("usage", "", func(string) error { o.help = 3; return nil }, false)
	flag("pidformat", "i", func(string) error {
		o.pidFormat = true
		o.fields = append(o.fields, pidFields)
		return nil
	}, false)
	flag("jobs", "j", func(s string) error { return o.addJobs(s) }, true)
	fs.BoolVarP(&o.noHeader, "noheader", "n", false, "")
	fs.BoolVar(&o.noConvert, "noconvert", false, "")
	flag("parsable", "p", func(string) error { o.mode = parsable; return nil }, false)
	flag("parsable2", "P", func(string) error { o.mode = parsable2; return nil }, false)
	fs.CountVarP(&o.verbose, "verbose", "v", "")
	flag("version", "V", func(string) error { *version = true; return errStop }, false)
	return fs
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// Run is the sstat command.
func Run(ctx context.Context, env *cli.Env, args []string) int {
	o := &options{}
	version := false
	fs := newFlagSet(o, &version)
	err := fs.Parse(args)
	switch {
	case version:
		fmt.Fprintf(env.Stdout, "slurm %s\n", env.Version)
		return 0
	case o.fatal != "":
		fmt.Fprintf(env.Stderr, "%s: fatal: %s\n", env.Prog, o.fatal)
		return 1
	case err != nil:
		fmt.Fprintf(env.Stderr, "%s: %s\n", env.Prog, cli.GetoptMessage(err))
		return 1
	}
	switch o.help {
	case 1:
		fmt.Fprint(env.Stdout, helpText)
		return 0
	case 2:
		fmt.Fprint(env.Stdout, helpFields())
		return 0
	case 3:
		fmt.Fprint(env.Stdout, usageText)
		return 0
	}
	if fs.NArg() > 0 { // like Slurm, the first operand only
		if o.addJobs(fs.Arg(0)); o.fatal != "" {
			fmt.Fprintf(env.Stderr, "%s: fatal: %s\n", env.Prog, o.fatal)
			return 1
		}
	}
	list := strings.Join(o.fields, ",")
	if list == "" {
		list = defaultFields
	}
	cols, err := parseFields(list)
	if err != nil {
		env.Errorf("%v", err)
		return 1
	}
	if len(o.sels) == 0 {
		env.Errorf("You didn't give me any jobs to stat.")
		return 1
	}
	c, err := env.Client()
	if err != nil {
		env.Errorf("%v", err)
		return env.ExitError()
	}
	if !o.noHeader {
		_, _ = env.Stdout.Write(header(cols, o.mode))
	}
	s := &stater{ctx: ctx, env: env, c: c, o: o, cols: cols}
	for _, sel := range o.sels {
		s.stat(sel)
	}
	return 0
}

// selection is one job or step of the -j list.
type selection struct {
	job     model.JobID // the job, or the array's id when task >= 0
	task    int         // array task, -1 for none
	step    model.StepID
	hasStep bool
}

// addJobs reads a -j list: JOB[_TASK][.STEP], STEP a number, batch,
// extern or interactive; repeats are dropped. A word sstat cannot read
// sets o.fatal with Slurm's words for it.
func (o *options) addJobs(list string) error {
	for _, w := range strings.Split(list, ",") {
		if w = strings.TrimSpace(w); w == "" {
			continue
		}
		if w[0] < '0' || w[0] > '9' {
			o.fatal = "Bad job/step specified: " + w
			return errStop
		}
		sel := selection{task: -1}
		name, stepPart, hasStep := strings.Cut(w, ".")
		if hasStep {
			stepPart, _, _ = strings.Cut(stepPart, "+") // a hetjob component: Drover has none
			id, ok := model.ParseStepID(stepPart)
			if !ok {
				o.fatal = "Bad step specified: " + name
				return errStop
			}
			sel.step, sel.hasStep = id, true
		}
		if base, task, ok := strings.Cut(name, "_"); ok {
			if task == "" || task[0] < '0' || task[0] > '9' {
				o.fatal = "Bad job array element specified: " + base
				return errStop
			}
			sel.task, name = atoi(task), base
		}
		sel.job = model.JobID(atoi(name))
		dup := false
		for _, s := range o.sels {
			dup = dup || s == sel
		}
		if !dup {
			o.sels = append(o.sels, sel)
		}
	}
	return nil
}

// stater runs the selections against the controller.
type stater struct {
	ctx  context.Context
	env  *cli.Env
	c    cli.Client
	o    *options
	cols []column
}

// stat prints the rows of one selection: its step, its lowest numbered
// running step, or (-a) all its running steps.
func (s *stater) stat(sel selection) {
	env := s.env
	j := s.findJob(sel)
	if j == nil {
		return
	}
	steps := j.ActiveSteps()
	var chosen []*model.Step
	switch {
	case sel.hasStep:
		for _, st := range steps {
			if st.ID == sel.step {
				chosen = append(chosen, st)
			}
		}
		if len(chosen) == 0 {
			env.Errorf("StepId=%d.%s not found running.", sel.job, sel.step)
			return
		}
	case len(steps) == 0:
		env.Errorf("No steps running for job %d", sel.job)
		return
	case s.o.allSteps:
		chosen = steps
	default: // the lowest numbered step; none when only batch and the like run
		for _, st := range steps {
			if st.ID >= 0 && (len(chosen) == 0 || st.ID < chosen[0].ID) {
				chosen = []*model.Step{st}
			}
		}
		if len(chosen) == 0 {
			return
		}
	}
	one := len(chosen) == 1
	stats, failed, err := s.c.StepStats(s.ctx, j.ID, chosen[0].ID, one)
	if err != nil {
		if !stepGone(err) {
			what := "JobId=" + strconv.FormatUint(uint64(j.ID), 10)
			if one {
				what = "StepId=" + stepID(j.ID, chosen[0].ID)
			}
			env.Errorf("problem getting step_layout for %s: %v", what, err)
		}
		return
	}
	for _, n := range failed {
		env.Errorf("slurm_job_step_stat: there was an error with the request to %s rc = %s", n, msgTimeout)
	}
	var out []byte
	for _, st := range chosen {
		var mine []cli.StepStat
		for _, x := range stats {
			if x.Step == st.ID {
				mine = append(mine, x)
			}
		}
		if s.o.pidFormat {
			for _, r := range pidRows(j.ID, st.ID, st, mine) {
				out = append(out, line(s.cols, &r, s.o)...)
			}
			continue
		}
		if len(mine) == 0 && len(failed) > 0 {
			continue // nothing answered for it: said above
		}
		r := stepRow(j.ID, st.ID, st, mine)
		out = append(out, line(s.cols, &r, s.o)...)
	}
	_, _ = env.Stdout.Write(out)
}

// findJob looks the selected job up with its steps; nil (and Slurm's
// complaint printed) when the controller does not know it.
func (s *stater) findJob(sel selection) *model.Job {
	q := cli.JobQuery{IDs: []model.JobID{sel.job}, IncludeAll: true, Summary: true, WithSteps: true}
	list, err := s.c.ListJobs(s.ctx, q)
	if err == nil {
		for _, j := range list.Jobs {
			if sel.task < 0 && j.ID == sel.job || sel.task >= 0 && j.ArrayJobID == sel.job && j.ArrayTaskID == sel.task {
				return j
			}
		}
	}
	s.env.Errorf("couldn't get steps for job %d", sel.job)
	if err != nil && s.o.verbose > 0 {
		s.env.Errorf("%v", err)
	}
	return nil
}

// stepGone reports the errors of a step or job that ended between the
// listing and the question: sstat says nothing of those.
func stepGone(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "Job step not found") || strings.Contains(msg, cli.MsgAlreadyDone) ||
		strings.Contains(msg, cli.MsgPendingHeld) || strings.Contains(msg, cli.MsgInvalidJobID)
}

// msgTimeout is Slurm's error for a node that did not answer in time.
const msgTimeout = "Socket timed out on send/recv operation"

const usageText = "Usage: sstat [options] -j <job(.stepid)>\n\tUse --help for help\n"

const helpText = `sstat [<OPTION>] -j <job(.stepid)>
    Show the resource usage of running job steps. <OPTION> is one of:
      -a, --allsteps     with a job id alone, show every running step of
                         the job rather than its lowest numbered one
      -e, --helpformat   list the field names --format accepts
      -h, --help         show this help
      -i, --pidformat    add the fields JobID,Nodelist,Pids: one line per
                         node of each step, with its processes
      -j, --jobs=LIST    the jobs or steps to show, comma separated:
                         JOB, JOB.STEP, JOB.batch, JOB.extern (required;
                         the first operand is read the same way)
      -n, --noheader     print no header lines
      --noconvert        print memory in bytes, unconverted
      -o, --format=LIST  the fields to show, comma separated; NAME%WIDTH
                         sets a width (negative: aligned left)
      -p, --parsable     separate fields with '|', one after the last too
      -P, --parsable2    separate fields with '|', none after the last
      --usage            show a short usage line
      -v, --verbose      say more about failures
      -V, --version      print the version

`
