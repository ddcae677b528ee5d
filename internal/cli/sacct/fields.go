package sacct

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/drover-hpc/drover/internal/acct"
	"github.com/drover-hpc/drover/internal/model"
)

// row is one line of output: a job, or one of its steps (s != nil).
type row struct {
	j     *acct.Job
	s     *acct.Step
	tasks string // an array's pending remainder (record.tasks)
	now   int64
	u     *units
}

// field is one column sacct can print. width is Slurm's default (negative:
// left-justified); needs are the acct.Job fields (JSON names) it reads,
// so the database returns only those; steps marks fields whose job row
// is computed from the steps' usage.
type field struct {
	name  string
	width int
	needs []string
	steps bool
	val   func(r *row) string
}

var fields = []*field{
	{"Account", 10, []string{"account"}, false, func(r *row) string { return r.j.Account }},
	{"AllocCPUS", 10, []string{"ncpus"}, false, func(r *row) string { return itoa(r.cpus()) }},
	{"AllocNodes", 10, []string{"nnodes", "start"}, false, func(r *row) string {
		if r.s != nil {
			return itoa(int64(r.s.NNodes))
		}
		if r.j.Start == 0 {
			return "0"
		}
		return itoa(int64(r.j.NNodes))
	}},
	{"AllocTRES", -10, []string{"alloc_tres", "start"}, false, func(r *row) string {
		if r.s != nil {
			return r.s.AllocTRES
		}
		if r.j.Start == 0 {
			return ""
		}
		return r.j.AllocTRES
	}},
	{"ArrayJobID", 10, nil, false, func(r *row) string {
		if r.j.ArrayTaskID < 0 {
			return ""
		}
		return itoa(int64(r.j.ArrayJobID))
	}},
	{"ArrayTaskID", 11, nil, false, func(r *row) string {
		if r.tasks != "" {
			return r.tasks
		}
		if r.j.ArrayTaskID < 0 {
			return ""
		}
		return itoa(int64(r.j.ArrayTaskID))
	}},
	{"AveRSS", 10, nil, true, func(r *row) string {
		if r.s == nil {
			return ""
		}
		return r.u.mem(r.s.AveRSS)
	}},
	{"Cluster", 10, []string{"cluster"}, false, func(r *row) string { return r.j.Cluster }},
	{"Comment", 15, []string{"comment"}, false, func(r *row) string { return r.jobOnly(r.j.Comment) }},
	{"Constraints", 19, []string{"constraints"}, false, func(r *row) string { return r.jobOnly(r.j.Constraints) }},
	{"CPUTime", 10, []string{"ncpus", "start", "end"}, false, func(r *row) string { return duration(r.elapsed() * r.cpus()) }},
	{"CPUTimeRAW", 10, []string{"ncpus", "start", "end"}, false, func(r *row) string { return itoa(r.elapsed() * r.cpus()) }},
	{"DerivedExitCode", 15, []string{"derived_exit_status", "derived_exit_signal"}, false, func(r *row) string {
		if r.s != nil {
			return ""
		}
		return fmt.Sprintf("%d:%d", r.j.DerivedExitStatus, r.j.DerivedExitSignal)
	}},
	{"Elapsed", 10, []string{"start", "end"}, false, func(r *row) string { return duration(r.elapsed()) }},
	{"ElapsedRaw", 10, []string{"start", "end"}, false, func(r *row) string { return itoa(r.elapsed()) }},
	{"Eligible", 19, []string{"eligible"}, false, func(r *row) string {
		if r.s != nil {
			return stamp(r.s.Start, "Unknown")
		}
		return stamp(r.j.Eligible, "Unknown")
	}},
	{"End", 19, []string{"end"}, false, func(r *row) string {
		if r.s != nil {
			return stamp(r.s.End, "Unknown")
		}
		return stamp(r.j.End, "Unknown")
	}},
	{"ExitCode", 8, []string{"exit_status", "exit_signal"}, false, func(r *row) string {
		if r.s != nil {
			return fmt.Sprintf("%d:%d", r.s.ExitStatus, r.s.ExitSignal)
		}
		return fmt.Sprintf("%d:%d", r.j.ExitStatus, r.j.ExitSignal)
	}},
	{"GID", 6, []string{"gid"}, false, func(r *row) string { return r.jobOnly(itoa(int64(r.j.GID))) }},
	{"Group", 9, []string{"group"}, false, func(r *row) string { return r.jobOnly(r.j.Group) }},
	{"JobID", -12, nil, false, func(r *row) string {
		if r.tasks != "" {
			return itoa(int64(r.j.ArrayJobID)) + "_[" + r.tasks + "]"
		}
		return jobID(r.j, r.s)
	}},
	{"JobIDRaw", -12, nil, false, func(r *row) string {
		if r.tasks != "" {
			// The remainder is the array's own record in Slurm.
			return itoa(int64(r.j.ArrayJobID))
		}
		id := itoa(int64(r.j.JobID))
		if r.s != nil {
			id += "." + stepName(r.s.StepID)
		}
		return id
	}},
	{"JobName", 10, []string{"name"}, false, func(r *row) string {
		if r.s != nil {
			return r.s.Name
		}
		return r.j.Name
	}},
	{"MaxRSS", 10, nil, true, func(r *row) string {
		if r.s == nil {
			return ""
		}
		return r.u.mem(r.s.MaxRSS)
	}},
	{"MaxRSSNode", -8, nil, true, func(r *row) string {
		if r.s == nil {
			return ""
		}
		return r.s.MaxRSSNode
	}},
	{"MaxRSSTask", 10, nil, true, func(r *row) string {
		if r.s == nil {
			return ""
		}
		return itoa(int64(r.s.MaxRSSTask))
	}},
	{"NCPUS", 10, []string{"ncpus"}, false, func(r *row) string { return itoa(r.cpus()) }},
	{"NNodes", 8, []string{"nnodes"}, false, func(r *row) string {
		if r.s != nil {
			return itoa(int64(r.s.NNodes))
		}
		return itoa(int64(r.j.NNodes))
	}},
	{"NodeList", -15, []string{"node_list"}, false, func(r *row) string {
		nl := r.j.NodeList
		if r.s != nil {
			nl = r.s.NodeList
		}
		if nl == "" {
			return "None assigned"
		}
		return nl
	}},
	{"NTasks", 8, nil, false, func(r *row) string {
		if r.s == nil {
			return ""
		}
		return itoa(int64(r.s.NTasks))
	}},
	{"Partition", 10, []string{"partition"}, false, func(r *row) string { return r.jobOnly(r.j.Partition) }},
	{"Priority", 10, []string{"priority"}, false, func(r *row) string { return r.jobOnly(itoa(int64(r.j.Priority))) }},
	{"QOS", 10, []string{"qos"}, false, func(r *row) string { return r.jobOnly(r.j.QOS) }},
	{"Reason", 20, []string{"reason"}, false, func(r *row) string {
		if r.s != nil {
			return ""
		}
		if r.j.Reason == "" {
			return "None"
		}
		return r.j.Reason
	}},
	{"ReqCPUS", 8, []string{"req_cpus"}, false, func(r *row) string {
		if r.s != nil {
			return itoa(int64(r.s.NCPUs))
		}
		return itoa(int64(r.j.ReqCPUs))
	}},
	{"ReqMem", 10, []string{"req_tres", "req_mem", "req_mem_per_cpu", "ncpus", "nnodes"}, false, func(r *row) string { return r.u.reqMem(r.j) }},
	{"ReqNodes", 8, []string{"req_nodes"}, false, func(r *row) string { return itoa(int64(r.j.ReqNodes)) }},
	{"ReqTRES", -10, []string{"req_tres"}, false, func(r *row) string { return r.jobOnly(r.j.ReqTRES) }},
	{"Restarts", 8, []string{"restarts"}, false, func(r *row) string { return r.jobOnly(itoa(int64(r.j.Restarts))) }},
	{"Start", 19, []string{"start", "end"}, false, func(r *row) string {
		if r.s != nil {
			return stamp(r.s.Start, "Unknown")
		}
		if r.j.Start == 0 && r.j.End != 0 {
			return "None"
		}
		return stamp(r.j.Start, "Unknown")
	}},
	{"State", 10, []string{"state", "cancelled_by"}, false, func(r *row) string {
		if r.s != nil {
			return r.s.State
		}
		if r.j.State == "CANCELLED" && r.j.CancelledBy != model.NoCanceller {
			return "CANCELLED by " + itoa(int64(r.j.CancelledBy))
		}
		return r.j.State
	}},
	{"StdErr", 20, []string{"stderr"}, false, func(r *row) string { return r.jobOnly(r.j.StdErr) }},
	{"StdIn", 20, []string{"stdin"}, false, func(r *row) string { return r.jobOnly(r.j.StdIn) }},
	{"StdOut", 20, []string{"stdout"}, false, func(r *row) string { return r.jobOnly(r.j.StdOut) }},
	{"Submit", 19, []string{"submit"}, false, func(r *row) string { return stamp(r.j.Submit, "Unknown") }},
	{"SubmitLine", -20, []string{"submit_line"}, false, func(r *row) string { return r.jobOnly(r.j.SubmitLine) }},
	{"Suspended", 10, []string{"suspended"}, false, func(r *row) string { return duration(r.suspended()) }},
	{"SystemCPU", 10, nil, true, func(r *row) string { return cpuTime(r.usage(func(s *acct.Step) int64 { return s.SystemCPU })) }},
	{"Timelimit", 10, []string{"time_limit"}, false, func(r *row) string {
		if r.s != nil {
			return ""
		}
		return timeLimit(r.j.TimeLimit, false)
	}},
	{"TimelimitRaw", 10, []string{"time_limit"}, false, func(r *row) string {
		if r.s != nil {
			return ""
		}
		return timeLimit(r.j.TimeLimit, true)
	}},
	{"TotalCPU", 10, nil, true, func(r *row) string {
		return cpuTime(r.usage(func(s *acct.Step) int64 { return s.UserCPU + s.SystemCPU }))
	}},
	{"UID", 6, []string{"uid"}, false, func(r *row) string { return r.jobOnly(itoa(int64(r.j.UID))) }},
	{"User", 9, []string{"user"}, false, func(r *row) string { return r.jobOnly(r.j.User) }},
	{"UserCPU", 10, nil, true, func(r *row) string { return cpuTime(r.usage(func(s *acct.Step) int64 { return s.UserCPU })) }},
	{"WorkDir", -15, []string{"work_dir"}, false, func(r *row) string { return r.j.WorkDir }},
}

