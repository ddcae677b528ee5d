package acctmgr

import (
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/drover-hpc/drover/internal/model"
)

// ListOptions are the sacctmgr options that shape listings.
type ListOptions struct {
	Mode      int  // Aligned, Parsable (-p) or Parsable2 (-P)
	NoHeader  bool // -n
	WithAssoc bool // -s: users and accounts with their associations
}

// Controller describes the controller of one cluster: what the cluster
// listing shows of it and the accounting configuration does not hold.
type Controller struct {
	Cluster string
	Host    string
	Port    int
	RPC     int
}

// Listing is a parsed list (show) command, ready to print.
type Listing struct {
	entity string
	opts   ListOptions
	cols   []column
	format []string

	entityCond
	withAssoc, tree, onlyDefs    bool
	noParentInfo, noParentLimits bool
	withFed, noLimits            bool

	// AskWithAssoc is set when conditions on associations were given
	// for users or accounts without withassoc: sacctmgr asks whether to
	// go on, as they are then ignored.
	AskWithAssoc bool
}

// ParseList reads the words after "list ENTITY".
func ParseList(entity string, args []string, opts ListOptions) (*Listing, error) {
	l := &Listing{entity: entity, opts: opts, withAssoc: opts.WithAssoc}
	var errs strings.Builder
	db := &model.AcctDB{}
	for _, tok := range args {
		kv := SplitOption(tok)
		if kv.Op == "" && IsKeyword(kv.Key, "where") || kv.Op == "" && IsKeyword(kv.Key, "set") {
			continue
		}
		if kv.Op != "" && (entity == EntityCluster && abbrev(kv.Key, "Format", 2) ||
			entity != EntityCluster && abbrev(kv.Key, "Format", 1)) {
			l.format = append(l.format, nameList(kv.Value, true)...)
			continue
		}
		if msg := l.cond(db, kv); msg != "" {
			errs.WriteString(msg)
		}
	}
	if errs.Len() > 0 {
		return nil, &Error{errs.String()}
	}
	format := l.format
	if len(format) == 0 {
		format = l.defaultFormat()
	}
	for _, item := range format {
		c, err := parseField(item, l.tree)
		if err != nil {
			return nil, err
		}
		l.cols = append(l.cols, c)
	}
	return l, nil
}

