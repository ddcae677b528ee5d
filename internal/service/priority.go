package service

import (
	"context"
	"maps"
	"slices"
	"strings"

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
}

// Prioritizer computes multifactor priorities over one snapshot: the
// controller's periodic recalculation, a new job's first priority and
// sprio/sshare all go through it, so they agree.
type Prioritizer struct {
	cfg     PriorityConfig
	cluster priority.Cluster
	shares  *priority.Shares
	cache   map[string]float64
}

// NewPrioritizer prepares the computation for snap with usage (nil: the
// snapshot's recorded usage).
func (s *Service) NewPrioritizer(snap *state.Snapshot, usage map[string]float64) *Prioritizer {
	st := s.Settings()
	p := &Prioritizer{cfg: st.Priority, cache: map[string]float64{}}
	c := &p.cluster
	c.PartitionFactors, c.QOSPriority = map[string]int{}, map[string]int{}
	for _, n := range snap.Nodes() {
		c.Nodes++
		c.CPUs += n.CPUs
	}
	for _, part := range snap.Partitions() {
		c.PartitionFactors[part.Name] = part.PriorityJobFactor
		c.MaxPartitionJF = max(c.MaxPartitionJF, part.PriorityJobFactor)
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
	p.shares = priority.NewShares(db, st.ClusterName, usage)
	return p
}

// Factors are j's factors and priority at now.
func (p *Prioritizer) Factors(j *model.Job, now int64) priority.Factors {
	return priority.Compute(j, now, p.cfg.Weights, &p.cluster, p.FairShare(jobAccount(j), j.UserName))
}

// FairShare is the fair-share factor of user under account.
func (p *Prioritizer) FairShare(account, user string) float64 {
	key := priority.UsageKey(account, user)
	if f, ok := p.cache[key]; ok {
		return f
	}
	f := p.shares.Factor(account, user, 1)
	p.cache[key] = f
	return f
}

// Shares exposes the tree for sshare.
func (p *Prioritizer) Shares() *priority.Shares { return p.shares }

// jobAccount is the account a job's usage counts under: its own, or root
// for a job without one (no associations defined).
func jobAccount(j *model.Job) string {
	if j.Spec == nil || j.Spec.Account == "" {
		return "root"
	}
	return strings.ToLower(j.Spec.Account)
}

// AccrueUsage brings fair-share usage from its last time up to now:
// what was recorded decays by the half-life, and every job that ran in
// between adds its CPUs times the seconds it ran then.
func AccrueUsage(snap *state.Snapshot, now, halfLife int64) map[string]float64 {
	old, at := snap.Usage()
	out := make(map[string]float64, len(old))
	decay := priority.Decay(now-at, halfLife)
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
		cpus := 0
		for _, a := range j.Alloc {
			cpus += a.CPUs
		}
		secs := float64(end-from) - float64(j.SuspendedFor(end))
		if cpus > 0 && secs > 0 {
			out[priority.UsageKey(jobAccount(j), j.UserName)] += float64(cpus) * secs
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
// is an account. FairShare is only meaningful for users.
type ShareRow struct {
	Account, User                             string
	Depth, RawShares                          int
	NormShares, RawUsage, EffUsage, FairShare float64
}

// PriorityReport is what sprio and sshare show.
type PriorityReport struct {
	Multifactor bool
	Weights     priority.Weights
	Jobs        []JobPriority
	Shares      []ShareRow
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
	usage := AccrueUsage(snap, now, st.Priority.DecayHalfLife)
	p := s.NewPrioritizer(snap, usage)
	r := &PriorityReport{Multifactor: st.Priority.Multifactor, Weights: st.Priority.Weights}
	snap.EachActive(func(j *model.Job) bool {
		if j.State == model.JobPending && j.Priority > 0 {
			f := p.Factors(j, now)
			f.Priority = j.Priority
			r.Jobs = append(r.Jobs, JobPriority{Job: j, Factors: f})
		}
		return true
	})
	r.Shares = shareTree(snap, st.ClusterName, usage, p)
	return r, nil
}

// shareTree lists root, then each account and its users depth first, in
// name order: the association tree when sacctmgr made one, else the
// accounts and users that have usage.
func shareTree(snap *state.Snapshot, cluster string, usage map[string]float64, p *Prioritizer) []ShareRow {
	total := 0.0
	for _, u := range usage {
		total += u
	}
	eff := func(u float64) float64 {
		if total <= 0 {
			return 0
		}
		return u / total
	}
	type node struct {
		users    map[string]int // user → shares
		children []string
		shares   int
	}
	tree := map[string]*node{"root": {users: map[string]int{}}}
	get := func(name string) *node {
		if tree[name] == nil {
			tree[name] = &node{users: map[string]int{}, shares: 1}
		}
		return tree[name]
	}
	db, _ := snap.AcctDB()
	if db != nil {
		for _, a := range db.Assocs {
			if a.Cluster != cluster || a.Partition != "" {
				continue
			}
			n := get(a.Account)
			if a.User != "" {
				n.users[a.User] = a.Shares
				continue
			}
			n.shares = a.Shares
			if a.Account != "root" {
				parent := a.Parent
				if parent == "" {
					parent = "root"
				}
				get(parent).children = append(get(parent).children, a.Account)
			}
		}
	}
	for key := range usage {
		account, user, _ := strings.Cut(key, "\x00")
		n := get(account)
		if _, ok := n.users[user]; !ok {
			n.users[user] = 1
		}
		if account != "root" && !slices.Contains(get("root").children, account) && (db == nil || db.AccountAssoc(cluster, account) == nil) {
			get("root").children = append(get("root").children, account)
		}
	}
	var rows []ShareRow
	var used func(name string) float64
	used = func(name string) float64 {
		n := tree[name]
		sum := 0.0
		for u := range n.users {
			sum += usage[priority.UsageKey(name, u)]
		}
		for _, c := range n.children {
			sum += used(c)
		}
		return sum
	}
	var walk func(name string, depth int)
	seen := map[string]bool{}
	walk = func(name string, depth int) {
		if seen[name] {
			return
		}
		seen[name] = true
		n := tree[name]
		raw := used(name)
		row := ShareRow{Account: name, Depth: depth, RawShares: n.shares, RawUsage: raw, EffUsage: eff(raw)}
		if name != "root" {
			row.NormShares = p.Shares().NormShares(name, "", 1)
		} else {
			row.EffUsage = 1
		}
		rows = append(rows, row)
		users := slices.Sorted(maps.Keys(n.users))
		for _, u := range users {
			acct := name
			ru := usage[priority.UsageKey(acct, u)]
			rows = append(rows, ShareRow{Account: name, User: u, Depth: depth + 1, RawShares: n.users[u],
				NormShares: p.Shares().NormShares(acct, u, 1), RawUsage: ru, EffUsage: eff(ru), FairShare: p.FairShare(acct, u)})
		}
		children := slices.Clone(n.children)
		slices.Sort(children)
		for _, c := range children {
			walk(c, depth+1)
		}
	}
	walk("root", 0)
	return rows
}