// fieldByName is built on first use: every command's start paid for it.
var fieldByName = sync.OnceValue(func() map[string]*field {
	m := make(map[string]*field, len(fields))
	for _, f := range fields {
		m[strings.ToLower(f.name)] = f
	}
	return m
})

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// jobOnly is a job-level value: empty on step rows.
func (r *row) jobOnly(v string) string {
	if r.s != nil {
		return ""
	}
	return v
}

func (r *row) cpus() int64 {
	if r.s != nil {
		return int64(r.s.NCPUs)
	}
	return int64(r.j.NCPUs)
}

// elapsed is the run time so far: up to the end, or now while running.
func (r *row) elapsed() int64 {
	start, end := r.j.Start, r.j.End
	if r.s != nil {
		start, end = r.s.Start, r.s.End
	}
	if start == 0 {
		return 0
	}
	if end == 0 {
		end = r.now
	}
	// Elapsed leaves out the time the row spent suspended, as Slurm's.
	return max(0, end-start-r.suspended())
}

// suspended is how long the row's job was suspended while it ran: the
// job's (and its batch step's, which lasts as long), or an srun step's own.
func (r *row) suspended() int64 {
	if r.s != nil && r.s.StepID != acct.StepBatch {
		return r.s.Suspended
	}
	return r.j.Suspended
}

