package acctmgr

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/drover-hpc/drover/internal/model"
)

// Apply returns the configuration after req, and the text sacctmgr
// prints about the change. It never modifies db: what changes is copied.
// A request that would change nothing returns a nil configuration and
// the text saying so (see Unchanged). Errors are *Error, worded as
// sacctmgr prints them on stderr. cluster is the controller's own, the
// one a new configuration starts with.
func Apply(db *model.AcctDB, req *Request, cluster string) (*model.AcctDB, string, error) {
	if req == nil {
		return nil, "", errorf("%s", slurmError("empty request"))
	}
	if db == nil {
		db = Init(cluster)
	}
	verb := verbName(req.Verb)
	entity, err := MatchEntity(verb, req.Entity)
	if err != nil {
		return nil, "", err
	}
	if verb == VerbList {
		return nil, "", errorf("%s", slurmError("list changes nothing"))
	}
	t := begin(db, cluster)
	names := make([]KeyValue, len(req.Names))
	for i, n := range req.Names {
		names[i] = KeyValue{Key: n}
	}
	cond := append(names, req.Where...)
	switch verb {
	case VerbAdd:
		err = t.add(entity, append(cond, req.Set...))
	case VerbModify:
		err = t.modify(entity, cond, req.Set)
	case VerbDelete:
		err = t.remove(entity, append(cond, req.Set...))
	}
	if err != nil {
		var e *Error
		if !errors.As(err, &e) {
			err = &Error{slurmError("%v", err)}
		}
		return nil, "", err
	}
	text := t.out.String()
	var warn error
	if t.warn.Len() > 0 {
		warn = &Warning{t.warn.String()}
	}
	if !t.changed {
		return nil, text, warn
	}
	t.finish()
	return t.db, text, warn
}

// verbName reads the verbs sacctmgr takes as their canonical names.
func verbName(v string) string {
	switch {
	case abbrev(v, "add", 3), abbrev(v, "create", 3):
		return VerbAdd
	case abbrev(v, "modify", 1), abbrev(v, "update", 1):
		return VerbModify
	case abbrev(v, "delete", 3), abbrev(v, "remove", 3):
		return VerbDelete
	case abbrev(v, "list", 3), abbrev(v, "show", 3):
		return VerbList
	}
	return v
}

func (t *txn) add(entity string, opts []KeyValue) error {
	switch entity {
	case EntityAccount:
		return t.addAccount(opts)
	case EntityUser:
		return t.addUser(opts)
	case EntityQOS:
		return t.addQOS(opts)
	default:
		return t.addCluster(opts)
	}
}

func (t *txn) modify(entity string, cond, set []KeyValue) error {
	switch entity {
	case EntityAccount:
		return t.modifyAccount(cond, set)
	case EntityUser:
		return t.modifyUser(cond, set)
	case EntityQOS:
		return t.modifyQOS(cond, set)
	default:
		return t.modifyCluster(cond, set)
	}
}

func (t *txn) remove(entity string, cond []KeyValue) error {
	switch entity {
	case EntityAccount:
		return t.deleteAccount(cond)
	case EntityUser:
		return t.deleteUser(cond)
	case EntityQOS:
		return t.deleteQOS(cond)
	default:
		return t.deleteCluster(cond)
	}
}

// skipKeyword reports the bare words "where" and "set", which only
// split a command (and mean nothing where the command has one part).
func skipKeyword(kv KeyValue) bool {
	return kv.Op == "" && (IsKeyword(kv.Key, "where") || IsKeyword(kv.Key, "set"))
}

// txn is a change being built on a copy of the configuration whose maps
// and association list are its own; records are copied before they are
// changed, as the old ones are shared with readers.
type txn struct {
	db      *model.AcctDB
	cluster string
	fresh   map[any]bool
	pos     map[*model.Assoc]int // index in db.Assocs, old copies included
	gone    map[*model.Assoc]bool
	out     strings.Builder
	warn    strings.Builder // see Warning
	changed bool
}

func begin(old *model.AcctDB, cluster string) *txn {
	db := &model.AcctDB{
		Clusters: slices.Clone(old.Clusters),
		Accounts: maps.Clone(old.Accounts),
		Users:    maps.Clone(old.Users),
		Assocs:   slices.Clone(old.Assocs),
		QOS:      maps.Clone(old.QOS),
		NextID:   max(old.NextID, 1),
		NextQOS:  max(old.NextQOS, 1),
	}
	if db.Accounts == nil {
		db.Accounts = map[string]*model.Account{}
	}
	if db.Users == nil {
		db.Users = map[string]*model.AcctUser{}
	}
	if db.QOS == nil {
		db.QOS = map[string]*model.QOS{}
	}
	t := &txn{db: db, cluster: cluster, fresh: map[any]bool{}, pos: map[*model.Assoc]int{}, gone: map[*model.Assoc]bool{}}
	for i, a := range db.Assocs {
		t.pos[a] = i
	}
	return t
}

