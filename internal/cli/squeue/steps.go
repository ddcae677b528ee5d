package squeue

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/drover-hpc/drover/internal/cli"
	"github.com/drover-hpc/drover/internal/format"
	"github.com/drover-hpc/drover/internal/hostlist"
	"github.com/drover-hpc/drover/internal/model"
)

// DefaultStepSort is Slurm's sort for -s: partition, then step id.
const DefaultStepSort = "P,i"

// stepRow is one line of squeue -s: a running step and the job it is in.
type stepRow struct {
	job   *model.Job
	step  *model.Step
	nodes string // compressed node list, once computed
	hasNL bool
}

func (r *stepRow) nodeList() string {
	if !r.hasNL {
		r.nodes = hostlist.Compress(r.step.NodeNames())
		r.hasNL = true
	}
	return r.nodes
}

// parseStepList reads the -s list: "job[_task].step", comma separated.
func parseStepList(env *cli.Env, list string) ([]cli.JobTarget, error) {
	var out []cli.JobTarget
	for _, w := range splitList(list) {
		ts, err := cli.ParseJobTargets([]string{w})
		if err != nil || len(ts) != 1 {
			env.Errorf("Invalid job_step id: %s", w)
			return nil, cli.ExitCode(1)
		}
		if !ts[0].HasStep {
			env.Errorf("Invalid job_step id: %s.??", w)
			return nil, cli.ExitCode(1)
		}
		out = append(out, ts[0])
	}
	return out, nil
}

// targetNames reports whether t names job j (by its id, its array's id, or
// its array's id and task id), ignoring any step t names.
func targetNames(t cli.JobTarget, j *model.Job) bool {
	if t.Tasks == nil {
		return t.ID == j.ID || (j.IsArrayTask() && t.ID == j.ArrayJobID)
	}
	return j.IsArrayTask() && t.ID == j.ArrayJobID && slices.Contains(t.Tasks, j.ArrayTaskID)
}

// stepFilter selects steps as Slurm's squeue -s does: by the -j jobs, the
// -s steps, the job's partition and user, and the step's nodes. Names,
// accounts, QOS and states do not apply to steps.
type stepFilter struct {
	*filter
	steps []cli.JobTarget
}

func (f *stepFilter) matchJob(j *model.Job) bool {
	if !f.matchID(j) {
		return false
	}
	if f.hasUsers() && !f.uids[j.UserID] && !f.userNames[j.UserName] {
		return false
	}
	if f.notUID >= 0 && int64(j.UserID) == f.notUID {
		return false
	}
	return len(f.partitions) == 0 || anyPartition(j.Partition, f.partitions)
}

func (f *stepFilter) matchStep(j *model.Job, s *model.Step) bool {
	if len(f.steps) > 0 && !slices.ContainsFunc(f.steps, func(t cli.JobTarget) bool {
		return t.Step == s.ID && targetNames(t, j)
	}) {
		return false
	}
	if f.nodes != nil && !slices.ContainsFunc(s.Layout, func(n model.StepNode) bool { return f.nodes[n.Node] }) {
		return false
	}
	return true
}

// buildStepRows lists the running steps of the jobs that pass f.
func buildStepRows(jobs []*model.Job, f *stepFilter) []*stepRow {
	var rows []*stepRow
	for _, j := range jobs {
		if j == nil || !f.matchJob(j) {
			continue
		}
		for _, s := range j.ActiveSteps() {
			if f.matchStep(j, s) {
				rows = append(rows, &stepRow{job: j, step: s})
			}
		}
	}
	return rows
}

// parseStepSort reads -S for steps. Slurm sorts steps on i, N, P, l, S, M,
// u and U ("cluster" too, a single cluster here) and skips other letters
// without complaint.
func parseStepSort(s string) []sortKey {
	var keys []sortKey
	desc := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ',' || c == '+':
			desc = false
		case c == '-':
			desc = true
		case strings.HasPrefix(strings.ToLower(s[i:]), "cluster"):
			i += len("cluster") - 1
			desc = false
		default:
			if strings.IndexByte("iNPlSMuU", c) >= 0 {
				keys = append(keys, sortKey{letter: c, desc: desc})
			}
			desc = false
		}
	}
	return keys
}

