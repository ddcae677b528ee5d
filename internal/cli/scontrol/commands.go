package scontrol

import (
	"fmt"
	"os"
	"strings"

	"github.com/drover-hpc/drover/internal/cli"
	"github.com/drover-hpc/drover/internal/hostlist"
)

type entity struct {
	name string
	min  int
	run  func(r *runner, val string, hasVal bool)
}

// entities "show" knows, in the order scontrol tries them; nil run = known
// to Slurm but not provided by Drover.
var entities = []entity{
	{"aliases", 1, nil},
	{"bbstat", 2, nil},
	{"dwstat", 2, nil},
	{"burstbuffer", 2, nil},
	{"assoc_mgr", 2, nil},
	{"cache", 2, nil},
	{"config", 1, func(r *runner, _ string, _ bool) { r.showConfig() }},
	{"daemons", 1, nil},
	{"federations", 1, nil},
	{"frontendname", 1, nil},
	{"hostnames", 5, (*runner).showHostnames},
	{"hostlist", 5, func(r *runner, v string, ok bool) { r.showHostlist(v, ok, false) }},
	{"hostlistsorted", 9, func(r *runner, v string, ok bool) { r.showHostlist(v, ok, true) }},
	{"jobs", 1, func(r *runner, v string, _ bool) { r.showJob(v) }},
	{"jobid", 1, func(r *runner, v string, _ bool) { r.showJob(v) }},
	{"licenses", 2, nil},
	{"nodes", 1, func(r *runner, v string, _ bool) { r.showNode(v) }},
	{"partitions", 2, func(r *runner, v string, _ bool) { r.showPartition(v) }},
	{"partitionname", 2, func(r *runner, v string, _ bool) { r.showPartition(v) }},
	{"reservations", 1, (*runner).showResv},
	{"reservationname", 1, (*runner).showResv},
	{"slurmd", 2, nil},
	{"steps", 2, func(r *runner, v string, _ bool) { r.showStep(v) }},
	{"topology", 1, nil},
}

// show is "show <entity> [<id>]", also written "show <entity>=<id>".
func (r *runner) show(argv []string) {
	switch {
	case len(argv) < 2:
		r.complain("too few arguments for keyword:%s", argv[0])
		return
	case len(argv) > 3:
		r.complain("too many arguments for keyword:%s", argv[0])
		return
	}
	tag, val, hasVal := strings.Cut(argv[1], "=")
	if !hasVal && len(argv) == 3 {
		val, hasVal = argv[2], true
	}
	for _, e := range entities {
		if !abbrev(tag, e.name, e.min) {
			continue
		}
		if e.run == nil {
			r.fail()
			r.env.Errorf("show %s: not supported by Drover", e.name)
			return
		}
		e.run(r, val, hasVal)
		return
	}
	r.complain("invalid entity:%s for keyword:%s ", tag, argv[0])
}

// showHostnames expands a hostlist, one name per line. It needs no
// controller: job scripts run it to find their nodes.
func (r *runner) showHostnames(val string, hasVal bool) {
	if !hasVal {
		val = r.env.Getenv("SLURM_JOB_NODELIST")
		if val == "" {
			val = r.env.Getenv("SLURM_NODELIST")
		}
	}
	if val == "" {
		r.fail()
		r.env.Errorf("host list is empty")
		return
	}
	names, err := hostlist.Expand(val)
	if err != nil {
		r.complain("Invalid hostlist: %s", val)
		return
	}
	var b strings.Builder
	for _, n := range names {
		b.WriteString(n)
		b.WriteByte('\n')
	}
	fmt.Fprint(r.env.Stdout, b.String())
}

