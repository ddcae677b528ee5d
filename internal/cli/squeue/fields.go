package squeue

import (
	"strconv"
	"strings"
	"sync"

	"github.com/drover-hpc/drover/internal/cli"
	"github.com/drover-hpc/drover/internal/format"
	"github.com/drover-hpc/drover/internal/hostlist"
	"github.com/drover-hpc/drover/internal/model"
)

// renderCtx is what field values depend on besides the job.
type renderCtx struct {
	now       int64      // controller's clock, unix seconds
	noConvert bool       // --noconvert: memory stays in MiB
	groupsMu  sync.Mutex // rows are rendered in parts at once
	groups    map[uint32]string
	env       *cli.Env // names gids
}

func (c *renderCtx) groupName(gid uint32) string {
	c.groupsMu.Lock()
	defer c.groupsMu.Unlock()
	if n, ok := c.groups[gid]; ok {
		return n
	}
	n := strconv.FormatUint(uint64(gid), 10)
	if g, err := c.env.LookupGroupID(n); err == nil && g.Name != "" {
		n = g.Name
	}
	if c.groups == nil {
		c.groups = map[uint32]string{}
	}
	c.groups[gid] = n
	return n
}

const yearSecs = 365 * 24 * 3600

// timeUsed is how long j has run: 0 while pending, up to now while running.
func (c *renderCtx) timeUsed(j *model.Job) int64 {
	if j.StartTime == 0 || j.State == model.JobPending {
		return 0
	}
	end := j.EndTime
	if (j.State == model.JobRunning || j.State == model.JobSuspended) && !j.Completing || end == 0 {
		end = c.now
	}
	return max(0, end-j.StartTime-j.SuspendedFor(end))
}

// endTime is when j ended or is expected to end (0 = unknown).
func (c *renderCtx) endTime(j *model.Job) int64 {
	if j.EndTime != 0 || j.StartTime == 0 || j.State == model.JobPending {
		return j.EndTime
	}
	if j.TimeLimit > 0 {
		return j.StartTime + j.TimeLimit
	}
	return 0
}

func (c *renderCtx) timeLeftKey(j *model.Job) int64 {
	if j.TimeLimit < 0 {
		return limitKey(j.TimeLimit)
	}
	return j.TimeLimit - c.timeUsed(j)
}

func numNodes(j *model.Job) int {
	if len(j.Alloc) > 0 {
		return len(j.Alloc)
	}
	if j.Spec != nil && j.Spec.MinNodes > 0 {
		return j.Spec.MinNodes
	}
	return 1
}

func numCPUs(j *model.Job) int {
	if len(j.Alloc) > 0 {
		return j.TotalCPUs()
	}
	if j.Spec != nil {
		return j.Spec.ReqCPUs()
	}
	return 1
}

// minMemory is the memory request in MiB: per CPU when given so, else per
// node; 0 when unset.
func minMemory(j *model.Job) int64 {
	if j.Spec == nil {
		return 0
	}
	if j.Spec.MemPerCPU > 0 {
		return j.Spec.MemPerCPU
	}
	return max(j.Spec.MemPerNode, 0)
}

func dependency(j *model.Job) string {
	if j.Spec == nil || j.Spec.Dependency == nil || j.Spec.Dependency.Raw == "" {
		return "(null)"
	}
	return j.Spec.Dependency.Raw
}

// nodeList is the compressed list of allocated nodes.
func (r *jobRow) nodeList() string {
	if !r.hasNL {
		if len(r.job.Alloc) > 0 {
			r.nodes = hostlist.Compress(r.job.NodeNames())
		}
		r.hasNL = true
	}
	return r.nodes
}

// showsReason reports whether %R prints "(Reason)" instead of nodes.
func showsReason(j *model.Job) bool {
	if j.Completing {
		return false
	}
	switch j.State {
	case model.JobPending, model.JobFailed, model.JobTimeout, model.JobOOM, model.JobDeadline:
		return true
	}
	return false
}

func (r *jobRow) reasonText() string {
	if r.reason != "" {
		return r.reason
	}
	return reasonOf(r.job)
}