// cond reads one condition; it returns sacctmgr's complaint, if any.
func (l *Listing) cond(db *model.AcctDB, kv KeyValue) string {
	k := kv.Key
	bare := kv.Op == ""
	val := kv.Value
	if bare {
		val = kv.Key
	}
	assocOnly := func() string {
		ok, err := setAssocCond(db, &l.assoc, kv)
		if err != nil {
			return err.Error()
		}
		if !ok {
			return unknownCondition(kv.String())
		}
		if !l.withAssoc {
			l.AskWithAssoc = true
		}
		return ""
	}
	switch l.entity {
	case EntityAccount:
		switch {
		case bare && abbrev(k, "WithAssoc", 5):
			l.withAssoc = true
		case listKeyword(kv):
		default:
			if ok, _ := l.readAccount(kv); !ok {
				return assocOnly()
			}
		}
	case EntityUser:
		switch {
		case bare && abbrev(k, "WithAssoc", 5):
			l.withAssoc = true
		case listKeyword(kv):
		default:
			ok, _, err := l.readUser(kv)
			switch {
			case err != nil:
				return err.Error()
			case ok, abbrev(k, "DefaultWCKey", 8), abbrev(k, "WCKeys", 1):
			default:
				return assocOnly()
			}
		}
	case EntityAssoc:
		switch {
		case bare && abbrev(k, "OnlyDefaults", 2):
			l.onlyDefs = true
		case bare && abbrev(k, "Tree", 4):
			l.tree = true
		case bare && matchAny(k, word{"WithDeleted", 5}, word{"WithRawQOSLevel", 5}, word{"where", 5}):
		case bare && abbrev(k, "WithSubAccounts", 5):
			l.assoc.subAccounts = true
		case bare && abbrev(k, "WOPInfo", 4):
			l.noParentInfo = true
		case bare && (abbrev(k, "WOPLimits", 4) || abbrev(k, "WOLimits", 3)):
			l.noParentLimits = true
		case bare || abbrev(k, "Ids", 1) || abbrev(k, "Associations", 2):
			if err := l.assoc.addIDs(val); err != nil {
				return err.Error()
			}
		default:
			ok, err := setAssocCond(db, &l.assoc, kv)
			if err != nil {
				return err.Error()
			}
			if !ok {
				return " Unknown condition: " + kv.String() + "\n"
			}
		}
	case EntityQOS:
		switch {
		case bare && matchAny(k, word{"WithDeleted", 5}, word{"where", 5}):
		default:
			ok, _, err := l.readQOS(kv)
			if err != nil {
				return err.Error()
			}
			if !ok {
				return unknownCondition(kv.String())
			}
		}
	case EntityCluster:
		switch {
		case bare && matchAny(k, word{"WithDeleted", 5}, word{"where", 5}):
		case bare && abbrev(k, "WithFed", 5):
			l.withFed = true
		case bare && abbrev(k, "WOLimits", 3):
			l.noLimits = true
		case bare || abbrev(k, "Names", 1) || abbrev(k, "Clusters", 3):
			l.names = append(l.names, nameList(val, true)...)
		case abbrev(k, "Federations", 3), abbrev(k, "Classification", 3), abbrev(k, "flags", 2),
			abbrev(k, "PluginIDSelect", 1), abbrev(k, "RPCVersions", 1):
		default:
			return unknownCondition(kv.String())
		}
	case "tres":
		switch {
		case bare && abbrev(k, "WithDeleted", 5):
		case bare || abbrev(k, "Names", 1) || abbrev(k, "Type", 2):
			l.names = append(l.names, nameList(val, true)...)
		case abbrev(k, "ID", 1):
			var a assocCond
			if err := a.addIDs(val); err != nil {
				return err.Error()
			}
			l.ids = append(l.ids, a.ids...)
		default:
			return unknownCondition(kv.String())
		}
	}
	return ""
}

// defaultFormat is the field list sacctmgr prints without format=.
func (l *Listing) defaultFormat() []string {
	var s string
	switch l.entity {
	case EntityAccount:
		s = "Acc,Des,O"
		if l.withAssoc {
			s += ",Cl,ParentN,U,Share,Priority,GrpJ,GrpN,GrpCPUs,GrpMEM,GrpS,GrpWall,GrpCPUMins," +
				"MaxJ,MaxN,MaxCPUs,MaxS,MaxW,MaxCPUMins,QOS,DefaultQOS"
		}
	case EntityUser:
		s = "U,DefaultA,Ad"
		if l.withAssoc {
			s += ",Cl,Acc,Part,Share,Priority,MaxJ,MaxN,MaxCPUs,MaxS,MaxW,MaxCPUMins,QOS,DefaultQOS"
		}
	case EntityAssoc:
		s = "Cluster,Account,User,Part"
		if !l.noParentLimits {
			s += ",Share,Priority,GrpJ,GrpTRES,GrpS,GrpWall,GrpTRESMins,MaxJ,MaxTRES,MaxTRESPerN,MaxS," +
				"MaxW,MaxTRESMins,QOS,DefaultQOS,GrpTRESRunMins"
		}
	case EntityQOS:
		s = "Name,Prio,GraceT,Preempt,PreemptE,PreemptM,Flags%40,UsageThres,UsageFactor,GrpTRES," +
			"GrpTRESMins,GrpTRESRunMins,GrpJ,GrpS,GrpW,MaxTRES,MaxTRESPerN,MaxTRESMins,MaxW," +
			"MaxTRESPerUser,MaxJobsPerUser,MaxSubmitJobsPerUser,MaxTRESPerAcct,MaxJobsPerAcct," +
			"MaxSubmitJobsPerAcct,MinTRES"
	case EntityCluster:
		s = "Cl,Controlh,Controlp,RPC"
		if !l.noLimits {
			s += ",Fa,GrpJ,GrpTRES,GrpS,MaxJ,MaxTRES,MaxS,MaxW,QOS,DefaultQOS"
		}
		if l.withFed {
			s += ",Federation,ID,Features,FedState"
		}
	case "tres":
		s = "Type,Name%15,ID"
	}
	return strings.Split(s, ",")
}

