package acctmgr

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/drover-hpc/drover/internal/model"
)

// acctCond picks accounts, and their associations when assoc is set.
type acctCond struct {
	entityCond
	byAcct, byAssoc bool // which kinds of condition were given
}

// parseAcctCond reads the conditions of a modify or delete account.
func parseAcctCond(db *model.AcctDB, opts []KeyValue) (*acctCond, error) {
	c := &acctCond{}
	for _, kv := range opts {
		k := kv.Key
		switch {
		case skipKeyword(kv), kv.Op == "" && abbrev(k, "WithAssoc", 5), listKeyword(kv):
		case kv.Op != "" && abbrev(k, "Format", 1):
		default:
			if ok, given := c.readAccount(kv); ok {
				c.byAcct = c.byAcct || given
				continue
			}
			ok, err := setAssocCond(db, &c.assoc, kv)
			if err != nil {
				return nil, err
			}
			if !ok {
				return nil, &Error{unknownCondition(kv.String())}
			}
			c.byAssoc = true
		}
	}
	c.assoc.accounts = append(c.assoc.accounts, c.names...)
	return c, nil
}

// accounts lists the accounts the account conditions pick, by name.
func (c *acctCond) accounts(db *model.AcctDB) []string {
	var out []string
	for name, a := range db.Accounts {
		if c.matchAccount(name, a) {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

func (t *txn) addAccount(opts []KeyValue) error {
	var names, clusters []string
	var descr, org *string
	l := &limits{}
	limitSet := false
	for _, kv := range opts {
		k := kv.Key
		switch {
		case skipKeyword(kv):
		case kv.Op == "" || abbrev(k, "Accounts", 1) || abbrev(k, "Names", 1) || abbrev(k, "Acct", 4):
			v := kv.Value
			if kv.Op == "" {
				v = kv.Key
			}
			names = append(names, nameList(v, true)...)
		case abbrev(k, "Clusters", 1):
			clusters = append(clusters, nameList(kv.Value, true)...)
		case abbrev(k, "Description", 1):
			s := stripQuotes(kv.Value, true)
			descr, limitSet = &s, true
		case abbrev(k, "Organization", 1):
			s := stripQuotes(kv.Value, true)
			org, limitSet = &s, true
		case abbrev(k, "RawUsage", 7):
			return &Error{unsupportedOption(k)}
		default:
			ok, err := setAssocLimit(t.db, l, kv)
			if err != nil {
				return err
			}
			if !ok {
				return &Error{unknownOption(kv.String())}
			}
			limitSet = true
		}
	}
	if len(names) == 0 {
		return errorf(" Need name of account to add.\n")
	}
	parent := "root"
	if l.parent != nil {
		parent = *l.parent
	}
	clusters, err := t.clusterList(clusters, "accounts")
	if err != nil {
		return err
	}
	var acctStr, assocStr strings.Builder
	for _, name := range names {
		if t.db.Accounts[name] == nil {
			a := &model.Account{Name: name, Description: name, Organization: name}
			if descr != nil {
				a.Description = *descr
			}
			switch {
			case org != nil:
				a.Organization = *org
			case parent != "root":
				a.Organization = parent
			}
			t.db.Accounts[name] = a
			t.fresh[a] = true
			t.changed = true
			fmt.Fprintf(&acctStr, "  %s\n", name)
		}
		tr := buildTree(t.live())
		for _, c := range clusters {
			if tr.acct[key{c, name}] != nil {
				continue
			}
			p := tr.acct[key{c, parent}]
			if p == nil {
				return errorf(" Parent account '%s' doesn't exist on cluster %s\n        Contact your admin to add this account.\n", parent, c)
			}
			a := model.NewAssoc(c, name, "", "")
			a.Parent = parent
			l.apply(a, tr.effective(p, map[*model.Assoc]*model.Assoc{}).QOS)
			t.addAssoc(a)
			fmt.Fprintf(&assocStr, "  A = %-10.10s C = %-10.10s\n", name, c)
		}
	}
	if acctStr.Len() == 0 && assocStr.Len() == 0 {
		t.out.WriteString(msgNothingAdded)
		t.changed = false
		return nil
	}
	if acctStr.Len() > 0 {
		fmt.Fprintf(&t.out, " Adding Account(s)\n%s Settings\n", acctStr.String())
		fmt.Fprintf(&t.out, "  Description     = %s\n", deref(descr, "Account Name"))
		fmt.Fprintf(&t.out, "  Organization    = %s\n", deref(org, "Parent/Account Name"))
	}
	fmt.Fprintf(&t.out, " Associations\n%s", assocStr.String())
	if limitSet {
		l.parent = &parent
		t.out.WriteString(" Settings\n")
		l.describe(&t.out)
	}
	return nil
}

func deref(s *string, def string) string {
	if s == nil {
		return def
	}
	return *s
}

func (t *txn) modifyAccount(condOpts, set []KeyValue) error {
	c, err := parseAcctCond(t.db, condOpts)
	if err != nil {
		return err
	}
	var descr, org *string
	l := &limits{}
	for _, kv := range set {
		k := kv.Key
		switch {
		case skipKeyword(kv):
		case kv.Op == "" || abbrev(k, "Accounts", 1) || abbrev(k, "Names", 1) || abbrev(k, "Acct", 4):
			return errorf(" Can't modify the name of an account\n")
		case abbrev(k, "Clusters", 1):
			return errorf(" Can't modify the cluster of an account\n")
		case abbrev(k, "Description", 1):
			s := stripQuotes(kv.Value, true)
			descr = &s
		case abbrev(k, "Organization", 1):
			s := stripQuotes(kv.Value, true)
			org = &s
		case abbrev(k, "RawUsage", 7):
			return &Error{unsupportedOption(k)}
		default:
			ok, err := setAssocLimit(t.db, l, kv)
			if err != nil {
				return err
			}
			if !ok {
				return &Error{unknownOption(kv.String())}
			}
		}
	}
	if descr == nil && org == nil && !l.any() {
		return errorf(" You didn't give me anything to set\n")
	}
	if descr != nil || org != nil {
		if c.byAssoc && !c.byAcct {
			return errorf(" There was a problem with your 'where' options.\n")
		}
		names := c.accounts(t.db)
		if len(names) == 0 {
			t.out.WriteString(msgNothingModified)
		} else {
			t.out.WriteString(" Modified accounts...\n")
		}
		for _, n := range names {
			a := t.editAccount(n)
			if descr != nil {
				a.Description = *descr
			}
			if org != nil {
				a.Organization = *org
			}
			fmt.Fprintf(&t.out, "  %s\n", n)
		}
	}
	if !l.any() {
		return nil
	}
	if !c.byAssoc && len(c.names) == 0 {
		return errorf(" There was a problem with your 'where' options.\n")
	}
	if l.parent != nil && t.db.Accounts[*l.parent] == nil {
		return errorf(" Parent Account %s doesn't exist.\n", *l.parent)
	}
	tr := buildTree(t.live())
	memo := map[*model.Assoc]*model.Assoc{}
	var hit []*model.Assoc
	for _, a := range tr.ordered() {
		if a.User == "" && c.assoc.match(a, tr.effective(a, memo)) {
			hit = append(hit, a)
		}
	}
	return t.modifyAssocs(tr, hit, l, "account")
}

// modifyAssocs sets l on the associations hit and lists them, then the
// user associations that inherit what changed; what names the kind of
// associations in the listing's title.
func (t *txn) modifyAssocs(tr *tree, hit []*model.Assoc, l *limits, what string) error {
	var labels []string
	var done []*model.Assoc
	memo := map[*model.Assoc]*model.Assoc{}
	for _, a := range hit {
		label := assocLabel(a, 20)
		if l.parent != nil && a.User == "" {
			if skip, err := t.moveCheck(tr, a, *l.parent); err != nil {
				return err
			} else if skip {
				continue
			}
		}
		var inherited []string
		if p := tr.acct[parentKey(a)]; p != nil && p != a {
			inherited = tr.effective(p, memo).QOS
		}
		e := t.editAssoc(a)
		l.apply(e, inherited)
		if l.parent != nil && e.User == "" {
			e.Parent = *l.parent
		}
		labels = append(labels, label)
		done = append(done, a)
	}
	if len(done) == 0 {
		t.out.WriteString(msgNothingModified)
		return nil
	}
	if l.inheritable() {
		for _, a := range done {
			if a.User == "" {
				for _, u := range tr.inheritors(a, l) {
					if !slices.Contains(done, u) {
						labels = append(labels, assocLabel(u, 20))
					}
				}
			}
		}
	}
	if err := t.checkDefaultQOS(done, l); err != nil {
		return err
	}
	fmt.Fprintf(&t.out, " Modified %s associations...\n", what)
	for _, s := range labels {
		fmt.Fprintf(&t.out, "  %s\n", s)
	}
	return nil
}

// moveCheck decides whether account association a can move under
// parent: moving under itself, a parent it already has, or a parent
// missing on its cluster is skipped, as Slurm does.
func (t *txn) moveCheck(tr *tree, a *model.Assoc, parent string) (bool, error) {
	p := tr.acct[key{a.Cluster, parent}]
	if parent == a.Account || parent == a.Parent || p == nil {
		return true, nil
	}
	for _, d := range tr.under(a) {
		if d == p {
			return false, errorf(" Can't move account '%s' under its own sub-account '%s'\n", a.Account, parent)
		}
	}
	return false, nil
}

// checkDefaultQOS refuses a change that leaves an association with a
// default QOS it may not use.
func (t *txn) checkDefaultQOS(changed []*model.Assoc, l *limits) error {
	if l.defQOS == nil && l.qos == nil {
		return nil
	}
	tr := buildTree(t.live())
	memo := map[*model.Assoc]*model.Assoc{}
	var bad []string
	for _, a := range changed {
		e := tr.effective(t.cur(a), memo)
		if e.DefaultQOS == "" || len(e.QOS) == 0 || slices.Contains(e.QOS, e.DefaultQOS) {
			continue
		}
		switch {
		case e.User == "":
			bad = append(bad, fmt.Sprintf("  DefQOS = %-10s C = %-10s A = %-20s ", e.DefaultQOS, e.Cluster, e.Account))
		case e.Partition != "":
			bad = append(bad, fmt.Sprintf("  DefQOS = %-10s C = %-10s A = %-20s U = %-9s P = %s", e.DefaultQOS, e.Cluster, e.Account, e.User, e.Partition))
		default:
			bad = append(bad, fmt.Sprintf("  DefQOS = %-10s C = %-10s A = %-20s U = %-9s", e.DefaultQOS, e.Cluster, e.Account, e.User))
		}
	}
	if len(bad) == 0 {
		return nil
	}
	return errorf(" These associations don't have access to their default qos.\n"+
		" Please give them access before they the default can be set to this.\n%s\n", strings.Join(bad, "\n"))
}

func (t *txn) deleteAccount(opts []KeyValue) error {
	c, err := parseAcctCond(t.db, opts)
	if err != nil {
		return err
	}
	if !c.byAcct && !c.byAssoc {
		return errorf(" No conditions given to remove, not executing.\n")
	}
	for _, n := range c.names {
		if n == "root" {
			return errorf(" You are not allowed to remove the root account.\n Use remove cluster instead.\n")
		}
	}
	tr := buildTree(t.live())
	memo := map[*model.Assoc]*model.Assoc{}
	var tops []*model.Assoc
	var names []string
	if !c.byAssoc {
		names = c.accounts(t.db)
		for _, a := range tr.ordered() {
			if a.User == "" && slices.Contains(names, a.Account) {
				tops = append(tops, a)
			}
		}
	} else {
		for _, a := range tr.ordered() {
			if a.User == "" && a.Account != "root" && c.assoc.match(a, tr.effective(a, memo)) {
				tops = append(tops, a)
			}
		}
	}
	var gone []*model.Assoc
	seen := map[*model.Assoc]bool{}
	for _, a := range tops {
		for _, x := range append([]*model.Assoc{a}, tr.under(a)...) {
			if !seen[x] {
				seen[x] = true
				gone = append(gone, x)
			}
		}
	}
	if len(names) == 0 && len(gone) == 0 {
		t.out.WriteString(msgNothingDeleted)
		return nil
	}
	if err := t.checkDefaultAccounts(gone, 15); err != nil {
		e := err.(*Error)
		return errorf(" Error with request: You can not remove the default account of a user\n%s"+
			" Please either remove the accounts listed above from list and resubmit,\n"+
			" or change these users' default accounts to remove the account(s).\n Changes Discarded\n", e.Text)
	}
	for _, a := range gone {
		t.dropAssoc(a)
	}
	if !c.byAssoc {
		t.out.WriteString(" Deleting accounts...\n")
		for _, n := range names {
			delete(t.db.Accounts, n)
			fmt.Fprintf(&t.out, "  %s\n", n)
		}
		t.changed = true
	} else {
		t.out.WriteString(" Deleting account associations...\n")
		for _, a := range gone {
			fmt.Fprintf(&t.out, "  %s\n", assocLabel(a, 10))
		}
	}
	t.fixDefaults()
	return nil
}

// checkDefaultAccounts refuses to remove the associations of a user's
// default account while the user keeps others; the *Error lists them.
func (t *txn) checkDefaultAccounts(gone []*model.Assoc, width int) error {
	removed := map[*model.Assoc]bool{}
	for _, a := range gone {
		removed[t.cur(a)] = true
	}
	keeps := map[string]bool{}
	for _, a := range t.live() {
		if a.User != "" && !removed[a] {
			keeps[a.User] = true
		}
	}
	var b strings.Builder
	for _, a := range gone {
		u := t.db.Users[a.User]
		if a.User == "" || u == nil || u.DefaultAccount != a.Account || !keeps[a.User] {
			continue
		}
		if stillIn := slices.ContainsFunc(t.live(), func(x *model.Assoc) bool {
			return !removed[x] && x.User == a.User && x.Account == a.Account
		}); stillIn {
			continue
		}
		fmt.Fprintf(&b, "  C = %-*s A = %-10s U = %-9s\n", width, a.Cluster, a.Account, a.User)
	}
	if b.Len() > 0 {
		return &Error{b.String()}
	}
	return nil
}

// fixDefaults clears the default account of users left without an
// association in it (Slurm keeps the default on the associations).
func (t *txn) fixDefaults() {
	in := map[[2]string]bool{}
	for _, a := range t.live() {
		if a.User != "" {
			in[[2]string{a.User, a.Account}] = true
		}
	}
	names := make([]string, 0, len(t.db.Users))
	for n := range t.db.Users {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if u := t.db.Users[n]; u.DefaultAccount != "" && !in[[2]string{n, u.DefaultAccount}] {
			t.editUser(n).DefaultAccount = ""
		}
	}
}