// showHostlist compresses names (or the names in a file, when the argument
// starts with "/") into a hostlist: in the given order, or sorted.
func (r *runner) showHostlist(val string, hasVal, sorted bool) {
	if !hasVal || val == "" {
		r.complain("invalid encode argument")
		return
	}
	list := val
	if strings.HasPrefix(val, "/") {
		data, err := os.ReadFile(val)
		if err != nil {
			r.complain("Can not open %s", val)
			return
		}
		list = strings.Join(strings.FieldsFunc(string(data), func(c rune) bool {
			return c == '\n' || c == ','
		}), ",")
	}
	names, err := hostlist.Expand(list)
	if err != nil {
		r.complain("Invalid hostlist: %s", list)
		return
	}
	if sorted {
		fmt.Fprintln(r.env.Stdout, hostlist.Compress(names))
	} else {
		fmt.Fprintln(r.env.Stdout, hostlist.CompressUnsorted(names))
	}
}

// showConfig prints the controller's configuration, then the ping report.
func (r *runner) showConfig() {
	c := r.client("slurm_load_ctl_conf error")
	if c == nil {
		return
	}
	kvs, err := c.Config(r.ctx)
	if err != nil {
		r.perror("slurm_load_ctl_conf error", err)
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Configuration data as of %s\n", r.env.Now().Format("2006-01-02T15:04:05"))
	for _, kv := range kvs {
		if kv.Key == "" { // a section heading or a blank line
			b.WriteString(kv.Value + "\n")
			continue
		}
		fmt.Fprintf(&b, "%-23s = %s\n", kv.Key, kv.Value)
	}
	b.WriteString("\n")
	fmt.Fprint(r.env.Stdout, b.String())
	if res, err := c.Ping(r.ctx); err == nil {
		r.pingReport(res)
	}
}

// ping reports whether each controller answers.
func (r *runner) ping(argv []string) {
	if len(argv) > 1 {
		r.complain("too many arguments for keyword:%s", argv[0])
		return
	}
	c := r.client("slurm_ping error")
	if c == nil {
		return
	}
	res, err := c.Ping(r.ctx)
	if err != nil {
		r.perror("slurm_ping error", err)
		return
	}
	r.pingReport(res)
}

func (r *runner) pingReport(res *cli.PingResult) {
	up, down := false, false
	n := len(res.Controllers)
	for i, ctl := range res.Controllers {
		mode := "primary"
		switch {
		case i == 1 && n == 2:
			mode = "backup"
		case i > 0:
			mode = fmt.Sprintf("backup%d", i)
		}
		state := "DOWN"
		if ctl.Up {
			state, up = "UP", true
		} else {
			down = true
		}
		fmt.Fprintf(r.env.Stdout, "Slurmctld(%s) at %s is %s\n", mode, ctl.Host, state)
	}
	if down && r.env.Getuid() == 0 {
		fmt.Fprint(r.env.Stdout, restoreBanner)
	}
	if !up {
		r.fail()
	}
}

const restoreBanner = "*****************************************\n" +
	"** RESTORE SLURMCTLD DAEMON TO SERVICE **\n" +
	"*****************************************\n"

// reconfigure asks the controller to re-read its configuration.
func (r *runner) reconfigure(argv []string) {
	if len(argv) > 2 {
		r.complain("too many arguments for keyword:%s", argv[0])
		return
	}
	c := r.client("slurm_reconfigure error")
	if c == nil {
		return
	}
	if err := c.Reconfigure(r.ctx); err != nil {
		r.perror("slurm_reconfigure error", err)
	}
}

// control is hold, uhold, release, requeue, requeuehold, suspend and
// resume: one request per
// argument, each a job id list (or, for the hold family, Name=<job name>).
func (r *runner) control(argv []string) {
	tag := argv[0]
	var action string
	switch {
	case abbrev(tag, "requeue", 3):
		action = "requeue"
	case abbrev(tag, "requeuehold", 11):
		action = "requeuehold"
	case abbrev(tag, "holdu", 5), abbrev(tag, "uhold", 5):
		action = "uhold"
	case abbrev(tag, "hold", 4):
		action = "hold"
	case abbrev(tag, "suspend", 2):
		action = "suspend"
	case abbrev(tag, "resume", 3):
		action = "resume"
	default:
		action = "release"
	}
	if len(argv) < 2 {
		r.complain("too few arguments for keyword:%s", tag)
		return
	}
	args := argv[1:]
	if strings.HasPrefix(action, "requeue") {
		for len(args) > 0 && (strings.EqualFold(args[0], "Incomplete") || strings.EqualFold(args[0], "State=SpecialExit")) {
			args = args[1:]
		}
	}
	for _, arg := range args {
		r.controlOne(action, arg)
	}
}

func (r *runner) controlOne(action, arg string) {
	holdFamily := !strings.HasPrefix(action, "requeue") && action != "suspend" && action != "resume"
	job := trimPrefixFold(trimPrefixFold(arg, "JobID="), "Job=")
	failed := func(msg string) {
		if holdFamily {
			r.complain("slurm_suspend error: %s", msg)
		}
	}
	sel := cli.JobSelection{UID: -1}
	if name, ok := cutPrefixFold(job, "Name=", "JobName="); ok && holdFamily {
		sel.Name = name
	} else {
		ts, err := cli.ParseJobTargets([]string{job})
		if err != nil || hasStep(ts) {
			r.complain("%s for job %s", cli.MsgInvalidJobID, job)
			failed(cli.MsgInvalidJobID)
			return
		}
		sel.Targets = ts
	}
	c, err := r.env.Client()
	var results []cli.JobResult
	if err == nil {
		results, err = c.Control(r.ctx, sel, action)
	}
	if err != nil {
		r.complain("%v for job %s", err, job)
		failed(err.Error())
		return
	}
	last := ""
	for _, res := range results {
		if res.Error != "" {
			r.complain("%s for job %s", res.Error, res.Job)
			last = res.Error
		}
	}
	if last != "" {
		failed(last)
	}
}

func hasStep(ts []cli.JobTarget) bool {
	for _, t := range ts {
		if t.HasStep {
			return true
		}
	}
	return false
}

func trimPrefixFold(s, prefix string) string {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):]
	}
	return s
}