// usage is a step's figure, or the sum over a job's steps.
func (r *row) usage(f func(*acct.Step) int64) int64 {
	if r.s != nil {
		return f(r.s)
	}
	var t int64
	for _, s := range r.j.Steps {
		t += f(s)
	}
	return t
}

func stepName(id int32) string {
	switch id {
	case acct.StepBatch:
		return "batch"
	case acct.StepExtern:
		return "extern"
	case acct.StepInteractive:
		return "interactive"
	}
	return itoa(int64(id))
}

func jobID(j *acct.Job, s *acct.Step) string {
	id := itoa(int64(j.JobID))
	if j.ArrayTaskID >= 0 {
		id = itoa(int64(j.ArrayJobID)) + "_" + itoa(int64(j.ArrayTaskID))
	}
	if s != nil {
		id += "." + stepName(s.StepID)
	}
	return id
}

// stamp is a time as sacct prints it: local ISO 8601, or none when 0.
func stamp(t int64, none string) string {
	if t == 0 {
		return none
	}
	return time.Unix(t, 0).Format("2006-01-02T15:04:05")
}

// duration is [D-]HH:MM:SS.
func duration(secs int64) string {
	if secs < 0 {
		secs = 0
	}
	d, h, m, s := secs/86400, secs/3600%24, secs/60%60, secs%60
	if d > 0 {
		return fmt.Sprintf("%d-%02d:%02d:%02d", d, h, m, s)
	}
	return fmt.Sprintf("%02d:%02d:%02d", h, m, s)
}

