package scontrol

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/drover-hpc/drover/internal/cli"
	"github.com/drover-hpc/drover/internal/hostlist"
	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/units"
)

// showJob prints one job (or array) or every job the controller holds.
func (r *runner) showJob(arg string) {
	var target *cli.JobTarget
	q := cli.JobQuery{IncludeAll: true}
	if arg != "" {
		ts, err := cli.ParseJobTargets([]string{arg})
		if err != nil || len(ts) != 1 || ts[0].HasStep {
			r.perror("scontrol_print_job error", errors.New(cli.MsgInvalidJobID))
			return
		}
		target = &ts[0]
		q.IDs = []model.JobID{target.ID}
	}
	c := r.client("slurm_load_jobs error")
	if c == nil {
		return
	}
	list, err := c.ListJobs(r.ctx, q)
	if err != nil {
		r.perror("slurm_load_jobs error", err)
		return
	}
	if target != nil && len(list.Jobs) == 0 {
		r.perror("slurm_load_jobs error", errors.New(cli.MsgInvalidJobID))
		return
	}
	now := list.Now
	if now == 0 {
		now = r.env.Now().Unix()
	}
	printed := 0
	for _, j := range list.Jobs {
		if target != nil && !targetHas(*target, j) {
			continue
		}
		fmt.Fprint(r.env.Stdout, r.jobRecord(j, now))
		printed++
	}
	switch {
	case printed > 0:
	case target == nil:
		if !r.quiet {
			fmt.Fprintln(r.env.Stdout, "No jobs in the system")
		}
	default:
		r.fail()
		if !r.quiet {
			fmt.Fprintf(r.env.Stdout, "Job %s not found\n", target.Raw)
		}
	}
}

// targetHas reports whether t names j: the job itself, or a task of the
// array t names (all tasks when t lists none).
func targetHas(t cli.JobTarget, j *model.Job) bool {
	if t.Tasks == nil {
		return j.ID == t.ID || (j.IsArrayTask() && j.ArrayJobID == t.ID)
	}
	return j.IsArrayTask() && j.ArrayJobID == t.ID && slices.Contains(t.Tasks, j.ArrayTaskID)
}

// lineEnd separates fields that Slurm puts on different lines.
func (r *runner) lineEnd() string {
	if r.oneLiner {
		return " "
	}
	return "\n   "
}

// recordEnd closes a record: a blank line after each, unless -o.
func (r *runner) recordEnd() string {
	if r.oneLiner {
		return "\n"
	}
	return "\n\n"
}

