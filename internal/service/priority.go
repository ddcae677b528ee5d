package service

import (
	"context"
	"math"
	"strings"
	"time"

	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/sched/priority"
	"github.com/drover-hpc/drover/internal/state"
)

// PriorityConfig is PriorityType=priority/multifactor and its weights;
// Multifactor false keeps Slurm's priority/basic (submit order).
type PriorityConfig struct {
	Multifactor   bool
	Weights       priority.Weights
	DecayHalfLife int64 // seconds; 0 = no decay
	CalcPeriod    int64 // seconds between recalculations
	// NoFairTree is PriorityFlags=NO_FAIR_TREE (or DEPTH_OBLIVIOUS): the
	// classic fair-share formula instead of Fair Tree.
	NoFairTree bool
	// WeightTRES is PriorityWeightTRES as written (sprio -w).
	WeightTRES string
	// Billing is each partition's TRESBillingWeights (none: jobs bill
	// their CPUs); MaxTRES is PriorityFlags=MAX_TRES.
	Billing map[string][]priority.TRESWeight
	MaxTRES bool
	// UsageReset is PriorityUsageResetPeriod; ResetNowAt the time the
	// settings were installed, when it is NOW (Slurm resets then: at
	// start and reconfigure).
	UsageReset priority.ResetPeriod
	ResetNowAt int64
	// EnableUserTop is SchedulerParameters=enable_user_top: users may
	// scontrol top their own jobs (else operators only).
	EnableUserTop bool
}

// stampReset records when settings with PriorityUsageResetPeriod=NOW
// came into force.
func (s *Service) stampReset(st *Settings) {
	if st != nil && st.Priority.UsageReset == priority.ResetNow && st.Priority.ResetNowAt == 0 {
		st.Priority.ResetNowAt = s.clock.Now().Unix()
	}
}

// Prioritizer computes multifactor priorities over one snapshot: the
// controller's periodic recalculation, a new job's first priority and
// sprio/sshare all go through it, so they agree.
type Prioritizer struct {
	cfg     PriorityConfig
	cluster priority.Cluster
	// The association tree with usage (sshare's rows; Fair Tree ranks
	// it), built on first use; users that only have active jobs join it.
	tree    *priority.Tree
	newTree func() *priority.Tree
	shares  *priority.Shares // classic formula (NO_FAIR_TREE)
	cache   map[[2]string]float64
	// detail lists each job's TRES factors (sprio); the controller's
	// recalculation needs only the priority.
	detail bool
}

// NewPrioritizer prepares the computation for snap with usage (nil: the
// snapshot's recorded usage).
func (s *Service) NewPrioritizer(snap *state.Snapshot, usage map[string]float64) *Prioritizer {
	return s.newPrioritizer(snap, usage, true)
}

// newPrioritizer is NewPrioritizer; without jobUsers the tree holds only
// associations and users with usage (plus whoever FairShare is asked
// about): a submission's first priority then costs the size of the
// association tree, not of the queue, and the next recalculation ranks
// the users that only have queued jobs too.
func (s *Service) newPrioritizer(snap *state.Snapshot, usage map[string]float64, jobUsers bool) *Prioritizer {
	st := s.Settings()
	p := &Prioritizer{cfg: st.Priority, cache: map[[2]string]float64{}}
	c := &p.cluster
	c.PartitionFactors, c.QOSPriority = map[string]int{}, map[string]int{}
	for _, n := range snap.Nodes() {
		c.Nodes++
		c.CPUs += n.CPUs
	}
	tres := len(st.Priority.Weights.TRES) > 0
	if tres {
		c.PartitionTRES, c.NodeMem = map[string]priority.TRES{}, map[string]float64{}
	}
	for _, part := range snap.Partitions() {
		c.PartitionFactors[part.Name] = part.PriorityJobFactor
		c.MaxPartitionJF = max(c.MaxPartitionJF, part.PriorityJobFactor)
		if tres {
			var t priority.TRES
			for _, name := range part.Nodes {
				if n := snap.Node(name); n != nil {
					t.Add(priority.TRES{CPU: float64(n.CPUs), Mem: float64(n.Memory), Node: 1, GPU: float64(len(n.GPUs)), GPUType: "*"})
				}
			}
			c.PartitionTRES[part.Name] = t
			if t.Node > 0 {
				c.NodeMem[part.Name] = t.Mem / t.Node
			}
		}
	}
	db, _ := snap.AcctDB()
	if db != nil {
		for name, q := range db.QOS {
			c.QOSPriority[name] = q.Priority
			c.MaxQOSPriority = max(c.MaxQOSPriority, q.Priority)
		}
	}
	if usage == nil {
		usage, _ = snap.Usage()
	}
	if st.Priority.NoFairTree {
		p.shares = priority.NewShares(db, st.ClusterName, usage)
	}
	p.newTree = func() *priority.Tree {
		t := priority.NewTree(db, st.ClusterName, usage)
		if !jobUsers {
			return t
		}
		// EachJob walks the job map itself, cheaper than EachActive's
		// lookups; the few finished jobs are skipped.
		snap.EachJob(func(j *model.Job) bool {
			if j.UserName != "" && !j.Finished() {
				t.AddUser(jobAccount(j), j.UserName)
			}
			return true
		})
		return t
	}
	return p
}