// stepKey orders step ids as Slurm does, by their unsigned wire value:
// numbered steps, then interactive, batch and extern.
func stepKey(id model.StepID) uint32 { return uint32(int32(id)) }

func compareStepID(a, b *stepRow) int {
	if d := cmp.Compare(a.job.ID, b.job.ID); d != 0 {
		return d
	}
	return cmp.Compare(stepKey(a.step.ID), stepKey(b.step.ID))
}

// sortStepRows orders rows by keys, then by job id and step id.
func sortStepRows(rows []*stepRow, keys []sortKey, now int64) {
	slices.SortStableFunc(rows, func(a, b *stepRow) int {
		for _, k := range keys {
			d := compareStepBy(k.letter, a, b, now)
			if k.desc {
				d = -d
			}
			if d != 0 {
				return d
			}
		}
		return compareStepID(a, b)
	})
}

func compareStepBy(letter byte, a, b *stepRow, now int64) int {
	switch letter {
	case 'i':
		return compareStepID(a, b)
	case 'N':
		return strings.Compare(a.nodeList(), b.nodeList())
	case 'P':
		return strings.Compare(a.job.Partition, b.job.Partition)
	case 'l':
		return cmp.Compare(stepLimitKey(a.step), stepLimitKey(b.step))
	case 'S':
		return cmp.Compare(a.step.StartTime, b.step.StartTime)
	case 'M':
		return cmp.Compare(stepTimeUsed(a.step, now), stepTimeUsed(b.step, now))
	case 'u':
		return strings.Compare(userName(a.job), userName(b.job))
	case 'U':
		return cmp.Compare(a.job.UserID, b.job.UserID)
	}
	return 0
}

// stepTimeUsed is how long s has run.
func stepTimeUsed(s *model.Step, now int64) int64 {
	if s.StartTime <= 0 {
		return 0
	}
	end := s.EndTime
	if end <= 0 {
		end = now
	}
	return end - s.StartTime
}

// stepUnlimited reports a step without its own time limit, which Slurm
// prints as UNLIMITED.
func stepUnlimited(s *model.Step) bool { return s.TimeLimit <= 0 || s.TimeLimit == model.Unlimited }

func stepLimitKey(s *model.Step) int64 {
	if stepUnlimited(s) {
		return 1 << 62
	}
	return s.TimeLimit
}

func userName(j *model.Job) string {
	if j.UserName != "" {
		return j.UserName
	}
	return strconv.FormatUint(uint64(j.UserID), 10)
}

// stepCPUs is the CPU count of s over all its nodes.
func stepCPUs(s *model.Step) int {
	n := 0
	for _, l := range s.Layout {
		n += l.CPUs
	}
	return n
}

// stepTasks is the task count of s.
func stepTasks(s *model.Step) int {
	if s.NTasks > 0 {
		return s.NTasks
	}
	n := 0
	for _, l := range s.Layout {
		n += len(l.Tasks)
	}
	return n
}

type stepAppend = func([]byte, *stepRow) []byte

func sfld(letter byte, name, header string, fn stepAppend, aliases ...string) format.Field[*stepRow] {
	return format.Field[*stepRow]{Letter: letter, Name: name, Header: header, Append: fn, Aliases: aliases}
}

// uncut marks a field Slurm prints whole whatever its width.
func uncut(f format.Field[*stepRow]) format.Field[*stepRow] {
	f.NoTruncate = true
	return f
}

func sfixed(v string) stepAppend {
	return func(d []byte, _ *stepRow) []byte { return append(d, v...) }
}

func snum[T ~int | ~int64 | ~uint32 | ~int32](f func(*stepRow) T) stepAppend {
	return func(d []byte, r *stepRow) []byte { return strconv.AppendInt(d, int64(f(r)), 10) }
}

