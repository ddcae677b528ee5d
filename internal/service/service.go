package service

import (
	"context"
	"github.com/drover-hpc/drover/internal/acct"
	"log/slog"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/drover-hpc/drover/internal/api"
	"github.com/drover-hpc/drover/internal/auth"
	"github.com/drover-hpc/drover/internal/clock"
	"github.com/drover-hpc/drover/internal/fsm"
	"github.com/drover-hpc/drover/internal/hostlist"
	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/sched"
	"github.com/drover-hpc/drover/internal/state"
)

// Committer commits commands to the replicated log.
type Committer interface {
	Apply(t fsm.Type, body any) (any, error)
}

// Notifier is told what the nodes must do after a commit.
type Notifier interface {
	Terminate(jobs []model.JobID, reason string)
	Signal(jobs []model.JobID, sig int, scope SignalScope)
	Kick() // something changed that scheduling should look at
	// Suspend freezes (true) or thaws (false) running jobs' processes.
	Suspend(jobs []model.JobID, suspend bool)
	// LaunchStep sends a committed step to its nodes.
	LaunchStep(j *model.Job, st *model.Step)
	// SignalStep signals a step's tasks, or terminates them.
	SignalStep(j *model.Job, st *model.Step, sig int, terminate bool)
	// AttachStep makes a step's nodes dial addr (sattach).
	AttachStep(j *model.Job, st *model.Step, addr, key string)
	// StepStats asks the job's nodes for the usage of its running steps.
	StepStats(ctx context.Context, j *model.Job, step model.StepID, hasStep bool) ([]api.StepStat, []string, error)
	// Fetch makes the job's nodes fetch a file (sbcast) and waits for them.
	Fetch(ctx context.Context, j *model.Job, req api.BroadcastRequest) ([]string, error)
	// Reconfigure tells every connected node that the configuration was
	// read again (their agents read theirs again); slurmConf is the
	// controller's, for nodes that run on the copy their join brought.
	Reconfigure(slurmConf string)
}

// Service implements every controller call.
type Service struct {
	log      *slog.Logger
	store    *state.Store
	raft     Committer
	clock    clock.Clock
	notify   Notifier
	settings atomic.Pointer[Settings]
	// Reload re-reads slurm.conf for scontrol reconfigure.
	Reload func() (*Settings, error)

	ca       *auth.CA
	confText func() (string, error)
	acct     acct.Store // nil: accounting disabled
	diag     DiagSource
	host     string
	// active is the last snapshot's unfinished jobs, listed (squeue).
	active atomic.Pointer[activeList]
	// feas keeps, per partition, its nodes and the cluster its last
	// feasibility check was made on: both are O(nodes) to build (10,000
	// lookups in the node map; sched.Feasibility), and a submission
	// needs them every time.
	feasMu sync.Mutex
	feas   map[string]*partFeas
	// initDB is the accounting database while none is replicated.
	initDB atomic.Pointer[initAcct]
}

type partFeas struct {
	part  *model.Partition
	set   state.NodeSet
	nodes []*model.Node // read-only: shared by the submissions
	f     sched.Feasibility
}

// New builds the service.
func New(log *slog.Logger, store *state.Store, raft Committer, clk clock.Clock, n Notifier, s *Settings) *Service {
	if log == nil {
		log = slog.Default()
	}
	svc := &Service{log: log, store: store, raft: raft, clock: clk, notify: n}
	svc.stampReset(s)
	svc.settings.Store(s)
	return svc
}

// Settings returns the configuration in force.
func (s *Service) Settings() *Settings { return s.settings.Load() }

// SetSettings installs a new configuration (reconfigure).
func (s *Service) SetSettings(st *Settings) {
	s.stampReset(st)
	s.settings.Store(st)
}

// Error is a refusal in Slurm's words (api's); transports map its Code to
// a status.
type Error = api.Error

// Code classifies errors for transports.
type Code = api.Code

const (
	CodeInvalid     = api.CodeInvalid
	CodeDenied      = api.CodeDenied
	CodeNotFound    = api.CodeNotFound
	CodeUnavailable = api.CodeUnavailable
	CodeBusy        = api.CodeBusy
)

func invalid(msg string) error { return &Error{Code: CodeInvalid, Msg: msg} }

var errDenied = &Error{Code: CodeDenied, Msg: "Access/permission denied"}

// Identify returns the caller of ctx, as the transport adapter that
// verified it put it there (api.WithIdentity).
func (s *Service) Identify(ctx context.Context) (*api.Identity, error) {
	id := api.IdentityFrom(ctx)
	if id == nil || id.Node != "" {
		// A node certificate speaks only the node protocol (Connect),
		// never the user and admin API: a stolen node key is one node,
		// not the cluster.
		return nil, errDenied
	}
	return id, nil
}