// appendSecs prints a duration as squeue does: M:SS, H:MM:SS or
// D-HH:MM:SS; INVALID when negative or above a year.
func appendSecs(dst []byte, t int64) []byte {
	if t > yearSecs {
		return append(dst, "INVALID"...)
	}
	return format.AppendClock(dst, t)
}

func appendLimit(dst []byte, l int64) []byte {
	switch {
	case l == model.Unlimited:
		return append(dst, "UNLIMITED"...)
	case l < 0:
		return append(dst, "NOT_SET"...)
	}
	return appendSecs(dst, l)
}

// appendTime prints unix seconds as local "YYYY-MM-DDTHH:MM:SS", or N/A.
func appendTime(dst []byte, t int64) []byte { return format.AppendTimestamp(dst, t, "N/A") }

// appendMem prints MiB with Slurm's exact unit conversion ("4G", "1.50G",
// "1000M").
func appendMem(dst []byte, mib int64, noConvert bool) []byte {
	return format.AppendUnits(dst, max(mib, 0), format.UnitMega, noConvert)
}

func orNull(s string) string {
	if s == "" {
		return "(null)"
	}
	return s
}

type appendFn = func([]byte, *jobRow) []byte

func fixed(v string) appendFn {
	return func(d []byte, _ *jobRow) []byte { return append(d, v...) }
}

func spec(f func(*model.JobSpec) string) appendFn {
	return func(d []byte, r *jobRow) []byte {
		if r.job.Spec == nil {
			return append(d, "(null)"...)
		}
		return append(d, orNull(f(r.job.Spec))...)
	}
}

func num[T ~int | ~int64 | ~uint32 | ~int32](f func(*jobRow) T) appendFn {
	return func(d []byte, r *jobRow) []byte { return strconv.AppendInt(d, int64(f(r)), 10) }
}

func fld(letter byte, name, header string, fn appendFn, aliases ...string) format.Field[*jobRow] {
	return format.Field[*jobRow]{Letter: letter, Name: name, Header: header, Append: fn, Aliases: aliases}
}

func nodesField(letter byte, name, header string, fn appendFn) format.Field[*jobRow] {
	f := fld(letter, name, header, fn)
	f.NoTruncate = true
	return f
}