// jobRecord formats j as scontrol show job does.
func (r *runner) jobRecord(j *model.Job, now int64) string {
	spec := j.Spec
	if spec == nil {
		spec = &model.JobSpec{}
	}
	le := r.lineEnd()
	var b strings.Builder
	name := orNull(firstNonEmpty(j.Name, spec.Name))
	fmt.Fprintf(&b, "JobId=%d ", j.ID)
	if j.IsArrayTask() {
		fmt.Fprintf(&b, "ArrayJobId=%d ArrayTaskId=%d ", j.ArrayJobID, j.ArrayTaskID)
		if spec.Array != nil && spec.Array.Throttle > 0 {
			fmt.Fprintf(&b, "ArrayTaskThrottle=%d ", spec.Array.Throttle)
		}
	}
	fmt.Fprintf(&b, "JobName=%s%s", name, le)
	userName := j.UserName
	if userName == "" {
		userName = r.userName(j.UserID)
	}
	fmt.Fprintf(&b, "UserId=%s(%d) GroupId=%s(%d) MCS_label=N/A%s",
		userName, j.UserID, r.groupName(j.GroupID), j.GroupID, le)
	fmt.Fprintf(&b, "Priority=%d Nice=%d Account=%s QOS=%s%s",
		j.Priority, j.Nice, orNull(spec.Account), orNull(spec.QOS), le)

	state, _ := j.DisplayState()
	reason := model.ReasonNone
	if j.Reason != "" {
		reason = strings.Map(func(c rune) rune {
			if c == ' ' || c == '\t' || c == '\n' {
				return '_'
			}
			return c
		}, j.Reason)
	}
	dep := "(null)"
	if spec.Dependency != nil && spec.Dependency.Raw != "" && j.State == model.JobPending {
		dep = spec.Dependency.Raw
	}
	fmt.Fprintf(&b, "JobState=%s Reason=%s Dependency=%s%s", state, reason, dep, le)

	batch := !spec.Interactive
	fmt.Fprintf(&b, "Requeue=%d Restarts=%d BatchFlag=%d Reboot=0 ExitCode=%d:%d%s",
		b2i(spec.Requeue), j.Restarts, b2i(batch), j.ExitCode, j.Signal, le)
	if r.details > 0 {
		fmt.Fprintf(&b, "DerivedExitCode=%d:%d%s", j.ExitCode, j.Signal, le)
	}

	fmt.Fprintf(&b, "RunTime=%s TimeLimit=%s TimeMin=%s%s",
		units.FormatElapsed(runTime(j, now)), limitString(j.TimeLimit), timeMin(spec.TimeMin), le)
	fmt.Fprintf(&b, "SubmitTime=%s EligibleTime=%s%s",
		stamp(j.SubmitTime), stamp(j.EligibleTime), le)
	accrue := j.EligibleTime
	if spec.Interactive { // srun/salloc jobs never wait in the queue for priority
		accrue = 0
	}
	fmt.Fprintf(&b, "AccrueTime=%s%s", stamp(accrue), le)
	fmt.Fprintf(&b, "StartTime=%s EndTime=%s Deadline=N/A%s", stamp(j.StartTime), stamp(endTime(j)), le)
	lastEval := j.StartTime
	if lastEval == 0 {
		lastEval = j.SubmitTime
	}
	fmt.Fprintf(&b, "SuspendTime=%s SecsPreSuspend=%d LastSchedEval=%s Scheduler=Main%s", stampOr(j.SuspendTime, "None"), j.SecsPreSuspend, stamp(lastEval), le)

	fmt.Fprintf(&b, "Partition=%s AllocNode:Sid=%s:0%s",
		orNull(firstNonEmpty(j.Partition, spec.Partition)), orNull(spec.SubmitHost), le)
	fmt.Fprintf(&b, "ReqNodeList=%s ExcNodeList=%s%s",
		orNull(hostlist.Compress(spec.ReqNodes)), orNull(hostlist.Compress(spec.ExcNodes)), le)
	fmt.Fprintf(&b, "NodeList=%s", hostlist.Compress(j.NodeNames()))
	if j.SchedNodes != "" {
		fmt.Fprintf(&b, " SchedNodeList=%s", j.SchedNodes) // backfill's planned nodes
	}
	b.WriteString(le)
	if h := j.BatchHost(); h != "" {
		fmt.Fprintf(&b, "BatchHost=%s%s", h, le)
	}

	nodes, cpus := jobSize(j, spec)
	nodeStr := strconv.Itoa(nodes)
	if j.State == model.JobPending && spec.MaxNodes > 0 {
		nodeStr = fmt.Sprintf("%d-%d", min(nodes, spec.MaxNodes), spec.MaxNodes)
	}
	fmt.Fprintf(&b, "NumNodes=%s NumCPUs=%d NumTasks=%d CPUs/Task=%d ReqB:S:C:T=0:0:*:*%s",
		nodeStr, cpus, numTasks(spec, nodes), max(1, spec.CPUsPerTask), le)
	tres := fmt.Sprintf("cpu=%d", cpus)
	if mem := jobMem(j, spec, nodes, cpus); mem > 0 {
		tres += ",mem=" + memExact(mem)
	}
	tres += fmt.Sprintf(",node=%d,billing=%d", nodes, cpus)
	if g := jobGPUs(j, spec, nodes); g > 0 {
		tres += fmt.Sprintf(",gres/gpu=%d", g)
	}
	fmt.Fprintf(&b, "TRES=%s%s", tres, le)
	fmt.Fprintf(&b, "Socks/Node=* NtasksPerN:B:S:C=%d:0:*:* CoreSpec=*%s", max(0, spec.TasksPerNode), le)
	if r.details > 0 && len(j.Alloc) > 0 {
		b.WriteString(allocDetail(j, le))
	}

	memKind, memVal := "Node", "0"
	switch {
	case spec.MemPerCPU > 0:
		memKind, memVal = "CPU", memExact(spec.MemPerCPU)
	case spec.MemPerNode > 0:
		memVal = memExact(spec.MemPerNode)
	}
	fmt.Fprintf(&b, "MinCPUsNode=%d MinMemory%s=%s MinTmpDiskNode=0%s",
		max(max(1, spec.CPUsPerTask)*max(1, spec.TasksPerNode), spec.MinCPUsNode), memKind, memVal, le)
	fmt.Fprintf(&b, "Features=%s DelayBoot=00:00:00%s", orNull(spec.Features), le)
	if spec.Reservation != "" {
		fmt.Fprintf(&b, "Reservation=%s%s", spec.Reservation, le)
	}
	share := "OK"
	if spec.Exclusive {
		share = "NO"
	}
	fmt.Fprintf(&b, "OverSubscribe=%s Contiguous=0 Licenses=(null) Network=(null)%s", share, le)
	command := "(null)"
	if !batch && len(spec.Argv) > 0 {
		command = strings.Join(spec.Argv, " ")
	}
	fmt.Fprintf(&b, "Command=%s%s", command, le)
	fmt.Fprintf(&b, "WorkDir=%s", orNull(spec.WorkDir))
	if c := firstNonEmpty(j.Comment, spec.Comment); c != "" {
		fmt.Fprintf(&b, "%sComment=%s ", le, c)
	}
	if batch {
		p := r.paths(j, spec, userName)
		fmt.Fprintf(&b, "%sStdErr=%s%sStdIn=%s%sStdOut=%s", le, p.err, le, p.in, le, p.out)
	}
	fmt.Fprintf(&b, "%sPower=%s", le, le)
	for _, l := range gpuLines(spec.GPUs) {
		b.WriteString(l + le)
	}
	b.WriteString(r.recordEnd())
	return b.String()
}

