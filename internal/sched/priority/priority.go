package priority

import (
	"math"

	"github.com/drover-hpc/drover/internal/model"
)

// Weights are the PriorityWeight* keys and their companions.
type Weights struct {
	Age, FairShare, JobSize, Partition, QOS uint32
	MaxAge                                  int64 // seconds (PriorityMaxAge, default 7 days)
	FavorSmall                              bool
	// SmallRelativeToTime: PriorityFlags=SMALL_RELATIVE_TO_TIME divides
	// the job size by its time limit in minutes.
	SmallRelativeToTime bool
	// TRES is PriorityWeightTRES; NoNormal* are PriorityFlags
	// NO_NORMAL_PART, NO_NORMAL_QOS and NO_NORMAL_TRES.
	TRES                                    []TRESWeight
	NoNormalPart, NoNormalQOS, NoNormalTRES bool
}

// DefaultMaxAge is PriorityMaxAge's default, 7-0.
const DefaultMaxAge = 7 * 24 * 3600

// Cluster is what the factors are relative to.
type Cluster struct {
	Nodes, CPUs      int
	MaxPartitionJF   int // the largest PriorityJobFactor
	MaxQOSPriority   int // the largest QOS Priority
	QOSPriority      map[string]int
	PartitionFactors map[string]int // partition → PriorityJobFactor
	// PartitionTRES is each partition's total over its nodes, what a
	// job's TRES factors are relative to; NodeMem a node's memory there
	// (for --mem=0).
	PartitionTRES map[string]TRES
	NodeMem       map[string]float64
}

// Factors are one job's normalised factors and the priority they make.
type Factors struct {
	Age, FairShare, JobSize, Partition, QOS float64
	Nice                                    int
	// TRES are the weighted TRES factors in PriorityWeightTRES order,
	// the ones that add nothing left out.
	TRES     []TRESFactor
	Priority uint32
}

// TRESFactor is one TRES's factor (Factor, between 0 and 1 unless
// NO_NORMAL_TRES) and what it adds to the priority (Weighted).
type TRESFactor struct {
	Name             string
	Factor, Weighted float64
}

// Compute returns j's factors at now; fairShare is its association's
// factor (1 when unknown).
func Compute(j *model.Job, now int64, w Weights, c *Cluster, fairShare float64) Factors {
	return compute(j, now, w, c, fairShare, true)
}

// ComputeSummed is Compute with the TRES factors summed into the
// priority but not listed in Factors.TRES, which spares an allocation
// per job when a whole queue is recalculated.
func ComputeSummed(j *model.Job, now int64, w Weights, c *Cluster, fairShare float64) Factors {
	return compute(j, now, w, c, fairShare, false)
}

func compute(j *model.Job, now int64, w Weights, c *Cluster, fairShare float64, detail bool) Factors {
	var f Factors
	maxAge := w.MaxAge
	if maxAge <= 0 {
		maxAge = DefaultMaxAge
	}
	if since := j.EligibleTime; since > 0 && now > since {
		f.Age = math.Min(1, float64(now-since)/float64(maxAge))
	}
	f.FairShare = fairShare
	f.JobSize = jobSize(j, w, c)
	switch {
	case w.NoNormalPart:
		f.Partition = float64(c.PartitionFactors[j.Partition])
	case c.MaxPartitionJF > 0:
		f.Partition = float64(c.PartitionFactors[j.Partition]) / float64(c.MaxPartitionJF)
	}
	if (c.MaxQOSPriority > 0 || w.NoNormalQOS) && j.Spec != nil {
		qos := j.Spec.QOS
		if qos == "" {
			qos = "normal"
		}
		f.QOS = float64(c.QOSPriority[qos])
		if !w.NoNormalQOS {
			f.QOS /= float64(c.MaxQOSPriority)
		}
	}
	f.Nice = j.Nice
	sum := f.Age*float64(w.Age) + f.FairShare*float64(w.FairShare) + f.JobSize*float64(w.JobSize) +
		f.Partition*float64(w.Partition) + f.QOS*float64(w.QOS) - float64(f.Nice)
	if len(w.TRES) > 0 {
		sum += tresFactors(j, w, c, &f, detail)
	}
	switch {
	case sum < 1:
		// A job never reaches 0 this way: 0 means held.
		f.Priority = 1
	case sum > math.MaxUint32-1:
		f.Priority = math.MaxUint32 - 1
	default:
		f.Priority = uint32(sum)
	}
	return f
}

// tresFactors fills f.TRES and returns what they add to the priority.
func tresFactors(j *model.Job, w Weights, c *Cluster, f *Factors, detail bool) float64 {
	req := Requested(j.Spec, c.NodeMem[j.Partition])
	total := c.PartitionTRES[j.Partition]
	sum := 0.0
	for _, tw := range w.TRES {
		v := req.Get(tw.Name)
		if !w.NoNormalTRES {
			if t := total.Get(tw.Name); t > 0 {
				v = math.Min(1, v/t)
			} else {
				v = 0
			}
		}
		if wt := v * tw.Weight; wt > 0 {
			if detail {
				f.TRES = append(f.TRES, TRESFactor{Name: tw.Name, Factor: v, Weighted: wt})
			}
			sum += wt
		}
	}
	return sum
}