func (s *Service) privileged(id *api.Identity) bool { return id.Privileged(s.Settings().SlurmUID) }

// SubmitJob validates a job and commits it; it returns the job id only
// once the job is in the replicated log. The job keeps spec itself (the
// leader applies the command it built, without a decoded copy): a caller
// in the same process must not change spec afterwards.
func (s *Service) SubmitJob(ctx context.Context, spec *model.JobSpec) (model.JobID, error) {
	id, err := s.Identify(ctx)
	if err != nil {
		return 0, err
	}
	st := s.Settings()
	snap := s.store.Snapshot()
	if spec == nil {
		return 0, invalid("empty job specification")
	}
	if !spec.Interactive && strings.TrimSpace(spec.Script) == "" {
		return 0, invalid("Batch script is empty!")
	}
	maxScript := st.MaxScriptSize
	if maxScript <= 0 {
		maxScript = defaultMaxScriptSize
	}
	if err := checkJobSizes(spec, maxScript); err != nil {
		return 0, err
	}
	if err := s.checkPrivileged(spec, id); err != nil {
		return 0, err
	}
	if id, err = runAs(spec, id); err != nil {
		return 0, err
	}
	if err := checkJobCount(snap, spec, st.MaxJobCount); err != nil {
		return 0, err
	}
	if err := s.checkHeldBytes(st, spec, id); err != nil {
		return 0, err
	}
	if spec.WorkDir == "" || !filepath.IsAbs(spec.WorkDir) {
		return 0, invalid("Invalid working directory")
	}
	if spec.ReqNodes, err = expandNodes(snap, spec.ReqNodes); err != nil {
		return 0, err
	}
	if spec.ExcNodes, err = expandNodes(snap, spec.ExcNodes); err != nil {
		return 0, err
	}
	s.defaultAccount(spec, id)
	if err := checkJobReservation(snap, spec, id.User); err != nil {
		return 0, err
	}
	part, err := s.pickPartition(snap, spec, id)
	if err != nil {
		return 0, err
	}
	// EnforcePartLimits=NO (Slurm's default) queues a job over its
	// partition's size or time limits (PartitionNodeLimit,
	// PartitionTimeLimit); ALL and ANY refuse it.
	enforce := st.EnforcePartLimits != "" && st.EnforcePartLimits != "NO"
	limit, err := timeLimit(spec, part)
	if err != nil {
		if enforce {
			return 0, err
		}
		limit = spec.TimeLimit
	}
	overSize := overPartitionNodes(spec, part)
	if overSize && enforce {
		return 0, invalid("Node count specification invalid")
	}
	if a := spec.Array; a != nil && !validArray(a, st.MaxArraySize) {
		return 0, invalid("Invalid job array specification")
	}
	if err := checkDependency(snap, spec.Dependency); err != nil {
		return 0, err
	}
	if err := s.admitAccounting(snap, spec, id, part); err != nil {
		return 0, err
	}
	defaultMemory(spec, st)
	nodes := s.partNodes(snap, part)
	if err := checkFeatures(spec.Features, nodes); err != nil {
		return 0, err
	}
	if err := s.feasible(spec, part, nodes); err != nil && !overSize {
		return 0, invalid(err.Error())
	}
	prio := uint32(1)
	if st.Priority.Multifactor {
		now := s.clock.Now().Unix()
		j := &model.Job{Spec: spec, Partition: part.Name, UserName: id.User, Nice: spec.Nice, TimeLimit: limit, EligibleTime: now}
		prio = s.newPrioritizer(snap, nil, false).Factors(j, now).Priority
	}
	if spec.Priority != nil {
		// An operator's --priority; 0 holds the job, as in Slurm.
		if prio = *spec.Priority; prio == 0 {
			spec.Hold = true
		}
	}
	// The leader's FSM keeps this command's values in the job (it does not
	// decode a copy): Groups is the identity cache's list, clipped so that
	// an append on either side cannot write into the other.
	res, err := s.raft.Apply(fsm.TypeSubmit, &fsm.Submit{
		Spec: spec, UID: id.UID, GID: id.GID, Groups: slices.Clip(id.Groups), User: id.User,
		Partition: part.Name, TimeLimit: limit, Priority: prio, Now: s.clock.Now().Unix(),
	})
	if err != nil {
		return 0, errCommit(err)
	}
	if !spec.Hold {
		// A held job waits for a release, which asks for a pass: no
		// pass can start it or change its reason before then (a pass
		// per `sbatch -H` woke the scheduling loop twice, its rest timer
		// once more).
		s.notify.Kick()
	}
	return res.(fsm.SubmitResult).JobID, nil
}

