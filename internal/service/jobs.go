package service

import (
	"context"
	"os/user"
	"slices"
	"strconv"
	"strings"

	"github.com/drover-hpc/drover/internal/api"
	"github.com/drover-hpc/drover/internal/fsm"
	"github.com/drover-hpc/drover/internal/hostlist"
	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/state"
)

// ListJobs returns the jobs with the given ids (an array id names all its
// tasks, whatever their state), or every unfinished job — and the finished
// ones still in memory when q.IncludeAll is set. With q.WithSpec, the jobs
// whose script and environment the caller may not read come as copies
// without them.
func (s *Service) ListJobs(ctx context.Context, q api.JobQuery) (*api.JobList, error) {
	jobs, now, err := s.listJobs(ctx, q.IDs, q.IncludeAll)
	if err != nil || !q.WithSpec {
		return &api.JobList{Jobs: jobs, Now: now}, err
	}
	visible, err := s.SpecVisible(ctx)
	if err != nil {
		return nil, err
	}
	for i, j := range jobs {
		if !visible(j) && j.Spec != nil && (j.Spec.Script != "" || len(j.Spec.Env) > 0) {
			c, spec := *j, *j.Spec
			spec.Script, spec.Env = "", nil
			c.Spec = &spec
			jobs[i] = &c
		}
	}
	return &api.JobList{Jobs: jobs, Now: now}, nil
}

// activeList is the unfinished jobs of one snapshot, in id order.
type activeList struct {
	snap *state.Snapshot
	jobs []*model.Job
}

func (s *Service) listJobs(ctx context.Context, ids []model.JobID, finished bool) ([]*model.Job, int64, error) {
	if _, err := s.Identify(ctx); err != nil {
		return nil, 0, err
	}
	snap := s.store.Snapshot()
	now := s.clock.Now().Unix()
	if len(ids) == 0 {
		if !finished {
			// A snapshot is immutable: the queue it holds is walked once
			// (100,000 jobs: ~8 ms), and each listing of it gets its own
			// copy (ListJobs may replace entries).
			if l := s.active.Load(); l != nil && l.snap == snap {
				return slices.Clone(l.jobs), now, nil
			}
			out := make([]*model.Job, 0, snap.NumActive())
			snap.EachActive(func(j *model.Job) bool { out = append(out, j); return true })
			s.active.Store(&activeList{snap: snap, jobs: out})
			return slices.Clone(out), now, nil
		}
		out := make([]*model.Job, 0, snap.NumJobs())
		snap.EachJob(func(j *model.Job) bool { out = append(out, j); return true })
		return out, now, nil
	}
	return lookupJobs(snap, ids), now, nil
}

// SpecVisible returns, for the caller, which jobs' full specs (batch
// script, environment) it may read: its own, or every job for an
// operator. Others see the rest of a job as squeue and scontrol show it,
// as in Slurm, where only the owner and admins get a job's script.
func (s *Service) SpecVisible(ctx context.Context) (func(*model.Job) bool, error) {
	id, err := s.Identify(ctx)
	if err != nil {
		return nil, err
	}
	if s.privileged(id) {
		return func(*model.Job) bool { return true }, nil
	}
	return func(j *model.Job) bool { return j.UserID == id.UID }, nil
}

func lookupJobs(snap *state.Snapshot, ids []model.JobID) []*model.Job {
	var out []*model.Job
	seen := map[model.JobID]bool{}
	for _, id := range ids {
		j := snap.Job(id)
		if j == nil {
			continue
		}
		group := []*model.Job{j}
		if j.IsArrayTask() && j.ArrayJobID == id {
			group = snap.ArrayTasks(id)
		}
		for _, g := range group {
			if !seen[g.ID] {
				seen[g.ID] = true
				out = append(out, g)
			}
		}
	}
	return out
}

// maxWatchIDs bounds the jobs one watch names. Every commit wakes every
// watch, which looks up each job it names (an array's tasks each time
// its id is named): one watch naming an array of 2,000 tasks two million
// times (8 MiB) made the controller's CPU per held submission 13 times
// what it was. The commands watch one job each (srun, salloc, sbatch
// --wait).
const maxWatchIDs = 64

