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

// showStep prints the running steps of every job, of one job or array
// ("123", "123_4") or one step ("123.0", "123_4.batch"), in Slurm 22.05's
// layout.
func (r *runner) showStep(arg string) {
	var target *cli.JobTarget
	q := cli.JobQuery{Summary: true, WithSteps: true}
	if arg != "" {
		ts, err := cli.ParseJobTargets([]string{arg})
		if err != nil || len(ts) != 1 || len(ts[0].Tasks) > 1 {
			r.perror("slurm_get_job_steps error", errors.New(cli.MsgInvalidJobID))
			return
		}
		target = &ts[0]
		q.IDs, q.IncludeAll = []model.JobID{target.ID}, true
	}
	c := r.client("slurm_get_job_steps error")
	if c == nil {
		return
	}
	list, err := c.ListJobs(r.ctx, q)
	if err != nil {
		r.perror("slurm_get_job_steps error", err)
		return
	}
	printed, known := 0, false
	for _, j := range list.Jobs {
		if target != nil {
			// Like slurmctld, know the job (or array) by its id, then
			// pick the array task.
			if j.ID != target.ID && !(j.IsArrayTask() && j.ArrayJobID == target.ID) {
				continue
			}
			known = true
			if !targetHas(*target, j) {
				continue
			}
		}
		for _, s := range j.ActiveSteps() {
			if target != nil && target.HasStep && s.ID != target.Step {
				continue
			}
			fmt.Fprint(r.env.Stdout, r.stepRecord(j, s))
			printed++
		}
	}
	switch {
	case printed > 0:
	case target == nil:
		if !r.quiet {
			fmt.Fprintln(r.env.Stdout, "No job steps in the system")
		}
	case !known:
		// The controller answers a query for a job it does not hold with
		// an error, not with an empty list.
		r.perror("slurm_get_job_steps error", errors.New(cli.MsgInvalidJobID))
	default:
		r.fail()
		if !r.quiet {
			fmt.Fprintf(r.env.Stdout, "Job step %s not found\n", stepTargetText(*target))
		}
	}
}

// stepTargetText names a target as Slurm's "Job step ... not found" does:
// "123.7", "123_4.batch", and "123." when no step was named.
func stepTargetText(t cli.JobTarget) string {
	s := strconv.FormatUint(uint64(t.ID), 10)
	if len(t.Tasks) == 1 {
		s += "_" + strconv.Itoa(t.Tasks[0])
	}
	s += "."
	if t.HasStep {
		s += t.Step.String()
	}
	return s
}

// stepRecord formats s of job j as scontrol show step does.
func (r *runner) stepRecord(j *model.Job, s *model.Step) string {
	le := r.lineEnd()
	var b strings.Builder
	limit := "UNLIMITED"
	if s.TimeLimit > 0 {
		limit = units.FormatElapsed(s.TimeLimit)
	}
	fmt.Fprintf(&b, "StepId=%s.%s UserId=%d StartTime=%s TimeLimit=%s%s",
		j.DisplayID(), s.ID, j.UserID, stamp(s.StartTime), limit, le)
	fmt.Fprintf(&b, "State=%s Partition=%s NodeList=%s%s",
		s.State, orNull(j.Partition), orNull(hostlist.Compress(s.NodeNames())), le)

	cpus, tasks, gpus := 0, 0, 0
	var mem int64
	for _, n := range s.Layout {
		cpus += n.CPUs
		tasks += len(n.Tasks)
		gpus += n.GPUs.Count()
		if i := slices.IndexFunc(j.Alloc, func(a model.NodeAlloc) bool { return a.Node == n.Node }); i >= 0 {
			mem += j.Alloc[i].Mem
		}
	}
	if s.NTasks > 0 {
		tasks = s.NTasks
	}
	fmt.Fprintf(&b, "Nodes=%s CPUs=%d Tasks=%d Name=%s Network=(null)%s",
		countExact(int64(len(s.Layout))), cpus, tasks, orNull(s.Name), le)
	fmt.Fprintf(&b, "TRES=cpu=%d,mem=%s,node=%d", cpus, memExact(mem), len(s.Layout))
	if gpus > 0 {
		fmt.Fprintf(&b, ",gres/gpu=%d", gpus)
	}
	b.WriteString(le)
	fmt.Fprintf(&b, "ResvPorts=(null)%s", le)
	b.WriteString("CPUFreqReq=Default")
	host, pid := "(null)", 0
	if sp := s.Spec; sp != nil {
		fmt.Fprintf(&b, " Dist=%s", distName(sp.Distribution))
		host, pid = orNull(sp.SrunHost), sp.SrunPID
	}
	fmt.Fprintf(&b, "%sSrunHost:Pid=%s:%d", le, host, pid)
	if s.Spec != nil {
		for _, l := range gpuLines(s.Spec.GPUs) {
			// A step's request for the whole of it is its TresPerStep.
			b.WriteString(le + strings.Replace(l, "TresPerJob=", "TresPerStep=", 1))
		}
	}
	b.WriteString(r.recordEnd())
	return b.String()
}

// distName is a task distribution as Slurm names it; srun's default is
// block.
func distName(d model.Distribution) string {
	switch d {
	case "", model.DistBlock:
		return "Block"
	case model.DistCyclic:
		return "Cyclic"
	}
	v := string(d)
	return strings.ToUpper(v[:1]) + v[1:]
}

// countExact prints a count as Slurm's exact unit conversion does: whole
// multiples of 1024 take a suffix ("1K"), anything else stays as it is.
func countExact(n int64) string {
	suffix := []string{"", "K", "M", "G", "T", "P"}
	i := 0
	for n != 0 && n%1024 == 0 && i < len(suffix)-1 {
		n /= 1024
		i++
	}
	return strconv.FormatInt(n, 10) + suffix[i]
}
