package model

import (
	"errors"
	"sort"
	"strconv"
	"strings"
)

// NoLimit marks an unset integer limit (sacctmgr's -1).
const NoLimit = -1

// TRES is a list of trackable-resource counts: cpu, mem (MiB), node,
// billing, energy, gres/gpu, gres/gpu:a100, license/x, ... A missing name
// is no limit.
type TRES map[string]int64

// tresOrder is the order Slurm prints TRES in (by their fixed ids); the
// others (gres/..., license/...) follow by name.
var tresOrder = map[string]int{"cpu": 1, "mem": 2, "energy": 3, "node": 4, "billing": 5, "fs/disk": 6, "vmem": 7, "pages": 8}

// ParseTRES reads "cpu=4,mem=8G,gres/gpu=2". A count of -1 removes the
// name (sacctmgr's way to clear one limit); memory takes K/M/G/T suffixes.
func ParseTRES(s string) (TRES, error) {
	t := TRES{}
	if strings.TrimSpace(s) == "" {
		return t, nil
	}
	for _, item := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(item), "=")
		k = strings.ToLower(strings.TrimSpace(k))
		if !ok || k == "" {
			return nil, errors.New("invalid TRES " + strconv.Quote(item) + ": want name=count")
		}
		if !validTRESName(k) {
			return nil, errors.New("invalid TRES name " + strconv.Quote(k))
		}
		n, err := parseTRESCount(k, strings.TrimSpace(v))
		if err != nil {
			return nil, errors.New("invalid TRES count " + strconv.Quote(item))
		}
		t[k] = n
	}
	return t, nil
}

func validTRESName(k string) bool {
	if _, ok := tresOrder[k]; ok {
		return true
	}
	for _, p := range []string{"gres/", "license/", "bb/", "fs/", "ic/"} {
		if rest, ok := strings.CutPrefix(k, p); ok && rest != "" && !strings.ContainsAny(rest, " =,") {
			return true
		}
	}
	return false
}