// cutPrefixFold strips the first of prefixes that s starts with.
func cutPrefixFold(s string, prefixes ...string) (string, bool) {
	for _, p := range prefixes {
		if len(s) >= len(p) && strings.EqualFold(s[:len(p)], p) {
			return s[len(p):], true
		}
	}
	return s, false
}

// update is "update JobId=... k=v..." or "update NodeName=... k=v...".
func (r *runner) update(argv []string) {
	args := argv[1:]
	if len(args) == 0 {
		r.complain("too few arguments for %s keyword", argv[0])
		return
	}
	var job, node, resv, other bool
	for i := 0; i < len(args); i++ {
		tag, _, ok := strings.Cut(args[i], "=")
		if !ok {
			i++ // "Tag value" form: the next word is the value
		}
		switch {
		case abbrev(tag, "NodeName", 3):
			node = true
		case abbrev(tag, "JobId", 3), abbrev(tag, "JobName", 3):
			job = true
		case abbrev(tag, "ReservationName", 3):
			resv = true
		case abbrev(tag, "PartitionName", 3), abbrev(tag, "StepId", 4), abbrev(tag, "FrontendName", 2),
			abbrev(tag, "SlurmctldDebug", 2):
			other = true
		}
	}
	switch {
	case job:
		r.updateJob(args)
	case resv:
		r.updateResv(args)
	case other:
		r.fail()
		r.env.Errorf("update: only jobs, nodes and reservations can be updated in Drover")
	case node:
		r.updateNode(args)
	default:
		r.complain("No valid entity in update command")
		r.complain("Input line must include \"NodeName\", \"PartitionName\", \"Reservation\", \"JobId\", or \"SlurmctldDebug\"")
	}
}