// NeedsController reports whether the listing shows what only the
// controller knows (its host, port and protocol version).
func (l *Listing) NeedsController() bool {
	return l.entity == EntityCluster && slices.ContainsFunc(l.cols, func(c column) bool {
		return c.id == "chost" || c.id == "cport" || c.id == "rpc"
	})
}

// Render prints the listing of db; ctl may be nil.
func (l *Listing) Render(db *model.AcctDB, ctl *Controller) string {
	if db == nil {
		db = &model.AcctDB{}
	}
	p := &printer{cols: l.cols, mode: l.opts.Mode}
	if !l.opts.NoHeader {
		p.header()
	}
	r := newRows(db, l)
	switch l.entity {
	case EntityAccount:
		r.accounts(p)
	case EntityUser:
		r.users(p)
	case EntityAssoc:
		r.assocs(p)
	case EntityQOS:
		r.qos(p)
	case EntityCluster:
		r.clusters(p, ctl)
	case "tres":
		r.tres(p)
	}
	return p.b.String()
}

// rows makes the lines of a listing.
type rows struct {
	db   *model.AcctDB
	l    *Listing
	tr   *tree
	memo map[*model.Assoc]*model.Assoc
}

func newRows(db *model.AcctDB, l *Listing) *rows {
	return &rows{db: db, l: l, tr: buildTree(db.Assocs), memo: map[*model.Assoc]*model.Assoc{}}
}

// shown is what a listing shows of an association: with what it
// inherits unless the listing asked for its own values only.
func (r *rows) shown(a *model.Assoc) *model.Assoc {
	if r.l.noParentLimits || r.l.noParentInfo {
		return a
	}
	return r.tr.effective(a, r.memo)
}

// assocsMatching lists the associations the conditions pick, in tree
// order.
func (r *rows) assocsMatching(userOnly bool) []*model.Assoc {
	c := &r.l.assoc
	var subtree map[*model.Assoc]bool
	if c.subAccounts && len(c.accounts) > 0 {
		subtree = map[*model.Assoc]bool{}
		for _, a := range r.tr.all {
			if a.User == "" && slices.Contains(c.accounts, a.Account) {
				for _, x := range r.tr.under(a) {
					subtree[x] = true
				}
			}
		}
	}
	var out []*model.Assoc
	for _, a := range r.tr.ordered() {
		if (userOnly || c.usersGiven) && a.User == "" {
			continue
		}
		if r.l.onlyDefs {
			u := r.db.Users[a.User]
			if a.User == "" || u == nil || u.DefaultAccount != a.Account {
				continue
			}
		}
		if subtree[a] {
			cc := *c
			cc.accounts = nil
			if cc.match(a, r.shown(a)) {
				out = append(out, a)
			}
			continue
		}
		if c.match(a, r.shown(a)) {
			out = append(out, a)
		}
	}
	return out
}