// WatchJobs calls fn with the jobs now and after every change to any of
// them, until fn returns false or ctx ends.
func (s *Service) WatchJobs(ctx context.Context, ids []model.JobID, fn func([]*model.Job) bool) error {
	if _, err := s.Identify(ctx); err != nil {
		return err
	}
	if len(ids) > 1 {
		// Each job once, in the order named.
		seen := make(map[model.JobID]bool, min(len(ids), maxWatchIDs+1))
		uniq := make([]model.JobID, 0, min(len(ids), maxWatchIDs+1))
		for _, id := range ids {
			if !seen[id] {
				if len(uniq) == maxWatchIDs {
					return invalid("Invalid job id specified: a watch names at most 64 jobs")
				}
				seen[id] = true
				uniq = append(uniq, id)
			}
		}
		ids = uniq
	}
	var last []*model.Job
	for {
		ch := s.store.Changed()
		jobs := lookupJobs(s.store.Snapshot(), ids)
		if !slices.Equal(jobs, last) {
			if !fn(jobs) {
				return nil
			}
			last = jobs
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ch:
		}
	}
}

// ListNodes returns every node.
func (s *Service) ListNodes(ctx context.Context) ([]*model.Node, error) {
	if _, err := s.Identify(ctx); err != nil {
		return nil, err
	}
	nodes := s.store.Snapshot().Nodes()
	if src, ok := s.notify.(plannedSource); ok {
		if planned := src.PlannedNodes(); len(planned) > 0 {
			// Snapshot nodes are shared: mark copies.
			for i, n := range nodes {
				if planned[n.Name] {
					c := n.Clone()
					c.Planned = true
					nodes[i] = c
				}
			}
		}
	}
	return nodes, nil
}

// plannedSource is a Notifier that also knows which nodes the last
// scheduling pass holds for waiting jobs (the controller is one).
type plannedSource interface {
	PlannedNodes() map[string]bool
}

// ListPartitions returns every partition.
func (s *Service) ListPartitions(ctx context.Context) ([]*model.Partition, error) {
	if _, err := s.Identify(ctx); err != nil {
		return nil, err
	}
	return s.store.Snapshot().Partitions(), nil
}

// selected is one job chosen by a selection, or a target that failed.
type selected struct {
	job     *model.Job
	raw     string
	err     string
	hasStep bool
	step    model.StepID
}

// resolve turns a selection into jobs. Explicit targets that name nothing
// yield "Invalid job id specified"; filter-only selections by an ordinary
// user match only that user's jobs.
func (s *Service) resolve(snap *state.Snapshot, sel *api.JobSelection, id *api.Identity) []selected {
	var out []selected
	if sel.UID < 0 && sel.User != "" {
		sel.UID = lookupUID(sel.User)
	}
	if len(sel.Targets) == 0 {
		if !s.privileged(id) && sel.UID < 0 {
			sel.UID = int64(id.UID)
		}
		snap.EachActive(func(j *model.Job) bool {
			if matches(j, sel) {
				out = append(out, selected{job: j})
			}
			return true
		})
		return out
	}
	for _, t := range sel.Targets {
		j := snap.Job(t.ID)
		if j == nil {
			out = append(out, selected{raw: t.Raw, err: "Invalid job id specified"})
			continue
		}
		var group []*model.Job
		switch {
		case t.Tasks != nil:
			arrayID := t.ID
			if j.ArrayJobID != 0 {
				arrayID = j.ArrayJobID
			}
			tasks := snap.ArrayTasks(arrayID)
			for _, task := range t.Tasks {
				i := slices.IndexFunc(tasks, func(x *model.Job) bool { return x.ArrayTaskID == task })
				if i < 0 {
					out = append(out, selected{raw: strconv.Itoa(int(arrayID)) + "_" + strconv.Itoa(task), err: "Invalid job id specified"})
					continue
				}
				group = append(group, tasks[i])
			}
		case j.IsArrayTask() && j.ArrayJobID == t.ID:
			group = snap.ArrayTasks(t.ID)
		default:
			group = []*model.Job{j}
		}
		for _, g := range group {
			if matches(g, sel) {
				x := selected{job: g, raw: g.DisplayID(), hasStep: t.HasStep, step: t.Step}
				if t.HasStep {
					x.raw += "." + t.Step.String()
				}
				out = append(out, x)
			}
		}
	}
	return out
}

