package sched

import (
	"github.com/drover-hpc/drover/internal/model"
)

// Limits are the accounting limits a cycle enforces
// (AccountingStorageEnforce=limits): those of each job's QOS and of its
// association and the association's parent accounts.
type Limits struct {
	DB      *model.AcctDB
	Cluster string
	// Running are the jobs that hold resources now (running or
	// completing): what counts against the limits before this cycle.
	Running []*model.Job
}

// usage is what a set of running jobs holds.
type usage struct {
	jobs                int64
	cpu, mem, node, gpu int64
}

func (u *usage) add(o usage) {
	u.jobs += o.jobs
	u.cpu += o.cpu
	u.mem += o.mem
	u.node += o.node
	u.gpu += o.gpu
}

// tresKind names the four TRES the limits track, with their index in
// reason tables.
var tresKinds = [...]string{"cpu", "mem", "node", "gres/gpu"}

func (u usage) get(i int) int64 {
	return [...]int64{u.cpu, u.mem, u.node, u.gpu}[i]
}

// Pending reasons per TRES kind (cpu, mem, node, gres/gpu), as Slurm names
// them.
var (
	reasonQOSPerUser   = [...]string{"QOSMaxCpuPerUserLimit", "QOSMaxMemoryPerUser", "QOSMaxNodePerUserLimit", "QOSMaxGRESPerUser"}
	reasonQOSPerJob    = [...]string{"QOSMaxCpuPerJobLimit", "QOSMaxMemoryPerJob", "QOSMaxNodePerJobLimit", "QOSMaxGRESPerJob"}
	reasonQOSPerNode   = [...]string{"QOSMaxCpuPerNode", "QOSMaxMemoryPerNode", "", "QOSMaxGRESPerNode"}
	reasonQOSGrp       = [...]string{"QOSGrpCpuLimit", "QOSGrpMemLimit", "QOSGrpNodeLimit", "QOSGrpGRES"}
	reasonAssocGrp     = [...]string{"AssocGrpCpuLimit", "AssocGrpMemLimit", "AssocGrpNodeLimit", "AssocGrpGRES"}
	reasonAssocPerJob  = [...]string{"AssocMaxCpuPerJobLimit", "AssocMaxMemPerJob", "AssocMaxNodePerJobLimit", "AssocMaxGRESPerJob"}
	reasonAssocPerNode = [...]string{"AssocMaxCpuPerNode", "AssocMaxMemPerNode", "", "AssocMaxGRESPerNode"}
)

type qosUser struct {
	qos string
	uid uint32
}

// limiter tracks usage through one cycle: jobs started by the cycle count
// against the limits of the jobs after them.
type limiter struct {
	l       *Limits
	qosUser map[qosUser]*usage
	qos     map[string]*usage
	assoc   map[int]*usage // by association id; account associations sum their users'
	cfg     Config
	parts   map[string]*model.Partition
}

func newLimiter(l *Limits, cfg Config, parts map[string]*model.Partition) *limiter {
	if l == nil || l.DB == nil {
		return nil
	}
	m := &limiter{l: l, cfg: cfg, parts: parts, qosUser: map[qosUser]*usage{}, qos: map[string]*usage{}, assoc: map[int]*usage{}}
	for _, j := range l.Running {
		m.charge(j, allocUsage(j))
	}
	return m
}

// qosOf lists the QOS whose limits a job meets: its own, and its
// partition's QOS when that is another.
func (m *limiter) qosOf(j *model.Job) []*model.QOS {
	name := j.Spec.QOS
	if name == "" {
		name = "normal"
	}
	var out []*model.QOS
	if q := m.l.DB.QOS[name]; q != nil {
		out = append(out, q)
	}
	if p := m.parts[j.Partition]; p != nil && p.QOS != "" && p.QOS != name {
		if q := m.l.DB.QOS[p.QOS]; q != nil {
			out = append(out, q)
		}
	}
	return out
}

// assocs lists the job's association and its parent accounts' (nearest
// first); nil when the job has none.
func (m *limiter) assocs(j *model.Job) []*model.Assoc {
	a := m.l.DB.UserAssoc(m.l.Cluster, j.Spec.Account, j.UserName, j.Partition)
	if a == nil {
		return nil
	}
	return append([]*model.Assoc{a}, m.l.DB.Lineage(m.l.Cluster, a.Account)...)
}

func get[K comparable](mp map[K]*usage, k K) *usage {
	u := mp[k]
	if u == nil {
		u = &usage{}
		mp[k] = u
	}
	return u
}

// charge counts a started job against its QOS and associations.
func (m *limiter) charge(j *model.Job, u usage) {
	if j.Spec == nil {
		return
	}
	for _, q := range m.qosOf(j) {
		get(m.qosUser, qosUser{q.Name, j.UserID}).add(u)
		get(m.qos, q.Name).add(u)
	}
	for _, a := range m.assocs(j) {
		get(m.assoc, a.ID).add(u)
	}
}

func allocUsage(j *model.Job) usage {
	u := usage{jobs: 1, node: int64(len(j.Alloc))}
	for _, a := range j.Alloc {
		u.cpu += int64(a.CPUs)
		u.mem += a.Mem
		u.gpu += int64(a.GPUs.Count())
	}
	return u
}