// Tree is the association tree with usage, Fair Tree's figures filled
// in unless the classic formula is configured.
func (p *Prioritizer) Tree() *priority.Tree {
	if p.tree == nil {
		p.tree = p.newTree()
		p.tree.Finish()
		if !p.cfg.NoFairTree {
			p.tree.FairTree()
		}
	}
	return p.tree
}

// Factors are j's factors and priority at now (the TRES factors listed
// only for a report: see Priorities).
func (p *Prioritizer) Factors(j *model.Job, now int64) priority.Factors {
	fs := p.FairShare(jobAccount(j), j.UserName)
	if !p.detail {
		return priority.ComputeSummed(j, now, p.cfg.Weights, &p.cluster, fs)
	}
	return priority.Compute(j, now, p.cfg.Weights, &p.cluster, fs)
}

// FairShare is the fair-share factor of user under account.
func (p *Prioritizer) FairShare(account, user string) float64 {
	key := [2]string{account, user}
	if f, ok := p.cache[key]; ok {
		return f
	}
	var f float64
	if p.cfg.NoFairTree {
		f = p.shares.Factor(account, user, 1)
	} else {
		t := p.Tree()
		if t.User(account, user) == nil && user != "" {
			// A user the tree does not know yet (a first job): rank it
			// among the others.
			t.AddUser(account, user)
			t.Finish()
			t.FairTree()
			clear(p.cache)
		}
		if n := t.User(account, user); n != nil {
			f = n.FairShare
		}
	}
	p.cache[key] = f
	return f
}

// jobAccount is the account a job's usage counts under: its own, or root
// for a job without one (no associations defined).
func jobAccount(j *model.Job) string {
	if j.Spec == nil || j.Spec.Account == "" {
		return "root"
	}
	return strings.ToLower(j.Spec.Account)
}

// AccrueUsage brings fair-share usage from its last time up to now with
// the settings in force: see AccrueUsage.
func (s *Service) AccrueUsage(snap *state.Snapshot, now int64) map[string]float64 {
	st := s.Settings().Priority
	since := LastReset(st.UsageReset, now, time.Local)
	if st.UsageReset == priority.ResetNow {
		since = st.ResetNowAt
	}
	return AccrueUsage(snap, now, UsageRules{HalfLife: st.DecayHalfLife, ResetAt: since, Billing: st.Billing, MaxTRES: st.MaxTRES})
}

// LastReset is the latest PriorityUsageResetPeriod time at or before
// now (unix seconds; 0 for NONE and NOW, whose time the settings hold),
// in loc's calendar as Slurm resets at local midnight.
func LastReset(p priority.ResetPeriod, now int64, loc *time.Location) int64 {
	t := time.Unix(now, 0).In(loc)
	y, m, d := t.Date()
	var at time.Time
	switch p {
	case priority.ResetDaily:
		at = time.Date(y, m, d, 0, 0, 0, 0, loc)
	case priority.ResetWeekly: // Sunday 00:00
		at = time.Date(y, m, d-int(t.Weekday()), 0, 0, 0, 0, loc)
	case priority.ResetMonthly:
		at = time.Date(y, m, 1, 0, 0, 0, 0, loc)
	case priority.ResetQuarterly:
		at = time.Date(y, m-(m-1)%3, 1, 0, 0, 0, 0, loc)
	case priority.ResetYearly:
		at = time.Date(y, 1, 1, 0, 0, 0, 0, loc)
	default:
		return 0
	}
	return at.Unix()
}

// UsageRules say how usage accrues: PriorityDecayHalfLife (seconds; 0 =
// no decay), the last PriorityUsageResetPeriod time (usage recorded
// before it is dropped), and TRESBillingWeights per partition with
// PriorityFlags=MAX_TRES.
type UsageRules struct {
	HalfLife, ResetAt int64
	Billing           map[string][]priority.TRESWeight
	MaxTRES           bool
}