// assocValue is an association's value in column c.
func (r *rows) assocValue(a *model.Assoc, c column, print string) value {
	if a == nil {
		return zero(c.kind)
	}
	e := r.shown(a)
	tresCount := func(t model.TRES, name string) value {
		if n, ok := t[name]; ok && n >= 0 {
			return text(strconv.FormatInt(n, 10))
		}
		return unset
	}
	switch c.id {
	case "acct":
		return text(print)
	case "cluster":
		return text(a.Cluster)
	case "user":
		return text(a.User)
	case "part":
		return text(a.Partition)
	case "fairshare":
		if a.Shares == model.SharesParent {
			return text("parent")
		}
		return num(a.Shares)
	case "prio":
		return countValue(e.Priority)
	case "grpj":
		return countValue(a.GrpJobs)
	case "grps":
		return countValue(a.GrpSubmitJobs)
	case "grpt":
		return text(a.GrpTRES.String())
	case "grpc":
		return tresCount(a.GrpTRES, "cpu")
	case "grpmem":
		return tresCount(a.GrpTRES, "mem")
	case "grpn":
		return tresCount(a.GrpTRES, "node")
	case "grpw":
		return minutes(a.GrpWall)
	case "maxj":
		return countValue(e.MaxJobs)
	case "maxs":
		return countValue(e.MaxSubmitJobs)
	case "maxt":
		return text(e.MaxTRES.String())
	case "maxc":
		return tresCount(e.MaxTRES, "cpu")
	case "maxn":
		return tresCount(e.MaxTRES, "node")
	case "maxtn":
		return text(e.MaxTRESPerNode.String())
	case "maxw":
		return minutes(e.MaxWall)
	case "qos":
		q := slices.Clone(e.QOS)
		sort.Strings(q)
		return text(strings.Join(q, ","))
	case "qosraw":
		var ids []string
		for _, n := range e.QOS {
			if q := r.db.QOS[n]; q != nil {
				ids = append(ids, strconv.Itoa(q.ID))
			}
		}
		sort.Strings(ids)
		return text(strings.Join(ids, ","))
	case "dqos":
		return text(e.DefaultQOS)
	case "id":
		return num(a.ID)
	case "pid":
		if p := r.tr.acct[parentKey(a)]; p != nil && p != a && !r.l.noParentInfo {
			return num(p.ID)
		}
		return num(0)
	case "pname":
		if a.User == "" && !r.l.noParentInfo {
			return text(a.Parent)
		}
		return unset
	case "grptm", "grptrm", "maxtm", "maxtrm", "maxtrma", "grpcm", "grpcrm", "maxcm", "maxcrm",
		"grpja", "maxja", "minpt", "lft", "rgt":
		return unset
	}
	return zero(c.kind)
}

// minutes prints a time limit; blank when there is none.
func minutes(secs int64) value {
	if secs < 0 {
		return unset
	}
	return text(durationString(secs))
}

func (r *rows) assocs(p *printer) {
	var treeNames map[key]string
	if r.l.tree {
		treeNames = map[key]string{}
	}
	for _, a := range r.assocsMatching(false) {
		name := a.Account
		if treeNames != nil {
			name = r.treeName(a, treeNames)
		}
		vals := make([]value, len(p.cols))
		for i, c := range p.cols {
			vals[i] = r.assocValue(a, c, name)
		}
		p.row(vals)
	}
}

// treeName indents an account by its depth in the tree (a user's
// association one step deeper than its account), as "tree" lists them;
// spaces holds each account's indentation.
func (r *rows) treeName(a *model.Assoc, spaces map[key]string) string {
	if a.User != "" {
		if s, ok := spaces[key{a.Cluster, a.Account}]; ok {
			return s + " " + a.Account
		}
		return a.Account
	}
	s := ""
	if ps, ok := spaces[key{a.Cluster, a.Parent}]; ok && a.Parent != "" {
		s = ps + " "
	}
	spaces[key{a.Cluster, a.Account}] = s
	return s + a.Account
}