// finish drops the associations removed and keeps the list in id order.
func (t *txn) finish() {
	if len(t.gone) > 0 {
		t.db.Assocs = slices.DeleteFunc(t.db.Assocs, func(a *model.Assoc) bool { return t.gone[a] })
	}
	sort.SliceStable(t.db.Assocs, func(i, j int) bool { return t.db.Assocs[i].ID < t.db.Assocs[j].ID })
}

func cloneAssoc(a *model.Assoc) *model.Assoc {
	c := *a
	c.GrpTRES = maps.Clone(a.GrpTRES)
	c.MaxTRES = maps.Clone(a.MaxTRES)
	c.MaxTRESPerNode = maps.Clone(a.MaxTRESPerNode)
	c.QOS = slices.Clone(a.QOS)
	return &c
}

// cur is the association's version in this change.
func (t *txn) cur(a *model.Assoc) *model.Assoc { return t.db.Assocs[t.pos[a]] }

// editAssoc returns the association's own copy in this change.
func (t *txn) editAssoc(a *model.Assoc) *model.Assoc {
	i := t.pos[a]
	a = t.db.Assocs[i]
	if t.fresh[a] {
		return a
	}
	c := cloneAssoc(a)
	t.db.Assocs[i] = c
	t.pos[c] = i
	t.fresh[c] = true
	t.changed = true
	return c
}

func (t *txn) addAssoc(a *model.Assoc) {
	a.ID = t.db.NextID
	t.db.NextID++
	t.pos[a] = len(t.db.Assocs)
	t.db.Assocs = append(t.db.Assocs, a)
	t.fresh[a] = true
	t.changed = true
}

func (t *txn) dropAssoc(a *model.Assoc) {
	t.gone[t.cur(a)] = true
	t.changed = true
}

// live lists the associations not removed by this change.
func (t *txn) live() []*model.Assoc {
	out := make([]*model.Assoc, 0, len(t.db.Assocs))
	for _, a := range t.db.Assocs {
		if !t.gone[a] {
			out = append(out, a)
		}
	}
	return out
}

func (t *txn) editUser(name string) *model.AcctUser {
	u := t.db.Users[name]
	if !t.fresh[u] {
		c := *u
		u = &c
		t.db.Users[name] = u
		t.fresh[u] = true
	}
	t.changed = true
	return u
}

func (t *txn) editAccount(name string) *model.Account {
	a := t.db.Accounts[name]
	if !t.fresh[a] {
		c := *a
		a = &c
		t.db.Accounts[name] = a
		t.fresh[a] = true
	}
	t.changed = true
	return a
}

func (t *txn) editQOS(name string) *model.QOS {
	q := t.db.QOS[name]
	if !t.fresh[q] {
		c := *q
		c.Flags = slices.Clone(q.Flags)
		c.Preempt = slices.Clone(q.Preempt)
		c.GrpTRES = maps.Clone(q.GrpTRES)
		c.MaxTRESPerJob = maps.Clone(q.MaxTRESPerJob)
		c.MaxTRESPerNode = maps.Clone(q.MaxTRESPerNode)
		c.MaxTRESPerUser = maps.Clone(q.MaxTRESPerUser)
		q = &c
		t.db.QOS[name] = q
		t.fresh[q] = true
	}
	t.changed = true
	return q
}

// tree indexes associations: account associations by cluster and
// account, and the associations under each account.
type tree struct {
	acct map[key]*model.Assoc
	kids map[key][]*model.Assoc
	all  []*model.Assoc
}

type key struct{ cluster, account string }

// parentKey names the account an association sits under.
func parentKey(a *model.Assoc) key {
	if a.User != "" {
		return key{a.Cluster, a.Account}
	}
	return key{a.Cluster, a.Parent}
}

func buildTree(assocs []*model.Assoc) *tree {
	tr := &tree{acct: map[key]*model.Assoc{}, kids: map[key][]*model.Assoc{}, all: assocs}
	for _, a := range assocs {
		if a.User == "" {
			tr.acct[key{a.Cluster, a.Account}] = a
		}
	}
	for _, a := range assocs {
		if p := parentKey(a); p.account != "" && tr.acct[p] != nil {
			tr.kids[p] = append(tr.kids[p], a)
		}
	}
	for k, kids := range tr.kids {
		sort.Slice(kids, func(i, j int) bool { return childLess(kids[i], kids[j]) })
		tr.kids[k] = kids
	}
	return tr
}

// childLess orders the associations under one account as Slurm lists
// them: users first, by name, then sub-accounts, by name.
func childLess(a, b *model.Assoc) bool {
	if (a.User != "") != (b.User != "") {
		return a.User != ""
	}
	if a.User != b.User {
		return a.User < b.User
	}
	if a.Account != b.Account {
		return a.Account < b.Account
	}
	return a.Partition < b.Partition
}