// cpuTime is a CPU time in microseconds as sacct prints it: MM:SS.mmm
// under an hour, [D-]HH:MM:SS above.
func cpuTime(us int64) string {
	secs := us / 1e6
	if secs >= 3600 {
		return duration(secs)
	}
	return fmt.Sprintf("%02d:%02d.%03d", secs/60, secs%60, us%1e6/1000)
}

// timeLimit is a limit in seconds as Slurm prints minutes-based limits.
func timeLimit(secs int64, raw bool) string {
	switch {
	case secs == -2:
		return "UNLIMITED"
	case secs == -1:
		return "Partition_Limit"
	case raw:
		return itoa(secs / 60)
	}
	return duration(secs)
}

// units is how memory figures print: --units, --noconvert, or Slurm's
// default of converting only when the value divides exactly.
type units struct {
	force     byte // 'K', 'M', ... or 0
	noconvert bool
}

const unitChars = "KMGTP"

// mem prints a size in bytes, counted in KiB as Slurm does.
func (u *units) mem(bytes int64) string { return u.convert(bytes/1024, 0) }

// convert prints v, a count of unit (index into unitChars).
func (u *units) convert(v int64, unit int) string {
	if v == 0 {
		return "0"
	}
	if u.noconvert {
		return itoa(v) + string(unitChars[unit])
	}
	if u.force != 0 {
		target := strings.IndexByte(unitChars, u.force)
		f := float64(v)
		for i := unit; i < target; i++ {
			f /= 1024
		}
		for i := unit; i > target; i-- {
			f *= 1024
		}
		return strconv.FormatFloat(f, 'f', 2, 64) + string(u.force)
	}
	for v%1024 == 0 && unit < len(unitChars)-1 {
		v /= 1024
		unit++
	}
	return itoa(v) + string(unitChars[unit])
}

// reqMem is the job's requested memory as 22.05 prints it: the memory of
// its requested TRES, in MiB units.
func (u *units) reqMem(j *acct.Job) string {
	for _, kv := range strings.Split(j.ReqTRES, ",") {
		if v, ok := strings.CutPrefix(kv, "mem="); ok {
			return u.convert(parseMiB(v), 1)
		}
	}
	mem := j.ReqMem
	if j.ReqMemPerCPU && j.NNodes > 0 {
		mem = mem * int64(j.NCPUs) / int64(j.NNodes)
	}
	return u.convert(mem, 1)
}

// parseMiB reads a TRES memory count ("250M", "4G") in MiB.
func parseMiB(s string) int64 {
	if s == "" {
		return 0
	}
	mult := int64(1)
	switch s[len(s)-1] {
	case 'K':
		mult, s = -1024, s[:len(s)-1]
	case 'M':
		s = s[:len(s)-1]
	case 'G':
		mult, s = 1024, s[:len(s)-1]
	case 'T':
		mult, s = 1024*1024, s[:len(s)-1]
	}
	n, _ := strconv.ParseInt(s, 10, 64)
	if mult < 0 {
		return n / -mult
	}
	return n * mult
}