// jobFields is squeue's field table: the letters of -o and the names of -O.
func jobFields(c *renderCtx) []format.Field[*jobRow] {
	return []format.Field[*jobRow]{
		fld('a', "Account", "ACCOUNT", spec(func(s *model.JobSpec) string { return s.Account })),
		fld('A', "JobID", "JOBID", num(func(r *jobRow) model.JobID {
			if r.tasks != nil {
				return r.job.ArrayJobID
			}
			return r.job.ID
		})),
		fld('b', "tres-per-node", "TRES_PER_NODE", gpuTRES("TresPerNode"), "gres"),
		fld('B', "BatchHost", "EXEC_HOST", format.Str(func(r *jobRow) string {
			if h := r.job.BatchHost(); h != "" {
				return h
			}
			return "n/a"
		})),
		fld('c', "MinCpus", "MIN_CPUS", num(func(r *jobRow) int {
			if s := r.job.Spec; s != nil {
				return max(max(s.CPUsPerTask, 1)*max(s.TasksPerNode, 1), s.MinCPUsNode)
			}
			return 1
		})),
		fld('C', "NumCPUs", "CPUS", num(func(r *jobRow) int { return numCPUs(r.job) })),
		fld('d', "MinTmpDisk", "MIN_TMP_DISK", fixed("0")),
		fld('D', "NumNodes", "NODES", num(func(r *jobRow) int { return numNodes(r.job) })),
		fld('e', "EndTime", "END_TIME", func(d []byte, r *jobRow) []byte {
			end := c.endTime(r.job)
			if r.job.TimeLimit == model.Unlimited && r.job.StartTime > 0 && (end == 0 || end > c.now) {
				return append(d, "NONE"...)
			}
			return appendTime(d, end)
		}),
		fld('E', "Dependency", "DEPENDENCY", format.Str(func(r *jobRow) string { return dependency(r.job) })),
		fld('f', "Feature", "FEATURES", format.Str(func(r *jobRow) string {
			if s := r.job.Spec; s != nil && s.Features != "" {
				return s.Features
			}
			return "(null)"
		})),
		fld('F', "ArrayJobID", "ARRAY_JOB_ID", num(func(r *jobRow) model.JobID { return baseID(r.job) })),
		fld('g', "GroupName", "GROUP", format.Str(func(r *jobRow) string { return c.groupName(r.job.GroupID) })),
		fld('G', "GroupID", "GROUP", num(func(r *jobRow) uint32 { return r.job.GroupID })),
		fld('h', "OverSubscribe", "OVER_SUBSCRIBE", format.Str(func(r *jobRow) string {
			if r.job.Spec != nil && r.job.Spec.Exclusive {
				return "NO"
			}
			return "OK"
		}), "shared"),
		fld('H', "Sockets", "SOCKETS_PER_NODE", fixed("*")),
		fld('i', "JobArrayID", "JOBID", func(d []byte, r *jobRow) []byte {
			j := r.job
			switch {
			case r.tasks != nil:
				d = strconv.AppendUint(d, uint64(j.ArrayJobID), 10)
				d = append(d, "_["...)
				d = append(d, r.expr...)
				return append(d, ']')
			case j.IsArrayTask():
				d = strconv.AppendUint(d, uint64(j.ArrayJobID), 10)
				d = append(d, '_')
				return strconv.AppendInt(d, int64(j.ArrayTaskID), 10)
			}
			return strconv.AppendUint(d, uint64(j.ID), 10)
		}),
		fld('I', "Cores", "CORES_PER_SOCKET", fixed("*")),
		fld('j', "Name", "NAME", format.Str(func(r *jobRow) string { return r.job.Name })),
		fld('J', "Threads", "THREADS_PER_CORE", fixed("*")),
		fld('k', "Comment", "COMMENT", format.Str(func(r *jobRow) string {
			if r.job.Comment != "" {
				return r.job.Comment
			}
			return orNull(specStr(r.job, func(s *model.JobSpec) string { return s.Comment }))
		})),
		fld('K', "ArrayTaskID", "ARRAY_TASK_ID", func(d []byte, r *jobRow) []byte {
			switch {
			case r.tasks != nil:
				return append(d, r.expr...)
			case r.job.IsArrayTask():
				return strconv.AppendInt(d, int64(r.job.ArrayTaskID), 10)
			}
			return append(d, "N/A"...)
		}),
		fld('l', "TimeLimit", "TIME_LIMIT", func(d []byte, r *jobRow) []byte { return appendLimit(d, r.job.TimeLimit) }),
		fld('L', "TimeLeft", "TIME_LEFT", func(d []byte, r *jobRow) []byte {
			if r.job.TimeLimit < 0 {
				return appendLimit(d, r.job.TimeLimit)
			}
			return appendSecs(d, r.job.TimeLimit-c.timeUsed(r.job))
		}),
		fld('m', "MinMemory", "MIN_MEMORY", func(d []byte, r *jobRow) []byte { return appendMem(d, minMemory(r.job), c.noConvert) }),
		fld('M', "TimeUsed", "TIME", func(d []byte, r *jobRow) []byte { return appendSecs(d, c.timeUsed(r.job)) }),
		nodesField('n', "ReqNodes", "REQ_NODES", func(d []byte, r *jobRow) []byte {
			if r.job.Spec == nil {
				return d
			}
			return append(d, hostlist.Compress(r.job.Spec.ReqNodes)...)
		}),
		nodesField('N', "NodeList", "NODELIST", func(d []byte, r *jobRow) []byte { return append(d, r.nodeList()...) }),
		fld('o', "Command", "COMMAND", format.Str(func(r *jobRow) string {
			if s := r.job.Spec; s != nil && s.Interactive && len(s.Argv) > 0 {
				return strings.Join(s.Argv, " ")
			}
			return "(null)"
		})),
		fld('O', "Contiguous", "CONTIGUOUS", fixed("0")),
		fld('p', "Priority", "PRIORITY", func(d []byte, r *jobRow) []byte {
			return strconv.AppendFloat(d, float64(r.job.Priority)/float64(^uint32(0)), 'f', 14, 64)
		}),
		fld('P', "Partition", "PARTITION", format.Str(func(r *jobRow) string { return r.job.Partition })),
		fld('q', "QOS", "QOS", spec(func(s *model.JobSpec) string { return s.QOS })),
		fld('Q', "PriorityLong", "PRIORITY", num(func(r *jobRow) uint32 { return r.job.Priority })),
		fld('r', "Reason", "REASON", format.Str((*jobRow).reasonText)),
		nodesField('R', "ReasonList", "NODELIST(REASON)", func(d []byte, r *jobRow) []byte {
			if showsReason(r.job) {
				d = append(d, '(')
				d = append(d, r.reasonText()...)
				return append(d, ')')
			}
			return append(d, r.nodeList()...)
		}),
		fld('S', "StartTime", "START_TIME", func(d []byte, r *jobRow) []byte { return appendTime(d, r.job.StartTime) }),
		fld('t', "StateCompact", "ST", format.Str(func(r *jobRow) string { _, s := r.job.DisplayState(); return s })),
		fld('T', "State", "STATE", format.Str(func(r *jobRow) string { l, _ := r.job.DisplayState(); return l })),
		fld('u', "UserName", "USER", func(d []byte, r *jobRow) []byte {
			if r.job.UserName != "" {
				return append(d, r.job.UserName...)
			}
			return strconv.AppendUint(d, uint64(r.job.UserID), 10)
		}),
		fld('U', "UserID", "UID", num(func(r *jobRow) uint32 { return r.job.UserID })),
		fld('v', "Reservation", "RESERVATION", format.Str(func(r *jobRow) string {
			if r.job.Spec != nil && r.job.Spec.Reservation != "" {
				return r.job.Spec.Reservation
			}
			return "(null)"
		})),
		fld('V', "SubmitTime", "SUBMIT_TIME", func(d []byte, r *jobRow) []byte { return appendTime(d, r.job.SubmitTime) }),
		fld('w', "WCKey", "WCKEY", fixed("(null)")),
		fld('W', "Licenses", "LICENSES", fixed("(null)")),
		nodesField('x', "ExcNodes", "EXC_NODES", func(d []byte, r *jobRow) []byte {
			if r.job.Spec == nil {
				return d
			}
			return append(d, hostlist.Compress(r.job.Spec.ExcNodes)...)
		}),
		fld('X', "CoreSpec", "CORE_SPEC", fixed("N/A")),
		fld('y', "Nice", "NICE", num(func(r *jobRow) int { return r.job.Nice })),
		nodesField('Y', "SchedNodes", "SCHEDNODES", func(d []byte, r *jobRow) []byte {
			if r.job.SchedNodes == "" {
				return append(d, "(null)"...)
			}
			return append(d, r.job.SchedNodes...)
		}),
		fld('z', "SCT", "S:C:T", fixed("*:*:*")),
		fld('Z', "WorkDir", "WORK_DIR", spec(func(s *model.JobSpec) string { return s.WorkDir })),

		// -O only.
		fld(0, "AccrueTime", "ACCRUE_TIME", func(d []byte, r *jobRow) []byte { return appendTime(d, r.job.EligibleTime) }),
		fld(0, "admin_comment", "ADMIN_COMMENT", fixed("(null)")),
		fld(0, "AllocNodes", "ALLOC_NODES", spec(func(s *model.JobSpec) string { return s.SubmitHost })),
		fld(0, "BatchFlag", "BATCH_FLAG", num(func(r *jobRow) int {
			if r.job.Spec != nil && !r.job.Spec.Interactive {
				return 1
			}
			return 0
		})),
		fld(0, "cpus-per-task", "CPUS_PER_TASK", num(func(r *jobRow) int {
			if r.job.Spec != nil {
				return max(r.job.Spec.CPUsPerTask, 1)
			}
			return 1
		}), "cpuspertask"),
		fld(0, "cpus-per-tres", "CPUS_PER_TRES", gpuPer(func(g *model.GPUReq) int64 { return int64(g.CPUsPerGPU) }, "N/A")),
		fld(0, "Deadline", "DEADLINE", fixed("N/A")),
		fld(0, "DerivedEC", "DERIVED_EC", fixed("0:0")),
		fld(0, "EligibleTime", "ELIGIBLE_TIME", func(d []byte, r *jobRow) []byte { return appendTime(d, r.job.EligibleTime) }),
		fld(0, "exit_code", "EXIT_CODE", func(d []byte, r *jobRow) []byte {
			d = strconv.AppendInt(d, int64(r.job.ExitCode), 10)
			d = append(d, ':')
			return strconv.AppendInt(d, int64(r.job.Signal), 10)
		}),
		fld(0, "HetJobID", "HET_JOB_ID", fixed("N/A"), "packjobid"),
		fld(0, "HetJobIDSet", "HET_JOB_ID_SET", fixed("N/A"), "packjobidset"),
		fld(0, "HetJobOffset", "HET_JOB_OFFSET", fixed("N/A"), "packjoboffset"),
		fld(0, "LastSchedEval", "LAST_SCHED_EVAL", fixed("N/A")),
		fld(0, "MaxCPUs", "MAX_CPUS", fixed("0")),
		fld(0, "MaxNodes", "MAX_NODES", num(func(r *jobRow) int {
			if r.job.Spec != nil {
				return max(r.job.Spec.MaxNodes, 0)
			}
			return 0
		})),
		fld(0, "mem-per-tres", "MEM_PER_TRES", gpuPer(func(g *model.GPUReq) int64 { return g.MemPerGPU }, "N/A")),
		fld(0, "MinTime", "TIME_MIN", func(d []byte, r *jobRow) []byte {
			if r.job.Spec == nil || r.job.Spec.TimeMin <= 0 {
				return append(d, "0:00"...)
			}
			return appendSecs(d, r.job.Spec.TimeMin)
		}),
		fld(0, "NTPerNode", "NTASKS_PER_NODE", func(d []byte, r *jobRow) []byte {
			if r.job.Spec == nil || r.job.Spec.TasksPerNode <= 0 {
				return append(d, "N/A"...)
			}
			return strconv.AppendInt(d, int64(r.job.Spec.TasksPerNode), 10)
		}),
		fld(0, "NumTasks", "TASKS", num(func(r *jobRow) int {
			if r.job.Spec != nil {
				return max(r.job.Spec.NTasks, 1)
			}
			return 1
		})),
		fld(0, "PendingTime", "PENDING_TIME", num(func(r *jobRow) int64 {
			if r.job.StartTime > 0 && r.job.StartTime < c.now {
				return r.job.StartTime - r.job.SubmitTime
			}
			return c.now - r.job.SubmitTime
		})),
		fld(0, "Requeue", "REQUEUE", num(func(r *jobRow) int {
			if r.job.Spec != nil && r.job.Spec.Requeue {
				return 1
			}
			return 0
		})),
		fld(0, "RestartCnt", "RESTART_COUNT", num(func(r *jobRow) int { return r.job.Restarts })),
		fld(0, "STDERR", "STDERR", format.Str(func(r *jobRow) string { return stdPath(r.job, true) })),
		fld(0, "STDIN", "STDIN", format.Str(func(r *jobRow) string {
			if r.job.Spec == nil || r.job.Spec.StdIn == "" {
				return "/dev/null"
			}
			return r.job.Spec.StdIn
		})),
		fld(0, "STDOUT", "STDOUT", format.Str(func(r *jobRow) string { return stdPath(r.job, false) })),
		fld(0, "system_comment", "SYSTEM_COMMENT", fixed("(null)")),
		fld(0, "tres-alloc", "TRES_ALLOC", func(d []byte, r *jobRow) []byte { return appendTRES(d, r.job, c.noConvert) }, "tres"),
		fld(0, "tres-bind", "TRES_BIND", fixed("N/A")),
		fld(0, "tres-freq", "TRES_FREQ", fixed("N/A")),
		fld(0, "tres-per-job", "TRES_PER_JOB", gpuTRES("TresPerJob")),
		fld(0, "tres-per-socket", "TRES_PER_SOCKET", fixed("N/A")),
		fld(0, "tres-per-task", "TRES_PER_TASK", gpuTRES("TresPerTask")),
	}
}