// ordered lists the associations as a tree walk: each cluster's root
// account, then what is under it; associations whose parent is missing
// come last.
func (tr *tree) ordered() []*model.Assoc {
	var roots []*model.Assoc
	for _, a := range tr.all {
		if a.User == "" && (a.Parent == "" || tr.acct[key{a.Cluster, a.Parent}] == nil) {
			roots = append(roots, a)
		}
	}
	sort.Slice(roots, func(i, j int) bool {
		if roots[i].Cluster != roots[j].Cluster {
			return roots[i].Cluster < roots[j].Cluster
		}
		if (roots[i].Parent == "") != (roots[j].Parent == "") {
			return roots[i].Parent == ""
		}
		return roots[i].Account < roots[j].Account
	})
	out := make([]*model.Assoc, 0, len(tr.all))
	seen := map[*model.Assoc]bool{}
	var walk func(a *model.Assoc)
	walk = func(a *model.Assoc) {
		if seen[a] {
			return
		}
		seen[a] = true
		out = append(out, a)
		if a.User == "" {
			for _, k := range tr.kids[key{a.Cluster, a.Account}] {
				walk(k)
			}
		}
	}
	for _, r := range roots {
		walk(r)
	}
	for _, a := range tr.all {
		if !seen[a] {
			out = append(out, a)
		}
	}
	return out
}

// effective returns a with the limits it inherits filled in (see
// model.AcctDB.Effective), computing each parent once.
func (tr *tree) effective(a *model.Assoc, memo map[*model.Assoc]*model.Assoc) *model.Assoc {
	if e, ok := memo[a]; ok {
		if e == nil { // a loop in the tree: stop inheriting there
			return a
		}
		return e
	}
	memo[a] = nil
	e := *a
	if p := tr.acct[parentKey(a)]; p != nil && p != a {
		e.Inherit(tr.effective(p, memo))
	}
	memo[a] = &e
	return &e
}

// under lists the associations below the account association a, in
// tree order.
func (tr *tree) under(a *model.Assoc) []*model.Assoc {
	var out []*model.Assoc
	seen := map[*model.Assoc]bool{a: true}
	var walk func(k key)
	walk = func(k key) {
		for _, c := range tr.kids[k] {
			if seen[c] {
				continue
			}
			seen[c] = true
			out = append(out, c)
			if c.User == "" {
				walk(key{c.Cluster, c.Account})
			}
		}
	}
	walk(key{a.Cluster, a.Account})
	return out
}

// inheritors lists the user associations below the account association
// a that take one of the limits l sets from it, through sub-accounts
// that set none of those themselves: the ones a change of a reaches.
func (tr *tree) inheritors(a *model.Assoc, l *limits) []*model.Assoc {
	var out []*model.Assoc
	var walk func(k key, depth int)
	walk = func(k key, depth int) {
		if depth > 64 {
			return
		}
		for _, c := range tr.kids[k] {
			if !inheritsAny(c, l) {
				continue
			}
			if c.User != "" {
				out = append(out, c)
			} else {
				walk(key{c.Cluster, c.Account}, depth+1)
			}
		}
	}
	walk(key{a.Cluster, a.Account}, 0)
	return out
}

// inheritsAny reports whether c leaves unset one of the limits l sets.
func inheritsAny(c *model.Assoc, l *limits) bool {
	return l.maxJobs != nil && c.MaxJobs == model.NoLimit ||
		l.maxSubmit != nil && c.MaxSubmitJobs == model.NoLimit ||
		l.maxWall != nil && c.MaxWall == model.NoLimit ||
		l.prio != nil && c.Priority == model.NoLimit ||
		l.defQOS != nil && c.DefaultQOS == "" ||
		l.qos != nil && len(c.QOS) == 0 ||
		l.maxTRES != nil || l.maxTRESNode != nil
}

// clusterList reads the clusters a command names, checking each exists;
// none named means all of them.
func (t *txn) clusterList(named []string, what string) ([]string, error) {
	if len(named) == 0 {
		if len(t.db.Clusters) == 0 {
			return nil, errorf("  Can't add %s, no cluster defined yet.\n Please contact your administrator.\n", what)
		}
		return slices.Clone(t.db.Clusters), nil
	}
	for _, c := range named {
		if !slices.Contains(t.db.Clusters, c) {
			return nil, errorf(" This cluster '%s' doesn't exist.\n        Contact your admin to add it to accounting.\n", c)
		}
	}
	return named, nil
}

// assocLabel names an association as sacctmgr lists the ones a change
// touches; wide is the account column's width (20 when modifying, 10
// when deleting).
func assocLabel(a *model.Assoc, wide int) string {
	switch {
	case a.User != "" && a.Partition != "":
		return fmt.Sprintf("C = %-10s A = %-*s U = %-9s P = %s", a.Cluster, wide, a.Account, a.User, a.Partition)
	case a.User != "":
		return fmt.Sprintf("C = %-10s A = %-*s U = %-9s", a.Cluster, wide, a.Account, a.User)
	case a.Parent != "":
		return fmt.Sprintf("C = %-10s A = %s of %s", a.Cluster, a.Account, a.Parent)
	}
	return fmt.Sprintf("C = %-10s A = %s", a.Cluster, a.Account)
}