func (r *rows) accounts(p *printer) {
	var names []string
	for n, a := range r.db.Accounts {
		if r.l.matchAccount(n, a) {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	var assocs []*model.Assoc
	if r.l.withAssoc {
		assocs = r.assocsMatching(false)
	}
	for _, n := range names {
		acct := r.db.Accounts[n]
		own := func(c column) (value, bool) {
			switch c.id {
			case "acct":
				return text(acct.Name), true
			case "coords":
				return unset, true
			case "desc":
				return text(acct.Description), true
			case "org":
				return text(acct.Organization), true
			}
			return unset, false
		}
		r.entityRows(p, own, assocs, func(a *model.Assoc) bool { return a.Account == n })
	}
}

// entityRows prints one line per association of a user or account
// (mine picks them), or one line without association values when it
// has none; own gives the entity's own columns.
func (r *rows) entityRows(p *printer, own func(column) (value, bool), assocs []*model.Assoc, mine func(*model.Assoc) bool) {
	printed := false
	for _, a := range assocs {
		if !mine(a) {
			continue
		}
		printed = true
		vals := make([]value, len(p.cols))
		for i, c := range p.cols {
			if v, ok := own(c); ok {
				vals[i] = v
			} else {
				vals[i] = r.assocValue(a, c, a.Account)
			}
		}
		p.row(vals)
	}
	if printed {
		return
	}
	vals := make([]value, len(p.cols))
	for i, c := range p.cols {
		switch v, ok := own(c); {
		case ok:
			vals[i] = v
		case c.id == "qos", c.id == "prio":
			vals[i] = unset
		default:
			vals[i] = zero(c.kind)
		}
	}
	p.row(vals)
}

func (r *rows) users(p *printer) {
	var names []string
	for n, u := range r.db.Users {
		if r.l.matchUser(n, u) {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	var assocs []*model.Assoc
	if r.l.withAssoc {
		saved := r.l.assoc.users
		r.l.assoc.users = append(slices.Clone(saved), r.l.names...)
		assocs = r.assocsMatching(true)
		r.l.assoc.users = saved
	}
	for _, n := range names {
		u := r.db.Users[n]
		own := func(c column) (value, bool) {
			switch c.id {
			case "admin":
				lvl := u.AdminLevel
				if lvl == "" {
					lvl = model.AdminNone
				}
				return text(lvl), true
			case "coords", "dwckey":
				return unset, true
			case "dacct":
				return text(u.DefaultAccount), true
			case "user":
				return text(u.Name), true
			}
			return unset, false
		}
		r.entityRows(p, own, assocs, func(a *model.Assoc) bool { return a.User == n })
	}
}

func (r *rows) qos(p *printer) {
	for _, n := range qosNames(r.db) {
		q := r.db.QOS[n]
		if !r.l.matchQOS(q) {
			continue
		}
		vals := make([]value, len(p.cols))
		for i, c := range p.cols {
			vals[i] = qosValue(q, c)
		}
		p.row(vals)
	}
}

func qosValue(q *model.QOS, c column) value {
	tresCount := func(t model.TRES, name string) value {
		if n, ok := t[name]; ok && n >= 0 {
			return text(strconv.FormatInt(n, 10))
		}
		return unset
	}
	switch c.id {
	case "name":
		return text(q.Name)
	case "desc":
		return text(q.Description)
	case "id":
		return num(q.ID)
	case "prio":
		return num(q.Priority)
	case "grace":
		return text(durationString(q.GraceTime))
	case "preempt":
		p := slices.Clone(q.Preempt)
		sort.Strings(p)
		return text(strings.Join(p, ","))
	case "prxmpt":
		if q.PreemptExemptTime <= 0 {
			return unset
		}
		return text(durationString(q.PreemptExemptTime))
	case "preemptm":
		if q.PreemptMode == "" {
			return text("cluster")
		}
		return text(strings.ToLower(q.PreemptMode))
	case "flags":
		if len(q.Flags) == 0 {
			return unset
		}
		return text(strings.Join(sortFlags(q.Flags), ","))
	case "uf":
		return text(strconv.FormatFloat(q.UsageFactor, 'f', 6, 64))
	case "grpt":
		return text(q.GrpTRES.String())
	case "grpc":
		return tresCount(q.GrpTRES, "cpu")
	case "grpmem":
		return tresCount(q.GrpTRES, "mem")
	case "grpn":
		return tresCount(q.GrpTRES, "node")
	case "grpj":
		return countValue(q.GrpJobs)
	case "grps":
		return countValue(q.GrpSubmitJobs)
	case "maxt":
		return text(q.MaxTRESPerJob.String())
	case "maxc":
		return tresCount(q.MaxTRESPerJob, "cpu")
	case "maxn":
		return tresCount(q.MaxTRESPerJob, "node")
	case "maxtn":
		return text(q.MaxTRESPerNode.String())
	case "maxtu":
		return text(q.MaxTRESPerUser.String())
	case "maxcu":
		return tresCount(q.MaxTRESPerUser, "cpu")
	case "maxnu":
		return tresCount(q.MaxTRESPerUser, "node")
	case "maxj":
		return countValue(q.MaxJobsPerUser)
	case "maxs":
		return countValue(q.MaxSubmitJobsPerUser)
	case "maxw":
		return minutes(q.MaxWall)
	case "ut", "lf", "grpw", "grptm", "grptrm", "maxtm", "maxtrm", "maxtrma", "maxta", "mint",
		"maxjpa", "maxsa", "maxjaa", "maxjau", "grpja", "minpt", "minc", "grpcm", "grpcrm", "maxcm", "maxcrm":
		return unset
	}
	return zero(c.kind)
}

func (r *rows) clusters(p *printer, ctl *Controller) {
	names := slices.Clone(r.db.Clusters)
	sort.Strings(names)
	for _, n := range names {
		if len(r.l.names) > 0 && !slices.Contains(r.l.names, n) {
			continue
		}
		root := r.tr.acct[key{n, "root"}]
		vals := make([]value, len(p.cols))
		for i, c := range p.cols {
			switch c.id {
			case "cluster":
				vals[i] = text(n)
			case "chost":
				vals[i] = unset
				if ctl != nil && ctl.Cluster == n {
					vals[i] = text(ctl.Host)
				}
			case "cport", "rpc":
				vals[i] = num(0)
				if ctl != nil && ctl.Cluster == n {
					vals[i] = num(map[string]int{"cport": ctl.Port, "rpc": ctl.RPC}[c.id])
				}
			case "class", "features", "federation", "fedstate", "tres", "flags", "clusternodes":
				vals[i] = unset
			default:
				vals[i] = r.assocValue(root, c, "root")
			}
		}
		p.row(vals)
	}
}

// tresIDs are the ids Slurm gives its built-in TRES; others (gres/...,
// license/...) are numbered from 1001 by name.
var tresIDs = []string{"cpu", "mem", "energy", "node", "billing", "fs/disk", "vmem", "pages"}

func (r *rows) tres(p *printer) {
	names := slices.Clone(tresIDs)
	seen := map[string]bool{}
	add := func(t model.TRES) {
		for n := range t {
			if !slices.Contains(tresIDs, n) && !seen[n] {
				seen[n] = true
			}
		}
	}
	for _, a := range r.db.Assocs {
		add(a.GrpTRES)
		add(a.MaxTRES)
		add(a.MaxTRESPerNode)
	}
	for _, q := range r.db.QOS {
		add(q.GrpTRES)
		add(q.MaxTRESPerJob)
		add(q.MaxTRESPerNode)
		add(q.MaxTRESPerUser)
	}
	var extra []string
	for n := range seen {
		extra = append(extra, n)
	}
	sort.Strings(extra)
	names = append(names, extra...)
	for i, n := range names {
		id := i + 1
		if i >= len(tresIDs) {
			id = 1001 + i - len(tresIDs)
		}
		typ, name, _ := strings.Cut(n, "/")
		if len(r.l.names) > 0 && !slices.Contains(r.l.names, typ) && !slices.Contains(r.l.names, n) ||
			len(r.l.ids) > 0 && !slices.Contains(r.l.ids, id) {
			continue
		}
		vals := make([]value, len(p.cols))
		for j, c := range p.cols {
			switch c.id {
			case "type":
				vals[j] = text(typ)
			case "name":
				vals[j] = text(name)
			case "id":
				vals[j] = num(id)
			default:
				vals[j] = zero(c.kind)
			}
		}
		p.row(vals)
	}
}