func parseTRESCount(name, v string) (int64, error) {
	if v == "-1" {
		return NoLimit, nil
	}
	mult := int64(1)
	if name == "mem" && v != "" {
		switch v[len(v)-1] {
		case 'k', 'K':
			mult, v = -1024, v[:len(v)-1]
		case 'm', 'M':
			v = v[:len(v)-1]
		case 'g', 'G':
			mult, v = 1024, v[:len(v)-1]
		case 't', 'T':
			mult, v = 1024*1024, v[:len(v)-1]
		}
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 || n > 1<<50 {
		return 0, errors.New("bad count")
	}
	if mult < 0 { // KiB: round up to whole MiB
		return (n + 1023) / 1024, nil
	}
	return n * mult, nil
}

// Merge returns t with u's names set over it; a NoLimit count removes the
// name.
func (t TRES) Merge(u TRES) TRES {
	out := TRES{}
	for k, v := range t {
		out[k] = v
	}
	for k, v := range u {
		if v == NoLimit {
			delete(out, k)
		} else {
			out[k] = v
		}
	}
	return out
}

// Names lists t's names in Slurm's order.
func (t TRES) Names() []string {
	names := make([]string, 0, len(t))
	for k := range t {
		names = append(names, k)
	}
	sort.Slice(names, func(a, b int) bool {
		oa, ob := tresOrder[names[a]], tresOrder[names[b]]
		switch {
		case oa != 0 && ob != 0:
			return oa < ob
		case oa != 0 || ob != 0:
			return oa != 0
		}
		return names[a] < names[b]
	})
	return names
}

// String prints t as sacctmgr does: "cpu=4,mem=8G,gres/gpu=2".
func (t TRES) String() string {
	var b strings.Builder
	for i, k := range t.Names() {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(k)
		b.WriteByte('=')
		v := t[k]
		if k == "mem" {
			b.WriteString(memUnits(v))
		} else {
			b.WriteString(strconv.FormatInt(v, 10))
		}
	}
	return b.String()
}

func memUnits(mib int64) string {
	units := "MGTP"
	i := 0
	for mib >= 1024 && mib%1024 == 0 && i < len(units)-1 {
		mib /= 1024
		i++
	}
	return strconv.FormatInt(mib, 10) + units[i:i+1]
}

// QOS is a quality of service: a priority, limits and preemption rules
// jobs run under.
type QOS struct {
	Name        string   `json:"name"`
	ID          int      `json:"id"`
	Description string   `json:"description,omitempty"`
	Priority    int      `json:"priority"`
	Flags       []string `json:"flags,omitempty"`
	Preempt     []string `json:"preempt,omitempty"`
	PreemptMode string   `json:"preempt_mode,omitempty"` // "" = cluster
	// PreemptExemptTime: a job of this QOS is not preempted until it has
	// run this many seconds (0 = the cluster's PreemptExemptTime).
	PreemptExemptTime int64   `json:"preempt_exempt_time,omitempty"`
	UsageFactor       float64 `json:"usage_factor"`
	GraceTime         int64   `json:"grace_time,omitempty"` // seconds

	GrpTRES              TRES  `json:"grp_tres,omitempty"`
	GrpJobs              int   `json:"grp_jobs"`
	GrpSubmitJobs        int   `json:"grp_submit_jobs"`
	MaxTRESPerJob        TRES  `json:"max_tres_per_job,omitempty"`
	MaxTRESPerNode       TRES  `json:"max_tres_per_node,omitempty"`
	MaxTRESPerUser       TRES  `json:"max_tres_per_user,omitempty"`
	MaxJobsPerUser       int   `json:"max_jobs_per_user"`
	MaxSubmitJobsPerUser int   `json:"max_submit_jobs_per_user"`
	MaxWall              int64 `json:"max_wall"` // seconds; NoLimit
}

// NewQOS is a QOS without limits, as sacctmgr creates one.
func NewQOS(name string) *QOS {
	return &QOS{Name: name, UsageFactor: 1, GrpJobs: NoLimit, GrpSubmitJobs: NoLimit,
		MaxJobsPerUser: NoLimit, MaxSubmitJobsPerUser: NoLimit, MaxWall: NoLimit}
}

// Account is a bank account jobs are charged to; accounts form a tree
// under "root".
type Account struct {
	Name         string `json:"name"`
	Description  string `json:"description"`
	Organization string `json:"organization"`
}

// Admin levels of users.
const (
	AdminNone     = "None"
	AdminOperator = "Operator"
	AdminAdmin    = "Administrator"
)

// AcctUser is a user known to accounting.
type AcctUser struct {
	Name           string `json:"name"`
	DefaultAccount string `json:"default_account"`
	AdminLevel     string `json:"admin_level"`
}

// Assoc is an association: an account's place in a cluster's tree
// (User == "") or a user's membership of an account, optionally for one
// partition, with its limits.
type Assoc struct {
	ID        int    `json:"id"`
	Cluster   string `json:"cluster"`
	Account   string `json:"account"`
	User      string `json:"user,omitempty"`
	Partition string `json:"partition,omitempty"`
	// Parent is the parent account of an account association.
	Parent string `json:"parent,omitempty"`

	Shares         int      `json:"shares"`   // Fairshare; SharesParent
	Priority       int      `json:"priority"` // NoLimit: unset
	GrpTRES        TRES     `json:"grp_tres,omitempty"`
	GrpJobs        int      `json:"grp_jobs"`
	GrpSubmitJobs  int      `json:"grp_submit_jobs"`
	GrpWall        int64    `json:"grp_wall"`
	MaxJobs        int      `json:"max_jobs"`
	MaxSubmitJobs  int      `json:"max_submit_jobs"`
	MaxTRES        TRES     `json:"max_tres,omitempty"`
	MaxTRESPerNode TRES     `json:"max_tres_per_node,omitempty"`
	MaxWall        int64    `json:"max_wall"` // seconds; NoLimit
	QOS            []string `json:"qos,omitempty"`
	DefaultQOS     string   `json:"default_qos,omitempty"`
}

// SharesParent is the Shares of an association that competes with its
// parent account's share (sacctmgr's Fairshare=parent).
const SharesParent = 0x7fffffff

// NewAssoc is an association without limits.
func NewAssoc(cluster, account, user, partition string) *Assoc {
	return &Assoc{Cluster: cluster, Account: account, User: user, Partition: partition, Shares: 1,
		Priority: NoLimit, GrpJobs: NoLimit, GrpSubmitJobs: NoLimit, GrpWall: NoLimit, MaxJobs: NoLimit,
		MaxSubmitJobs: NoLimit, MaxWall: NoLimit}
}

// AcctDB is the accounting configuration sacctmgr manages: clusters,
// accounts, users, their associations and the QOS. It is part of the
// replicated state and replaced whole on each change (changes are rare,
// reads are every scheduling cycle), so a value is never modified.
type AcctDB struct {
	Clusters []string             `json:"clusters"`
	Accounts map[string]*Account  `json:"accounts"`
	Users    map[string]*AcctUser `json:"users"`
	Assocs   []*Assoc             `json:"assocs"` // in id order
	QOS      map[string]*QOS      `json:"qos"`
	NextID   int                  `json:"next_id"` // next association id
	NextQOS  int                  `json:"next_qos"`
}

// UserAssoc finds the association a job of user in account (and
// partition) runs under: the partition's own when there is one, else the
// account-wide one.
func (d *AcctDB) UserAssoc(cluster, account, user, partition string) *Assoc {
	var any *Assoc
	for _, a := range d.Assocs {
		if a.Cluster != cluster || a.Account != account || a.User != user {
			continue
		}
		if a.Partition == partition && partition != "" {
			return a
		}
		if a.Partition == "" {
			any = a
		}
	}
	return any
}

// AccountAssoc is the association of an account in a cluster's tree.
func (d *AcctDB) AccountAssoc(cluster, account string) *Assoc {
	for _, a := range d.Assocs {
		if a.Cluster == cluster && a.Account == account && a.User == "" {
			return a
		}
	}
	return nil
}

// Lineage lists the account associations from account up to root, the
// order in which Grp limits apply.
func (d *AcctDB) Lineage(cluster, account string) []*Assoc {
	var out []*Assoc
	for seen := 0; account != "" && seen < 64; seen++ {
		a := d.AccountAssoc(cluster, account)
		if a == nil {
			break
		}
		out = append(out, a)
		account = a.Parent
	}
	return out
}

// Effective returns a copy of a with the limits it leaves unset taken
// from its parent accounts, as Slurm applies and lists them: DefaultQOS,
// MaxJobs, MaxSubmitJobs, MaxWall, Priority and the QOS list come from
// the nearest association that sets them; MaxTRES and MaxTRESPerNode
// merge name by name, the nearest count winning. Grp limits and Shares
// are the association's own (Grp limits hold at every level instead).
func (d *AcctDB) Effective(a *Assoc) *Assoc {
	e := *a
	parent := a.Parent
	if a.User != "" {
		parent = a.Account
	}
	for _, p := range d.Lineage(a.Cluster, parent) {
		e.Inherit(p)
	}
	return &e
}

// Inherit fills the limits a leaves unset from p, an association above
// it (see Effective): applied from the nearest parent up, or once with a
// parent that already carries its own inherited values.
func (a *Assoc) Inherit(p *Assoc) {
	if a.DefaultQOS == "" {
		a.DefaultQOS = p.DefaultQOS
	}
	if a.MaxJobs == NoLimit {
		a.MaxJobs = p.MaxJobs
	}
	if a.MaxSubmitJobs == NoLimit {
		a.MaxSubmitJobs = p.MaxSubmitJobs
	}
	if a.MaxWall == NoLimit {
		a.MaxWall = p.MaxWall
	}
	if a.Priority == NoLimit {
		a.Priority = p.Priority
	}
	if len(a.QOS) == 0 {
		a.QOS = p.QOS
	}
	if len(p.MaxTRES) > 0 {
		a.MaxTRES = p.MaxTRES.Merge(a.MaxTRES)
	}
	if len(p.MaxTRESPerNode) > 0 {
		a.MaxTRESPerNode = p.MaxTRESPerNode.Merge(a.MaxTRESPerNode)
	}
}