func (s *Service) schedConfig() sched.Config {
	st := s.Settings()
	sc := st.Scheduler
	return sched.Config{DefMemPerCPU: st.DefMemPerCPU, DefMemPerNode: st.DefMemPerNode, Preempt: st.Preempt,
		Backfill: sc.Backfill, BfWindow: sc.BfWindow, BfResolution: sc.BfResolution,
		BfMaxJobTest: sc.BfMaxJobTest, BfMaxJobUser: sc.BfMaxJobUser, BfMaxJobArrayResv: sc.BfMaxJobArrayResv}
}

// SchedConfig is the scheduler configuration derived from the settings.
func (s *Service) SchedConfig() sched.Config { return s.schedConfig() }

// expandNodes turns -w/-x hostlist expressions into node names, all of
// which must exist.
func expandNodes(snap *state.Snapshot, exprs []string) ([]string, error) {
	var out []string
	for _, e := range exprs {
		names, err := hostlist.Expand(e)
		if err != nil {
			return nil, invalid("Invalid node name specified")
		}
		for _, n := range names {
			if snap.Node(n) == nil {
				return nil, invalid("Invalid node name specified")
			}
		}
		out = append(out, names...)
	}
	return out, nil
}

// partFeasLocked is part's entry; feasMu is held.
func (s *Service) partFeasLocked(part *model.Partition) *partFeas {
	pf := s.feas[part.Name]
	if pf == nil {
		if s.feas == nil {
			s.feas = map[string]*partFeas{}
		}
		pf = &partFeas{}
		s.feas[part.Name] = pf
	}
	return pf
}

// partNodes is partitionNodes(snap, part), kept while the partition and
// the nodes stay the same. The slice is shared: read it only.
func (s *Service) partNodes(snap *state.Snapshot, part *model.Partition) []*model.Node {
	s.feasMu.Lock()
	defer s.feasMu.Unlock()
	pf := s.partFeasLocked(part)
	if set := snap.NodeSet(); pf.nodes == nil || pf.part != part || pf.set != set {
		pf.part, pf.set, pf.nodes = part, set, partitionNodes(snap, part)
	}
	return pf.nodes
}

// feasible is sched.Feasible(spec, part, nodes), on the cluster kept for
// part while its nodes stay the same.
func (s *Service) feasible(spec *model.JobSpec, part *model.Partition, nodes []*model.Node) error {
	s.feasMu.Lock()
	defer s.feasMu.Unlock()
	return s.partFeasLocked(part).f.Check(spec, part, nodes, s.schedConfig())
}

func partitionNodes(snap *state.Snapshot, p *model.Partition) []*model.Node {
	out := make([]*model.Node, 0, len(p.Nodes))
	for _, name := range p.Nodes {
		if n := snap.Node(name); n != nil {
			out = append(out, n)
		}
	}
	return out
}

// pickPartition resolves the requested partition (or list) to the first
// one that exists and admits the user.
func (s *Service) pickPartition(snap *state.Snapshot, spec *model.JobSpec, id *api.Identity) (*model.Partition, error) {
	if spec.Partition == "" {
		p := snap.DefaultPartition()
		if p == nil {
			return nil, invalid("No partition specified or system default partition")
		}
		return p, s.admits(p, spec, id)
	}
	var firstErr error
	for _, name := range strings.Split(spec.Partition, ",") {
		p := snap.Partition(strings.TrimSpace(name))
		if p == nil {
			if firstErr == nil {
				firstErr = invalid("Invalid partition name specified")
			}
			continue
		}
		if err := s.admits(p, spec, id); err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		return p, nil
	}
	return nil, firstErr
}

func (s *Service) admits(p *model.Partition, spec *model.JobSpec, id *api.Identity) error {
	if p.State == model.PartInactive {
		return invalid("Partition in inactive state")
	}
	if len(p.AllowAccounts) > 0 && !slices.ContainsFunc(p.AllowAccounts, func(a string) bool { return strings.EqualFold(a, spec.Account) }) {
		return invalid(msgInvalidAccount)
	}
	if slices.ContainsFunc(p.DenyAccounts, func(a string) bool { return strings.EqualFold(a, spec.Account) }) {
		return invalid(msgInvalidAccount)
	}
	if len(p.AllowGroups) > 0 && !s.privileged(id) && !inGroups(p.AllowGroups, id) {
		return invalid("User's group not permitted to use this partition")
	}
	return nil
}