// AccrueUsage brings fair-share usage from its last time up to now:
// what was recorded decays by the half-life (or is dropped when a reset
// time passed since), and every job that ran in between adds its
// TRES-billing value times the seconds it ran then.
func AccrueUsage(snap *state.Snapshot, now int64, r UsageRules) map[string]float64 {
	old, at := snap.Usage()
	// At or after the last recording: usage recorded in the very second
	// of the reset (before it, or after an earlier pass of this reset)
	// is recomputed from the reset time on, which loses nothing.
	if r.ResetAt > 0 && r.ResetAt >= at && r.ResetAt <= now {
		old, at = nil, r.ResetAt
	}
	out := make(map[string]float64, len(old))
	decay := priority.Decay(now-at, r.HalfLife)
	for k, v := range old {
		if v *= decay; v >= 1e-3 {
			out[k] = v
		}
	}
	snap.EachJob(func(j *model.Job) bool {
		if j.StartTime == 0 {
			return true
		}
		end := j.EndTime
		if !j.Finished() || end == 0 {
			end = now
		}
		from := max(j.StartTime, at)
		if end <= from {
			return true
		}
		tres := priority.Allocated(j)
		bill := priority.Billing(&tres, r.Billing[j.Partition], r.MaxTRES)
		secs := float64(end-from) - float64(j.SuspendedFor(end))
		if bill > 0 && secs > 0 {
			out[priority.UsageKey(jobAccount(j), j.UserName)] += bill * secs
		}
		return true
	})
	return out
}

// JobPriority is one pending job's factors (sprio).
type JobPriority struct {
	Job     *model.Job
	Factors priority.Factors
}

// ShareRow is one association of the fair-share tree (sshare); User ""
// is an account. FairShare is only meaningful for users. Under Fair Tree
// NormShares and EffUsage are relative to the association's siblings
// and LevelFS is their quotient; under the classic formula they are
// relative to the whole cluster and LevelFS is NaN. NormUsage is always
// the share of the cluster's usage.
type ShareRow struct {
	Account, User                                                 string
	Depth, RawShares                                              int
	NormShares, RawUsage, NormUsage, EffUsage, FairShare, LevelFS float64
}

// PriorityReport is what sprio and sshare show.
type PriorityReport struct {
	Multifactor, FairTree bool
	Weights               priority.Weights
	WeightTRES            string // PriorityWeightTRES as written
	Jobs                  []JobPriority
	Shares                []ShareRow
}

// PriorityFactors computes the factors of every pending job that is not held,
// and the fair-share tree, from the newest state with usage brought up
// to now.
func (s *Service) PriorityFactors(ctx context.Context) (*PriorityReport, error) {
	if _, err := s.Identify(ctx); err != nil {
		return nil, err
	}
	st := s.Settings()
	snap := s.store.Snapshot()
	now := s.clock.Now().Unix()
	p := s.NewPrioritizer(snap, s.AccrueUsage(snap, now))
	p.detail = true
	r := &PriorityReport{Multifactor: st.Priority.Multifactor, FairTree: !st.Priority.NoFairTree,
		Weights: st.Priority.Weights, WeightTRES: st.Priority.WeightTRES}
	snap.EachActive(func(j *model.Job) bool {
		if j.State == model.JobPending && j.Priority > 0 {
			// An operator's priority is the job's whole priority: sprio
			// shows its factors (and nice) as 0, as Slurm does.
			f := priority.Factors{Priority: j.Priority}
			if !j.PrioritySet {
				f = p.Factors(j, now)
				f.Priority = j.Priority
			}
			r.Jobs = append(r.Jobs, JobPriority{Job: j, Factors: f})
		}
		return true
	})
	r.Shares = p.shareRows()
	return r, nil
}

// shareRows lists root, then each account, its users and its
// sub-accounts depth first, in name order: the association tree when
// sacctmgr made one, and the accounts and users that have usage or
// jobs.
func (p *Prioritizer) shareRows() []ShareRow {
	t := p.Tree()
	frac := func(u float64) float64 {
		if t.Total <= 0 {
			return 0
		}
		return u / t.Total
	}
	var rows []ShareRow
	t.Walk(func(n *priority.Node, depth int) {
		row := ShareRow{Account: n.Account, User: n.User, Depth: depth, RawShares: n.Shares, RawUsage: n.Usage,
			NormUsage: frac(n.Usage), LevelFS: math.NaN()}
		switch {
		case n == t.Root:
			row.EffUsage, row.NormUsage = 1, 1
		case !p.cfg.NoFairTree:
			row.NormShares, row.EffUsage, row.LevelFS = n.NormShares, n.EffUsage, n.LevelFS
			row.FairShare = n.FairShare
		default:
			row.NormShares, row.EffUsage = p.shares.AccountNormShares(n.Account), row.NormUsage
			if n.IsUser() {
				row.NormShares = p.shares.NormShares(n.Account, n.User, 1)
				row.FairShare = p.FairShare(n.Account, n.User)
			}
		}
		rows = append(rows, row)
	})
	return rows
}