// requestUsage estimates what a pending job will hold, from its request.
func (m *limiter) requestUsage(j *model.Job) usage {
	s := j.Spec
	nodes := int64(max(1, s.MinNodes))
	cpus := int64(s.ReqCPUs())
	u := usage{jobs: 1, cpu: cpus, node: nodes}
	switch {
	case s.MemPerCPU > 0:
		u.mem = s.MemPerCPU * cpus
	case s.MemPerNode > 0:
		u.mem = s.MemPerNode * nodes
	case m.cfg.DefMemPerCPU > 0:
		u.mem = m.cfg.DefMemPerCPU * cpus
	case m.cfg.DefMemPerNode > 0:
		u.mem = m.cfg.DefMemPerNode * nodes
	}
	if g := s.GPUs; g.Any() {
		switch {
		case g.Total > 0:
			u.gpu = int64(g.Total)
		case g.PerNode > 0:
			u.gpu = int64(g.PerNode) * nodes
		default:
			u.gpu = int64(g.PerTask) * int64(max(1, s.NTasks))
		}
	}
	return u
}

// over reports the first TRES kind where held+want exceeds the limit.
func over(limit model.TRES, held, want usage) (int, bool) {
	for i, k := range tresKinds {
		if v, ok := limit[k]; ok && v >= 0 && held.get(i)+want.get(i) > v {
			return i, true
		}
	}
	return 0, false
}

// perNode reports the first TRES kind where the job's share of one node
// exceeds the limit.
func perNode(limit model.TRES, want usage) (int, bool) {
	n := max(want.node, 1)
	per := usage{cpu: (want.cpu + n - 1) / n, mem: (want.mem + n - 1) / n, gpu: (want.gpu + n - 1) / n}
	for i, k := range tresKinds {
		if i == 2 {
			continue
		}
		if v, ok := limit[k]; ok && v >= 0 && per.get(i) > v {
			return i, true
		}
	}
	return 0, false
}

// check returns the reason the job must wait for, or "".
func (m *limiter) check(j *model.Job) string {
	want := m.requestUsage(j)
	for _, q := range m.qosOf(j) {
		if reason := m.checkQOS(q, j, want); reason != "" {
			return reason
		}
	}
	return m.checkAssoc(j, want)
}

func (m *limiter) checkQOS(q *model.QOS, j *model.Job, want usage) string {
	if q.MaxWall >= 0 && j.TimeLimit != model.Unlimited && j.TimeLimit > q.MaxWall {
		return "QOSMaxWallDurationPerJobLimit"
	}
	if i, bad := over(q.MaxTRESPerJob, usage{}, want); bad {
		return reasonQOSPerJob[i]
	}
	if i, bad := perNode(q.MaxTRESPerNode, want); bad {
		return reasonQOSPerNode[i]
	}
	held := get(m.qosUser, qosUser{q.Name, j.UserID})
	if q.MaxJobsPerUser >= 0 && held.jobs >= int64(q.MaxJobsPerUser) {
		return "QOSMaxJobsPerUserLimit"
	}
	if i, bad := over(q.MaxTRESPerUser, *held, want); bad {
		return reasonQOSPerUser[i]
	}
	total := get(m.qos, q.Name)
	if q.GrpJobs >= 0 && total.jobs >= int64(q.GrpJobs) {
		return "QOSGrpJobsLimit"
	}
	if i, bad := over(q.GrpTRES, *total, want); bad {
		return reasonQOSGrp[i]
	}
	return ""
}

func (m *limiter) checkAssoc(j *model.Job, want usage) string {
	chain := m.assocs(j)
	if len(chain) == 0 {
		return ""
	}
	// Max limits: the nearest association that sets one decides (users
	// inherit their account's).
	maxWall, maxJobs := model.NoLimit, model.NoLimit
	var maxTRES, maxNode model.TRES
	for _, a := range chain {
		if maxWall == model.NoLimit && a.MaxWall >= 0 {
			maxWall = int(a.MaxWall)
		}
		if maxJobs == model.NoLimit && a.MaxJobs >= 0 {
			maxJobs = a.MaxJobs
		}
		maxTRES = model.TRES(a.MaxTRES).Merge(maxTRES)
		maxNode = model.TRES(a.MaxTRESPerNode).Merge(maxNode)
	}
	if maxWall >= 0 && j.TimeLimit != model.Unlimited && j.TimeLimit > int64(maxWall) {
		return "AssocMaxWallDurationPerJobLimit"
	}
	if i, bad := over(maxTRES, usage{}, want); bad {
		return reasonAssocPerJob[i]
	}
	if i, bad := perNode(maxNode, want); bad {
		return reasonAssocPerNode[i]
	}
	if maxJobs >= 0 && get(m.assoc, chain[0].ID).jobs >= int64(maxJobs) {
		return "AssocMaxJobsLimit"
	}
	// Grp limits hold at every level.
	for _, a := range chain {
		held := get(m.assoc, a.ID)
		if a.GrpJobs >= 0 && held.jobs >= int64(a.GrpJobs) {
			return "AssocGrpJobsLimit"
		}
		if i, bad := over(a.GrpTRES, *held, want); bad {
			return reasonAssocGrp[i]
		}
	}
	return ""
}