func inGroups(names []string, id *api.Identity) bool {
	for _, name := range names {
		g, err := user.LookupGroup(name)
		if err != nil {
			continue
		}
		gid, _ := strconv.ParseUint(g.Gid, 10, 32)
		if uint32(gid) == id.GID || slices.Contains(id.Groups, uint32(gid)) {
			return true
		}
	}
	return false
}

// overPartitionNodes reports whether the job asks for more nodes than its
// partition has or allows, or fewer than it requires.
func overPartitionNodes(spec *model.JobSpec, p *model.Partition) bool {
	n := max(1, spec.MinNodes)
	return n > len(p.Nodes) || (p.MaxNodes > 0 && n > p.MaxNodes) || n < p.MinNodes
}

func timeLimit(spec *model.JobSpec, p *model.Partition) (int64, error) {
	limit := spec.TimeLimit
	if limit == model.Unset || limit == 0 {
		limit = p.DefaultTime
		if limit == model.Unset || limit == 0 {
			limit = p.MaxTime
		}
		return limit, nil
	}
	if p.MaxTime != model.Unlimited && p.MaxTime > 0 && (limit == model.Unlimited || limit > p.MaxTime) {
		return 0, invalid("Requested time limit is invalid (missing or exceeds some limit)")
	}
	return limit, nil
}

func checkDependency(snap *state.Snapshot, d *model.Dependency) error {
	if d == nil {
		return nil
	}
	// The terms come parsed from the client; each needs at least two
	// characters of the text (":1", ",1"), which is bounded. A hand-made
	// spec with a short text and millions of terms cost the controller
	// tens of bytes per term in memory, in the log and in every pass.
	if len(d.Terms) > (len(d.Raw)+1)/2 {
		return invalid("Job dependency problem")
	}
	for _, t := range d.Terms {
		if t.Type == model.DepSingleton {
			continue
		}
		j := snap.Job(t.Job)
		if j == nil {
			// A job gone from memory finished long ago; only the
			// outcome-based types need it.
			switch t.Type {
			case model.DepAfterOK, model.DepAfterNotOK, model.DepAfterCorr:
				return invalid("Job dependency problem")
			}
			continue
		}
		if t.Task != model.NoArrayTask && j.ArrayJobID == 0 {
			return invalid("Job dependency problem")
		}
	}
	return nil
}

// defaultMemory gives a job that asks for no memory (no --mem,
// --mem-per-cpu or --mem-per-gpu) DefMemPerCPU, else DefMemPerNode, in its
// spec, as slurmctld does at submission: the job shows it from then on
// (scontrol show job MinMemoryCPU= and TRES mem=, squeue %m, sacct ReqMem)
// and its tasks get SLURM_MEM_PER_CPU, and a later change of the default
// leaves queued jobs as they were. The order is the scheduler's (package
// sched, newRequest), which still applies the default to jobs queued
// before it was recorded.
func defaultMemory(spec *model.JobSpec, st *Settings) {
	if spec.MemPerNode >= 0 || spec.MemPerCPU > 0 || (spec.GPUs.Any() && spec.GPUs.MemPerGPU > 0) {
		return
	}
	switch {
	case st.DefMemPerCPU > 0:
		spec.MemPerCPU = st.DefMemPerCPU
	case st.DefMemPerNode > 0:
		spec.MemPerNode = st.DefMemPerNode
	}
}

// validArray checks the task ids a client parsed from --array: at least
// one, strictly ascending (so unique, and no more than MaxArraySize of
// them), within [0, MaxArraySize), with no negative throttle. sbatch sends
// them so; a hand-made spec with one id repeated made thousands of tasks
// of one name (123_1 many times) past MaxArraySize, and ids between the
// first and the last were not checked at all.
func validArray(a *model.ArraySpec, maxSize int) bool {
	ids := a.TaskIDs
	if len(ids) == 0 || ids[0] < 0 || ids[len(ids)-1] >= maxSize || a.Throttle < 0 {
		return false
	}
	for i := 1; i < len(ids); i++ {
		if ids[i] <= ids[i-1] {
			return false
		}
	}
	return true
}

// errCommit wraps a failed Raft apply for transports.
func errCommit(err error) error {
	if nl, ok := IsNotLeader(err); ok {
		return nl // the transport tells the client where the leader is
	}
	return &Error{Code: CodeUnavailable, Msg: err.Error()}
}

// IsError reports whether err is a service refusal and returns it.
func IsError(err error) (*Error, bool) { return api.IsError(err) }