func lookupUID(name string) int64 {
	if n, err := strconv.ParseInt(name, 10, 64); err == nil {
		return n
	}
	if u, err := user.Lookup(name); err == nil {
		n, _ := strconv.ParseInt(u.Uid, 10, 64)
		return n
	}
	return 1 << 40 // matches nobody
}

func matches(j *model.Job, sel *api.JobSelection) bool {
	if sel.UID >= 0 && int64(j.UserID) != sel.UID {
		return false
	}
	if sel.Name != "" && !slices.Contains(strings.Split(sel.Name, ","), j.Name) {
		return false
	}
	if sel.Partition != "" && !slices.Contains(strings.Split(sel.Partition, ","), j.Partition) {
		return false
	}
	if len(sel.States) > 0 && !slices.Contains(sel.States, j.State) {
		return false
	}
	if sel.Account != "" && (j.Spec == nil || j.Spec.Account != sel.Account) {
		return false
	}
	if sel.QOS != "" && (j.Spec == nil || j.Spec.QOS != sel.QOS) {
		return false
	}
	if len(sel.Nodes) > 0 && !slices.ContainsFunc(j.Alloc, func(a model.NodeAlloc) bool { return slices.Contains(sel.Nodes, a.Node) }) {
		return false
	}
	return true
}

// Signal cancels (sig == 0) or signals the selected jobs.
// SignalScope says which processes of a job scancel --signal reaches.
type SignalScope int

const (
	// ScopeSteps, scancel's default: the job's steps, not the batch shell.
	ScopeSteps SignalScope = iota
	// ScopeBatch (--batch): the batch shell and its children only.
	ScopeBatch
	// ScopeFull (--full): the batch shell and every step.
	ScopeFull
)

// Signal cancels the selected jobs (Signal 0) or sends them the signal
// within the scope scancel's -b and -f name.
func (s *Service) Signal(ctx context.Context, sel api.JobSelection, req api.SignalRequest) ([]api.JobResult, error) {
	scope := ScopeSteps
	switch {
	case req.BatchOnly:
		scope = ScopeBatch
	case req.Full:
		scope = ScopeFull
	}
	return s.signal(ctx, sel, req.Signal, scope)
}

func (s *Service) signal(ctx context.Context, sel api.JobSelection, sig int, scope SignalScope) ([]api.JobResult, error) {
	id, err := s.Identify(ctx)
	if err != nil {
		return nil, err
	}
	snap := s.store.Snapshot()
	var results []api.JobResult
	var cancel, signal []model.JobID
	for _, x := range s.resolve(snap, &sel, id) {
		if x.err != "" {
			results = append(results, api.JobResult{Job: x.raw, Error: x.err})
			continue
		}
		j := x.job
		if x.hasStep && x.step >= 0 {
			results = append(results, s.signalStep(id, j, x, sig))
			continue
		}
		switch {
		case !s.privileged(id) && j.UserID != id.UID:
			results = append(results, api.JobResult{Job: j.DisplayID(), Error: "Access/permission denied"})
		case j.State.Final() || j.Completing:
			results = append(results, api.JobResult{Job: j.DisplayID(), Error: "Job/step already completing or completed"})
		case sig != 0 && j.State == model.JobPending:
			results = append(results, api.JobResult{Job: j.DisplayID(), Error: "Job is pending execution"})
		case sig != 0:
			signal = append(signal, j.ID)
			results = append(results, api.JobResult{Job: j.DisplayID()})
		default:
			cancel = append(cancel, j.ID)
			results = append(results, api.JobResult{Job: j.DisplayID()})
		}
	}
	if len(signal) > 0 {
		s.notify.Signal(signal, sig, scope)
	}
	if len(cancel) > 0 {
		res, err := s.raft.Apply(fsm.TypeCancel, &fsm.Cancel{Jobs: cancel, By: id.UID, Now: s.clock.Now().Unix()})
		if err != nil {
			return nil, errCommit(err)
		}
		s.notify.Terminate(res.(fsm.CancelResult).Terminate, "CANCELLED")
		s.notify.Kick()
	}
	return results, nil
}