// runTime is how long j has run: zero while pending, up to now while
// running, start to end once finished.
func runTime(j *model.Job, now int64) int64 {
	if j.StartTime <= 0 || j.State == model.JobPending {
		return 0
	}
	end := j.EndTime
	if !j.State.Final() || end <= 0 {
		end = now
	}
	return max(0, end-j.StartTime-j.SuspendedFor(end))
}

// endTime is the job's end, or its expected end while it runs under a limit.
func endTime(j *model.Job) int64 {
	if j.State.Final() {
		return j.EndTime
	}
	if j.StartTime > 0 && j.TimeLimit > 0 {
		return j.StartTime + j.TimeLimit
	}
	return 0
}

// limitString prints a time limit as scontrol does: HH:MM:SS, D-HH:MM:SS,
// UNLIMITED, or Partition_Limit when none was set.
func limitString(secs int64) string {
	switch {
	case secs == model.Unlimited:
		return "UNLIMITED"
	case secs <= 0:
		return "Partition_Limit"
	}
	return units.FormatElapsed(secs)
}

func timeMin(secs int64) string {
	if secs <= 0 {
		return "N/A"
	}
	return units.FormatElapsed(secs)
}

// jobSize is the node and CPU count: allocated ones once running, requested
// ones before.
func jobSize(j *model.Job, spec *model.JobSpec) (nodes, cpus int) {
	if len(j.Alloc) > 0 {
		return len(j.Alloc), j.TotalCPUs()
	}
	return max(1, spec.MinNodes), spec.ReqCPUs()
}

func numTasks(spec *model.JobSpec, nodes int) int {
	switch {
	case spec.NTasks > 0:
		return spec.NTasks
	case spec.TasksPerNode > 0:
		return spec.TasksPerNode * nodes
	}
	return 1
}

// jobMem is the job's total memory in MiB: allocated, else requested.
func jobMem(j *model.Job, spec *model.JobSpec, nodes, cpus int) int64 {
	var sum int64
	for _, a := range j.Alloc {
		sum += a.Mem
	}
	switch {
	case sum > 0:
		return sum
	case spec.MemPerCPU > 0:
		return spec.MemPerCPU * int64(cpus)
	case spec.MemPerNode > 0:
		return spec.MemPerNode * int64(nodes)
	}
	return 0
}

// memExact prints MiB in the largest unit that divides it exactly, as
// Slurm's TRES and memory fields do: "250M", "4G", "16000M".
func memExact(mib int64) string {
	switch {
	case mib == 0:
		return "0"
	case mib%(1024*1024*1024) == 0:
		return strconv.FormatInt(mib/(1024*1024*1024), 10) + "P"
	case mib%(1024*1024) == 0:
		return strconv.FormatInt(mib/(1024*1024), 10) + "T"
	case mib%1024 == 0:
		return strconv.FormatInt(mib/1024, 10) + "G"
	}
	return strconv.FormatInt(mib, 10) + "M"
}

func stamp(unix int64) string { return units.FormatTimestamp(unix, "Unknown") }

func orNull(s string) string {
	if s == "" {
		return "(null)"
	}
	return s
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// userName and groupName resolve ids once per run; unknown ids print as
// numbers, as Slurm does.
func (r *runner) userName(uid uint32) string {
	return cachedName(&r.users, uid, func(id string) (string, error) {
		u, err := r.env.LookupUserID(id)
		if err != nil {
			return "", err
		}
		return u.Username, nil
	})
}

func (r *runner) groupName(gid uint32) string {
	return cachedName(&r.groups, gid, func(id string) (string, error) {
		g, err := r.env.LookupGroupID(id)
		if err != nil {
			return "", err
		}
		return g.Name, nil
	})
}

func cachedName(cache *map[uint32]string, id uint32, lookup func(string) (string, error)) string {
	if *cache == nil {
		*cache = map[uint32]string{}
	}
	if n, ok := (*cache)[id]; ok {
		return n
	}
	s := strconv.FormatUint(uint64(id), 10)
	n, err := lookup(s)
	if err != nil || n == "" {
		n = s
	}
	(*cache)[id] = n
	return n
}