// stepFields is squeue's field table in step mode (-s): the letters of -o
// and the names of -O, with Slurm's headers.
func stepFields(c *renderCtx) []format.Field[*stepRow] {
	return []format.Field[*stepRow]{
		sfld('A', "NumTasks", "TASKS", snum(func(r *stepRow) int { return stepTasks(r.step) })),
		sfld('b', "tres-per-node", "TRES_PER_JOB", stepGPUTRES("TresPerNode"), "gres"), // Slurm's header
		sfld('i', "StepID", "STEPID", func(d []byte, r *stepRow) []byte {
			d = append(d, r.job.DisplayID()...)
			d = append(d, '.')
			return append(d, r.step.ID.String()...)
		}),
		sfld('j', "StepName", "NAME", format.Str(func(r *stepRow) string { return r.step.Name })),
		uncut(sfld('l', "TimeLimit", "TIME_LIMIT", func(d []byte, r *stepRow) []byte {
			if stepUnlimited(r.step) {
				return append(d, "UNLIMITED"...)
			}
			return appendSecs(d, r.step.TimeLimit)
		})),
		uncut(sfld('M', "TimeUsed", "TIME", func(d []byte, r *stepRow) []byte {
			return appendSecs(d, stepTimeUsed(r.step, c.now))
		})),
		uncut(sfld('N', "Nodes", "NODELIST", func(d []byte, r *stepRow) []byte { return append(d, r.nodeList()...) })),
		sfld('P', "Partition", "PARTITION", format.Str(func(r *stepRow) string { return r.job.Partition })),
		sfld('S', "StartTime", "START_TIME", func(d []byte, r *stepRow) []byte { return appendTime(d, r.step.StartTime) }),
		sfld('u', "UserName", "USER", func(d []byte, r *stepRow) []byte { return append(d, userName(r.job)...) }),
		sfld('U', "UserID", "UID", snum(func(r *stepRow) uint32 { return r.job.UserID })),

		// -O only.
		sfld(0, "ArrayJobID", "ARRAY_JOB_ID", snum(func(r *stepRow) model.JobID { return r.job.ArrayJobID })),
		sfld(0, "ArrayTaskID", "ARRAY_TASK_ID", func(d []byte, r *stepRow) []byte {
			if r.job.IsArrayTask() {
				return strconv.AppendInt(d, int64(r.job.ArrayTaskID), 10)
			}
			return append(d, "N/A"...)
		}),
		sfld(0, "JobID", "JOB_ID", snum(func(r *stepRow) model.JobID { return r.job.ID })),
		sfld(0, "Network", "NETWORK", sfixed("(null)")),
		sfld(0, "NumCPUs", "NUM_CPUS", snum(func(r *stepRow) int { return stepCPUs(r.step) })),
		sfld(0, "ResvPorts", "RESERVED_PORTS", sfixed("(null)")),
		sfld(0, "StepState", "STATE", format.Str(func(r *stepRow) string { return r.step.State.String() })),
		sfld(0, "cpus-per-tres", "CPUS_PER_TRES", stepGPUPer(func(g *model.GPUReq) int64 { return int64(g.CPUsPerGPU) })),
		sfld(0, "mem-per-tres", "MEM_PER_TRES", stepGPUPer(func(g *model.GPUReq) int64 { return g.MemPerGPU })),
		sfld(0, "tres-bind", "TRES_BIND", sfixed("(null)")),
		sfld(0, "tres-freq", "TRES_FREQ", sfixed("(null)")),
		sfld(0, "tres-per-step", "TRES_PER_STEP", stepGPUTRES("TresPerJob"), "tres-per-job"),
		sfld(0, "tres-per-socket", "TRES_PER_SOCKET", sfixed("(null)")),
		sfld(0, "tres-per-task", "TRES_PER_TASK", stepGPUTRES("TresPerTask")),
	}
}