// Control holds, releases or requeues the selected jobs.
func (s *Service) Control(ctx context.Context, sel api.JobSelection, action string) ([]api.JobResult, error) {
	id, err := s.Identify(ctx)
	if err != nil {
		return nil, err
	}
	priv := s.privileged(id)
	cmd := strings.ToLower(action)
	switch cmd {
	case "top":
		return s.topJobs(id, priv, sel)
	case "hold":
		cmd = "hold-user"
		if priv {
			cmd = "hold-admin"
		}
	case "uhold":
		cmd = "hold-user"
	case "release":
		if !priv {
			cmd = "release-user"
		}
	case "requeue", "requeuehold":
	case "suspend", "resume":
		// Operators only, as in Slurm.
		if !priv {
			return nil, errDenied
		}
	default:
		return nil, invalid("Invalid command: " + action)
	}
	snap := s.store.Snapshot()
	results, chosen := s.judge(snap, &sel, id, priv, func(j *model.Job) string {
		switch {
		case strings.HasPrefix(cmd, "hold") || strings.HasPrefix(cmd, "release"):
			if j.State != model.JobPending {
				return "Job is no longer pending execution"
			} else if cmd == "release-user" && j.HoldAdmin {
				return "Access/permission denied"
			}
		case cmd == "suspend" || cmd == "resume":
			switch {
			case j.State == model.JobPending:
				return "Job is pending execution"
			case j.Finished() || j.Completing:
				return "Job/step already completing or completed"
			case cmd == "resume" && !j.Suspended:
				return "Job is not suspended"
			case cmd == "resume" && j.SchedSuspended:
				// Preempted or gang-suspended: the scheduler resumes it.
				return "Requested operation is presently disabled"
			}
		case j.State == model.JobPending:
			return "Job is pending execution"
		case j.Spec != nil && !j.Spec.Requeue:
			// --no-requeue (or JobRequeue=0): Slurm refuses and leaves the
			// job as it is.
			return "Requested operation is presently disabled"
		case j.Completing:
			return "Job/step already completing or completed"
		}
		return ""
	})
	ids := make([]model.JobID, 0, len(chosen))
	for _, j := range chosen {
		ids = append(ids, j.ID)
	}
	if len(ids) > 0 {
		ctl := &fsm.Control{Jobs: ids, Action: cmd, Now: s.clock.Now().Unix()}
		if strings.HasPrefix(cmd, "release") {
			ctl.Priorities = s.releasePriorities(snap, chosen, ctl.Now)
		}
		res, err := s.raft.Apply(fsm.TypeControl, ctl)
		if err != nil {
			return nil, errCommit(err)
		}
		if r, ok := res.(fsm.CancelResult); ok {
			if len(r.Terminate) > 0 {
				s.notify.Terminate(r.Terminate, "REQUEUED")
			}
			if len(r.Suspend) > 0 {
				s.notify.Suspend(r.Suspend, true)
			}
			if len(r.Resume) > 0 {
				s.notify.Suspend(r.Resume, false)
			}
		}
		s.notify.Kick()
	}
	return results, nil
}