// gpuTRES prints the job's GPU request when it is of the kind key names
// (model.GPUReq.TRES: "gres:gpu:a100:2", as Slurm 22.05 stores
// tres_per_node and friends), N/A otherwise.
func gpuTRES(key string) appendFn {
	return func(d []byte, r *jobRow) []byte {
		if r.job.Spec != nil {
			if k, v := r.job.Spec.GPUs.TRES(); k == key {
				return append(d, v...)
			}
		}
		return append(d, "N/A"...)
	}
}

// gpuPer prints a per-GPU figure of the request as Slurm's cpus_per_tres
// and mem_per_tres read ("gres:gpu:4"), or none when it is not set.
func gpuPer(f func(*model.GPUReq) int64, none string) appendFn {
	return func(d []byte, r *jobRow) []byte {
		if r.job.Spec == nil || !r.job.Spec.GPUs.Any() || f(r.job.Spec.GPUs) <= 0 {
			return append(d, none...)
		}
		d = append(d, "gres:gpu:"...)
		return strconv.AppendInt(d, f(r.job.Spec.GPUs), 10)
	}
}

// jobGPUs is the job's GPU count for its TRES: what it holds once
// running, what it asks for before.
func jobGPUs(j *model.Job) int {
	n := 0
	for _, a := range j.Alloc {
		n += a.GPUs.Count()
	}
	if n > 0 || j.Spec == nil || !j.Spec.GPUs.Any() {
		return n
	}
	switch g := j.Spec.GPUs; {
	case g.Total > 0:
		return g.Total
	case g.PerNode > 0:
		return g.PerNode * numNodes(j)
	default:
		return g.PerTask * max(1, j.Spec.NTasks)
	}
}