// stepGPUTRES prints the step's own GPU request (srun's GPU options) when
// it is of the kind key names, "(null)" otherwise: a step without one
// uses its job's GPUs.
func stepGPUTRES(key string) stepAppend {
	return func(d []byte, r *stepRow) []byte {
		if r.step.Spec != nil {
			if k, v := r.step.Spec.GPUs.TRES(); k == key {
				return append(d, v...)
			}
		}
		return append(d, "(null)"...)
	}
}

// stepGPUPer prints a per-GPU figure of the step's request ("gres:gpu:4").
func stepGPUPer(f func(*model.GPUReq) int64) stepAppend {
	return func(d []byte, r *stepRow) []byte {
		if r.step.Spec == nil || !r.step.Spec.GPUs.Any() || f(r.step.Spec.GPUs) <= 0 {
			return append(d, "(null)"...)
		}
		d = append(d, "gres:gpu:"...)
		return strconv.AppendInt(d, f(r.step.Spec.GPUs), 10)
	}
}

// startHeaderLeft copies fm with its start time columns left-justified:
// Slurm always prints the START_TIME header of a step listing that way.
func startHeaderLeft(fm format.Format) (format.Format, bool) {
	changed := false
	specs := slices.Clone(fm.Specs)
	for i, sp := range specs {
		if sp.Right && (!sp.Long && sp.Name == "S" || sp.Long && strings.EqualFold(sp.Name, "StartTime")) {
			specs[i].Right, changed = false, true
		}
	}
	fm.Specs = specs
	return fm, changed
}

// runSteps is squeue -s: the running steps of the selected jobs.
func runSteps(ctx context.Context, env *cli.Env, o *options, fm format.Format) error {
	if o.jobFlag && o.jobs == "" {
		env.Errorf("Incompatible options --jobs and --steps")
		return cli.ExitCode(1)
	}
	c := &renderCtx{env: env}
	table := format.NewTable(stepFields(c)...)
	layout, err := table.Compile(fm)
	if err != nil {
		return stepFormatError(env, err)
	}
	header := layout
	if hf, changed := startHeaderLeft(fm); changed {
		header, _ = table.Compile(hf)
	}
	base, err := buildFilter(env, o)
	if err != nil {
		return err
	}
	f := &stepFilter{filter: base}
	if o.steps != "" {
		if f.steps, err = parseStepList(env, o.steps); err != nil {
			return err
		}
	}
	sortSpec := o.sort
	if sortSpec == "" {
		sortSpec = DefaultStepSort
	}
	keys := parseStepSort(sortSpec)
	client, err := env.Client()
	if err != nil {
		fmt.Fprintf(env.Stderr, "slurm_get_job_steps error: %v\n", err)
		return err
	}
	q := cli.JobQuery{Summary: true, WithSteps: true}
	ids := f.targets
	if len(ids) == 0 {
		ids = f.steps
	}
	for _, t := range ids {
		if !slices.Contains(q.IDs, t.ID) {
			q.IDs = append(q.IDs, t.ID)
		}
	}
	return printTimes(ctx, env, o, func() error {
		list, err := client.ListJobs(ctx, q)
		if err != nil {
			fmt.Fprintf(env.Stderr, "slurm_get_job_steps error: %v\n", err)
			return err
		}
		c.now = list.Now
		if c.now == 0 {
			c.now = env.Now().Unix()
		}
		rows := buildStepRows(list.Jobs, f)
		sortStepRows(rows, keys, c.now)
		if !o.noHeader && header != layout {
			header.Fit(rows)
			if _, err := env.Stdout.Write(append(header.AppendHeader(nil), '\n')); err != nil {
				return err
			}
		}
		return layout.Render(env.Stdout, rows, format.Options{NoHeader: o.noHeader || header != layout})
	})
}

// stepFormatError reports a format naming fields steps do not have.
func stepFormatError(env *cli.Env, err error) error {
	var uf *format.UnknownFieldError
	if errors.As(err, &uf) {
		env.Errorf("Invalid job step format specification: %s", uf.Spec.Name)
	} else {
		env.Errorf("%v", err)
	}
	return cli.ExitCode(1)
}