// UpdateNodes drains, resumes or downs nodes (administrators only).
func (s *Service) UpdateNodes(ctx context.Context, names []string, fields map[string]string) error {
	id, err := s.Identify(ctx)
	if err != nil {
		return err
	}
	if !s.privileged(id) {
		return errDenied
	}
	var nodes []string
	for _, n := range names {
		exp, err := hostlist.Expand(n)
		if err != nil {
			return invalid("Invalid node name specified")
		}
		nodes = append(nodes, exp...)
	}
	snap := s.store.Snapshot()
	for _, n := range nodes {
		if snap.Node(n) == nil {
			return invalid("Invalid node name specified")
		}
	}
	cmd := &fsm.UpdateNodes{Nodes: nodes, UID: id.UID, Now: s.clock.Now().Unix()}
	for k, v := range fields {
		switch strings.ToLower(k) {
		case "state":
			cmd.State = strings.ToUpper(v)
		case "reason":
			cmd.Reason = v
		default:
			return invalid("Update of this parameter is not supported: " + k)
		}
	}
	refused := false
	switch cmd.State {
	case "DRAIN", "DOWN":
		if cmd.Reason == "" {
			return invalid("You must specify a reason when DOWNING or DRAINING a node. Request denied")
		}
	case "RESUME", "UNDRAIN", "IDLE":
		// A node that registered fewer GPUs than configured (INVAL)
		// stays as it is until it registers them all, as in Slurm; the
		// other nodes named are updated (the log leaves INVAL ones).
		for _, n := range nodes {
			refused = refused || snap.Node(n).InvalidReg
		}
	default:
		return invalid("Invalid node state specified")
	}
	if _, err := s.raft.Apply(fsm.TypeUpdateNodes, cmd); err != nil {
		return errCommit(err)
	}
	s.notify.Kick()
	if refused {
		return invalid("Invalid node state specified")
	}
	return nil
}

// Reconfigure re-reads slurm.conf and installs its nodes and partitions.
func (s *Service) Reconfigure(ctx context.Context) error {
	id, err := s.Identify(ctx)
	if err != nil {
		return err
	}
	if !s.privileged(id) {
		return errDenied
	}
	if s.Reload == nil {
		return invalid("reconfigure is not available")
	}
	st, err := s.Reload()
	if err != nil {
		return invalid(err.Error())
	}
	if err := s.InstallConfig(st); err != nil {
		return err
	}
	// A joined node runs on the slurm.conf its join brought: it gets the
	// file read now, as configless slurmd gets slurmctld's.
	conf := ""
	if s.confText != nil {
		if conf, err = s.confText(); err != nil {
			conf = ""
		}
	}
	s.notify.Reconfigure(conf)
	s.notify.Kick()
	return nil
}

// InstallConfig commits the nodes and partitions of st and makes it current.
func (s *Service) InstallConfig(st *Settings) error {
	if _, err := s.raft.Apply(fsm.TypeSetConfig, &fsm.SetConfig{Nodes: st.Nodes, Partitions: st.Partitions, FirstJobID: st.FirstJobID}); err != nil {
		return errCommit(err)
	}
	s.SetSettings(st)
	return nil
}

// judge resolves sel and asks refuse, for each job the caller may act on
// (its own, or any for operators), Slurm's reason to leave it alone ("" to
// act). It returns one result per target and the jobs to act on.
func (s *Service) judge(snap *state.Snapshot, sel *api.JobSelection, id *api.Identity, priv bool,
	refuse func(*model.Job) string) ([]api.JobResult, []*model.Job) {
	var results []api.JobResult
	var jobs []*model.Job
	for _, x := range s.resolve(snap, sel, id) {
		if x.err != "" {
			results = append(results, api.JobResult{Job: x.raw, Error: x.err})
			continue
		}
		msg := "Access/permission denied"
		if priv || x.job.UserID == id.UID {
			msg = refuse(x.job)
		}
		results = append(results, api.JobResult{Job: x.job.DisplayID(), Error: msg})
		if msg == "" {
			jobs = append(jobs, x.job)
		}
	}
	return results, jobs
}

// releasePriorities ranks jobs about to be released against the current
// fair-share tree, as a submission is ranked, so a released job does not sit
// at priority 1 until the next PriorityCalcPeriod.
func (s *Service) releasePriorities(snap *state.Snapshot, jobs []*model.Job, now int64) map[model.JobID]uint32 {
	if !s.Settings().Priority.Multifactor || len(jobs) == 0 {
		return nil
	}
	p := s.newPrioritizer(snap, nil, false)
	out := make(map[model.JobID]uint32, len(jobs))
	for _, j := range jobs {
		out[j.ID] = p.Factors(j, now).Priority
	}
	return out
}
