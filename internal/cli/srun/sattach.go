package srun

import (
	"context"
	"fmt"
	"io"
	"strconv"

	"github.com/spf13/pflag"

	"github.com/drover-hpc/drover/internal/cli"
	"github.com/drover-hpc/drover/internal/jobspec"
	"github.com/drover-hpc/drover/internal/model"
)

// Sattach is the sattach command: it attaches to a running step's I/O
// (every task's output from now on; its input), through the same session
// srun uses.
func Sattach(ctx context.Context, env *cli.Env, args []string) int {
	fs := pflag.NewFlagSet("sattach", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	label := fs.BoolP("label", "l", false, "prepend task number to lines of stdout & stderr")
	layout := fs.Bool("layout", false, "print task layout info and exit")
	quiet := fs.BoolP("quiet", "Q", false, "quiet mode")
	inFilter := fs.String("input-filter", "", "send stdin to only the specified task")
	outFilter := fs.String("output-filter", "", "only print stdout from the specified task")
	errFilter := fs.String("error-filter", "", "only print stderr from the specified task")
	pty := fs.Bool("pty", false, "forward the step's terminal")
	help := fs.BoolP("help", "h", false, "show help")
	version := fs.BoolP("version", "V", false, "show version")
	fs.CountP("verbose", "v", "verbose")
	if err := fs.Parse(args); err != nil {
		env.Errorf("%v", err)
		fmt.Fprintln(env.Stderr, "Try \"sattach --help\" for more information")
		return 1
	}
	switch {
	case *help:
		fmt.Fprintf(env.Stdout, "Usage: sattach [options] <jobid.stepid>\n%s", fs.FlagUsages())
		return 0
	case *version:
		fmt.Fprintf(env.Stdout, "slurm %s\n", env.Version)
		return 0
	}
	_ = quiet
	if fs.NArg() != 1 {
		env.Errorf("Only one job step may be attached to at a time")
		return 1
	}
	ts, err := cli.ParseJobTargets(fs.Args())
	if err != nil || len(ts) != 1 || !ts[0].HasStep || ts[0].Step < 0 || ts[0].Tasks != nil {
		env.Errorf("Invalid job step: %s", fs.Arg(0))
		return 1
	}
	t := ts[0]
	c, err := env.Client()
	if err != nil {
		env.Errorf("%v", err)
		return 1
	}
	opts := &jobspec.Options{Spec: &model.JobSpec{}, Label: *label, Pty: *pty, Extra: map[string]string{}}
	if *inFilter != "" {
		opts.Input = *inFilter
	}
	s, err := newSession(env, c, opts, t.ID)
	if err != nil {
		env.Errorf("%v", err)
		return 1
	}
	defer s.ln.Close()
	s.outFilter, s.errFilter = filter(*outFilter), filter(*errFilter)
	if *layout {
		l, err := c.ListJobs(ctx, cli.JobQuery{IDs: []model.JobID{t.ID}})
		if err != nil || len(l.Jobs) == 0 || l.Jobs[0].Step(t.Step) == nil {
			env.Errorf("Job step %s not found", t.Raw)
			return 1
		}
		st := l.Jobs[0].Step(t.Step)
		fmt.Fprintf(env.Stdout, "Job step layout:\n\t%d tasks, %d nodes (%s)\n\n", st.NTasks, len(st.Layout), nodeListOf(st))
		for i, n := range st.Layout {
			fmt.Fprintf(env.Stdout, "\tNode %d (%s), %d task(s): %s\n", i, n.Node, len(n.Tasks), joinInts(n.Tasks))
		}
		return 0
	}
	st, err := c.AttachStep(ctx, t.ID, t.Step, s.ln.Addr().String(), s.key)
	if err != nil {
		env.Errorf("Unable to attach to step %s: %v", t.Raw, err)
		return 1
	}
	s.step = st
	return s.run(ctx)
}

// filter is a task rank from --output-filter and friends; -1 = all.
func filter(v string) int {
	if v == "" {
		return -1
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return -1
	}
	return n
}

func joinInts(v []int) string {
	out := ""
	for i, n := range v {
		if i > 0 {
			out += ","
		}
		out += strconv.Itoa(n)
	}
	return out
}