// jobSize is the job's share of the cluster: the mean of its node share
// and its CPU share, or of what it leaves free with FavorSmall.
func jobSize(j *model.Job, w Weights, c *Cluster) float64 {
	if c.Nodes <= 0 || c.CPUs <= 0 || j.Spec == nil {
		return 0
	}
	nodes := float64(max(1, j.Spec.MinNodes))
	cpus := float64(requestedCPUs(j.Spec))
	nf := math.Min(1, nodes/float64(c.Nodes))
	cf := math.Min(1, cpus/float64(c.CPUs))
	if w.FavorSmall {
		nf, cf = 1-nf, 1-cf
	}
	size := (nf + cf) / 2
	if w.SmallRelativeToTime && j.TimeLimit > 0 {
		size /= math.Max(1, float64(j.TimeLimit)/60)
	}
	return size
}

func requestedCPUs(s *model.JobSpec) int {
	tasks := max(1, s.NTasks)
	if s.MinNodes > 0 && s.TasksPerNode > 0 {
		tasks = max(tasks, s.MinNodes*s.TasksPerNode)
	}
	return tasks * max(1, s.CPUsPerTask)
}

// Shares is the classic fair-share (PriorityFlags=NO_FAIR_TREE): for each
// user association, 2^(-effective usage / normalised shares). Normalised
// shares are the association's shares over its siblings', times its
// parent account's, down from root; effective usage is its usage over the
// cluster's. Usage keys are UsageKey values.
type Shares struct {
	db    *model.AcctDB
	usage map[string]float64
	total float64
	norm  map[string]float64 // account → normalised shares
	// userSum is the sum of the shares of each account's users,
	// userShares each user's: NormShares looks them up instead of
	// walking every association per user.
	userSum    map[string]int
	userShares map[[2]string]int
}

// UsageKey names the usage of a user under an account.
func UsageKey(account, user string) string { return account + "\x00" + user }

// NewShares prepares the factors for a cluster's association tree and
// the decayed usage recorded so far.
func NewShares(db *model.AcctDB, cluster string, usage map[string]float64) *Shares {
	s := &Shares{db: db, usage: usage, norm: map[string]float64{}, userSum: map[string]int{}, userShares: map[[2]string]int{}}
	for _, u := range usage {
		s.total += u
	}
	if db == nil {
		return s
	}
	for _, a := range db.Assocs {
		if a.User != "" && a.Partition == "" {
			s.userSum[a.Account] += shareOf(a)
			s.userShares[[2]string{a.Account, a.User}] = shareOf(a)
		}
	}
	// Accounts: children of each parent with their shares.
	children := map[string][]*model.Assoc{}
	for _, a := range db.Assocs {
		if a.Cluster != cluster || a.User != "" || a.Partition != "" || a.Account == "root" {
			continue
		}
		parent := a.Parent
		if parent == "" {
			parent = "root"
		}
		children[parent] = append(children[parent], a)
	}
	var walk func(parent string, norm float64)
	walk = func(parent string, norm float64) {
		sum := 0
		for _, a := range children[parent] {
			sum += shareOf(a)
		}
		for _, a := range children[parent] {
			n := norm
			if sum > 0 {
				n = norm * float64(shareOf(a)) / float64(sum)
			}
			if _, seen := s.norm[a.Account]; seen {
				continue // a loop in the tree: never walk it twice
			}
			s.norm[a.Account] = n
			walk(a.Account, n)
		}
	}
	s.norm["root"] = 1
	walk("root", 1)
	return s
}

func shareOf(a *model.Assoc) int {
	if a.Shares <= 0 || a.Shares == model.SharesParent {
		return 1
	}
	return a.Shares
}

// NormShares is the user's normalised shares under account: the
// account's, split among its users by their shares. Without an
// association tree every user has an equal part.
func (s *Shares) NormShares(account, user string, users int) float64 {
	if s.db == nil || len(s.db.Assocs) == 0 {
		return 1 / float64(max(1, users))
	}
	acct, ok := s.norm[account]
	if !ok {
		acct = s.norm["root"]
	}
	sum, mine := s.userSum[account], 1
	if n, ok := s.userShares[[2]string{account, user}]; ok {
		mine = n
	}
	if sum == 0 {
		return acct
	}
	return acct * float64(mine) / float64(sum)
}

// AccountNormShares is an account's normalised shares (1 for one the
// tree does not know).
func (s *Shares) AccountNormShares(account string) float64 {
	if n, ok := s.norm[account]; ok {
		return n
	}
	return 1
}

// EffectiveUsage is the user's share of all recorded usage.
func (s *Shares) EffectiveUsage(account, user string) float64 {
	if s.total <= 0 {
		return 0
	}
	return s.usage[UsageKey(account, user)] / s.total
}

// Factor is the classic fair-share factor of a user under account.
func (s *Shares) Factor(account, user string, users int) float64 {
	norm := s.NormShares(account, user, users)
	if norm <= 0 {
		return 0
	}
	return math.Pow(2, -s.EffectiveUsage(account, user)/norm)
}

// Decay is the factor usage keeps after dt seconds with the given
// half-life (PriorityDecayHalfLife; 0 = no decay).
func Decay(dt, halfLife int64) float64 {
	if halfLife <= 0 || dt <= 0 {
		return 1
	}
	return math.Pow(0.5, float64(dt)/float64(halfLife))
}