// stdPath is the job's output file pattern, or Slurm's default.
func stdPath(j *model.Job, stderr bool) string {
	if s := j.Spec; s != nil {
		if stderr && s.StdErr != "" {
			return s.StdErr
		}
		if s.StdOut != "" {
			return s.StdOut
		}
		name := "slurm-" + strconv.FormatUint(uint64(j.ID), 10) + ".out"
		if j.IsArrayTask() {
			name = "slurm-" + strconv.FormatUint(uint64(j.ArrayJobID), 10) + "_" + strconv.Itoa(j.ArrayTaskID) + ".out"
		}
		return strings.TrimSuffix(s.WorkDir, "/") + "/" + name
	}
	return "(null)"
}

// appendTRES prints "cpu=N,mem=M,node=K,billing=N[,gres/gpu=G]": what j holds when
// running, what it asks for otherwise.
func appendTRES(d []byte, j *model.Job, noConvert bool) []byte {
	cpus, nodes := numCPUs(j), numNodes(j)
	var mem int64
	if len(j.Alloc) > 0 {
		for _, a := range j.Alloc {
			mem += a.Mem
		}
	} else if m := minMemory(j); m > 0 {
		if j.Spec.MemPerCPU > 0 {
			mem = m * int64(cpus)
		} else {
			mem = m * int64(nodes)
		}
	}
	d = append(d, "cpu="...)
	d = strconv.AppendInt(d, int64(cpus), 10)
	if mem > 0 {
		d = append(d, ",mem="...)
		d = appendMem(d, mem, noConvert)
	}
	d = append(d, ",node="...)
	d = strconv.AppendInt(d, int64(nodes), 10)
	d = append(d, ",billing="...)
	d = strconv.AppendInt(d, int64(cpus), 10)
	if g := jobGPUs(j); g > 0 {
		d = append(d, ",gres/gpu="...)
		d = strconv.AppendInt(d, int64(g), 10)
	}
	return d
}
