package scancel

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/drover-hpc/drover/internal/cli"
	"github.com/drover-hpc/drover/internal/model"
)

// Run is the scancel command.
func Run(ctx context.Context, env *cli.Env, args []string) int {
	o, err := parseArgs(env, args)
	if err != nil {
		var e exitNow
		if errors.As(err, &e) && e.code == 0 {
			return 0
		}
		return env.ExitError()
	}
	if o.quiet {
		o.verbose = 0
	}
	targets, err := cli.ParseJobTargets(o.ids)
	if err != nil {
		var ie *cli.InvalidJobIDError
		if errors.As(err, &ie) {
			env.Errorf("Invalid job id %s", ie.Arg)
		} else {
			env.Errorf("%v", err)
		}
		return env.ExitError()
	}
	sel := o.selection(targets)
	if len(targets) == 0 && !o.hasFilters() {
		env.Errorf("No job identification provided")
		return env.ExitError()
	}
	c := &canceller{ctx: ctx, env: env, o: o, sel: sel}
	return c.run()
}

// selection builds what the controller should act on.
func (o *options) selection(targets []cli.JobTarget) cli.JobSelection {
	sel := cli.JobSelection{
		Targets:   targets,
		UID:       -1,
		Name:      o.name,
		Partition: o.partition,
		States:    o.states,
		Nodes:     o.nodes,
		Account:   o.account,
		QOS:       o.qos,
	}
	if o.user != "" {
		if uid, err := strconv.ParseUint(o.user, 10, 32); err == nil {
			sel.UID = int64(uid)
		} else {
			sel.User = o.user
		}
	}
	return sel
}

func (o *options) hasFilters() bool {
	return o.account != "" || o.name != "" || len(o.nodes) > 0 || o.partition != "" ||
		o.qos != "" || o.reservation != "" || len(o.states) > 0 || o.user != "" || o.wckey != ""
}

// filterText lists the filters for the "No active jobs match" message.
func (o *options) filterText() string {
	var b strings.Builder
	add := func(k, v string) {
		if v != "" {
			fmt.Fprintf(&b, "%s=%s ", k, v)
		}
	}
	add("account", o.account)
	add("job_name", o.name)
	add("nodelist", o.nodelist)
	add("partition", o.partition)
	add("qos", o.qos)
	add("reservation", o.reservation)
	var states []string
	for _, s := range o.states {
		states = append(states, s.String())
	}
	add("state", strings.Join(states, ","))
	add("user_name", o.user)
	add("wckey", o.wckey)
	return b.String()
}

// canceller carries one scancel invocation through the controller.
type canceller struct {
	ctx context.Context
	env *cli.Env
	o   *options
	sel cli.JobSelection
}

func (c *canceller) run() int {
	o := c.o
	if o.reservation != "" || o.wckey != "" {
		// Drover has neither reservations nor wckeys: no job can match.
		c.noMatch()
		return 0
	}
	client, err := c.env.Client()
	if err != nil {
		c.callFailed(err)
		return c.env.ExitError()
	}
	if o.interactive {
		sel, err := c.confirm(client)
		if err != nil {
			c.callFailed(err)
			return c.env.ExitError()
		}
		if len(sel.Targets) == 0 {
			return 0
		}
		c.sel = sel
	}
	req := cli.SignalRequest{Signal: o.sig, BatchOnly: o.batch, Full: o.full}
	results, err := client.Signal(c.ctx, c.sel, req)
	if err != nil {
		c.callFailed(err)
		return c.env.ExitError()
	}
	if c.report(results) {
		return c.env.ExitError()
	}
	return 0
}

// noMatch reports, when verbose, that the filters selected nothing.
func (c *canceller) noMatch() {
	if c.o.verbose > 0 && len(c.sel.Targets) == 0 {
		c.env.Errorf("No active jobs match ALL job filters, including: %s", c.o.filterText())
	}
}

// callFailed reports an error that kept the request from being served.
func (c *canceller) callFailed(err error) {
	if len(c.sel.Targets) == 0 {
		fmt.Fprintf(c.env.Stderr, "slurm_load_jobs error: %v\n", err)
		return
	}
	for _, t := range c.sel.Targets {
		c.env.Errorf("Kill job error on job id %s: %v", t.Raw, err)
	}
}

// report prints each job's outcome as Slurm's scancel does and tells
// whether the command failed. A plain cancel of a job that is already gone
// (or never existed) is not an error, and is only mentioned with -v.
func (c *canceller) report(results []cli.JobResult) (failed bool) {
	o := c.o
	if len(results) == 0 {
		c.noMatch()
	}
	kind := ""
	switch {
	case o.full:
		kind = "full "
	case o.batch:
		kind = "batch "
	}
	for _, r := range results {
		step := strings.Contains(r.Job, ".")
		noun := kind + "job"
		if step {
			noun = "step"
		}
		if o.verbose > 0 {
			if o.sig == 0 {
				c.env.Infof("Terminating %s %s", noun, r.Job)
			} else {
				c.env.Infof("Signal %d to %s %s", o.sig, noun, r.Job)
			}
		}
		if r.Error == "" {
			continue
		}
		done := r.Error == cli.MsgAlreadyDone
		invalid := r.Error == cli.MsgInvalidJobID
		var show, fail bool
		if step {
			// -Q hides only what Slurm's scancel hides: a step of a job
			// it cannot find.
			show = o.verbose > 0 || !done && !(invalid && o.quiet)
			fail = !done || o.sig != 0
		} else {
			filteredMiss := invalid && c.o.hasFilters() && len(c.sel.Targets) > 0
			show = o.verbose > 0 || !(done || invalid) || (filteredMiss && !o.quiet)
			fail = !(done || invalid) || o.sig != 0 || filteredMiss
		}
		if show {
			if step {
				c.env.Errorf("Kill job error on job step id %s: %s", r.Job, r.Error)
			} else {
				c.env.Errorf("Kill job error on job id %s: %s", r.Job, r.Error)
			}
		}
		failed = failed || fail
	}
	return failed
}

// active reports whether scancel may act on j at all.
func active(j *model.Job) bool {
	if j.Finished() || j.Completing {
		return false
	}
	return j.State == model.JobPending || j.State == model.JobRunning || j.State == model.JobSuspended
}
