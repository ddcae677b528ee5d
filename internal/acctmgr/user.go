package acctmgr

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/drover-hpc/drover/internal/model"
)

// adminLevel reads an admin level by its first letter, as Slurm does.
func adminLevel(v string) (string, error) {
	s := stripQuotes(v, true)
	switch {
	case s == "":
	case s[0] == 'n':
		return model.AdminNone, nil
	case s[0] == 'o':
		return model.AdminOperator, nil
	case s[0] == 's' || s[0] == 'a':
		return model.AdminAdmin, nil
	}
	return "", errorf("%s", slurmError("Invalid AdminLevel '%s': want None, Operator or Administrator", v))
}

// userCond picks users, and their associations when assoc is set.
type userCond struct {
	entityCond
	byUser, byAssoc bool
}

// parseUserCond reads the conditions of a modify or delete user.
func parseUserCond(db *model.AcctDB, opts []KeyValue) (*userCond, error) {
	c := &userCond{}
	for _, kv := range opts {
		k := kv.Key
		switch {
		case skipKeyword(kv), kv.Op == "" && abbrev(k, "WithAssoc", 5), listKeyword(kv):
		default:
			ok, given, err := c.readUser(kv)
			switch {
			case err != nil:
				return nil, err
			case ok:
				c.byUser = c.byUser || given
				continue
			case abbrev(k, "DefaultWCKey", 8), abbrev(k, "WCKeys", 1):
				return nil, &Error{unsupportedOption(k)}
			case abbrev(k, "Format", 1):
				continue
			}
			ok, err = setAssocCond(db, &c.assoc, kv)
			if err != nil {
				return nil, err
			}
			if !ok {
				return nil, &Error{unknownCondition(kv.String())}
			}
			c.byAssoc = true
		}
	}
	c.assoc.users = append(c.assoc.users, c.names...)
	return c, nil
}

// users lists the users the user conditions pick, by name.
func (c *userCond) users(db *model.AcctDB) []string {
	var out []string
	for name, u := range db.Users {
		if c.matchUser(name, u) {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

func (t *txn) addUser(opts []KeyValue) error {
	var names, accounts, clusters, partitions []string
	var defAcct, admin string
	l := &limits{}
	var cond assocCond
	limitSet := false
	for _, kv := range opts {
		k := kv.Key
		switch {
		case skipKeyword(kv):
		case kv.Op == "" || abbrev(k, "Names", 1) || abbrev(k, "Users", 1):
			v := kv.Value
			if kv.Op == "" {
				v = kv.Key
			}
			names = append(names, nameList(v, true)...)
		case abbrev(k, "AdminLevel", 2):
			lvl, err := adminLevel(kv.Value)
			if err != nil {
				return err
			}
			admin = lvl
		case abbrev(k, "DefaultAccount", 8):
			if defAcct != "" {
				return errorf(" Already listed DefaultAccount %s\n", defAcct)
			}
			defAcct = stripQuotes(kv.Value, true)
			accounts = append(accounts, nameList(defAcct, true)...)
		case abbrev(k, "DefaultWCKey", 8), abbrev(k, "WCKeys", 1):
			return &Error{unsupportedOption(k)}
		default:
			ok, err := setAssocLimit(t.db, l, kv)
			if err != nil {
				return err
			}
			if !ok {
				if ok, err = setAssocCond(t.db, &cond, kv); err != nil {
					return err
				}
				if !ok {
					return errorf(" Unknown option: %s\n", kv.String())
				}
			}
			// Slurm lists the settings when the last option read here
			// was one, whichever kind.
			limitSet = ok
		}
	}
	accounts = append(accounts, cond.accounts...)
	clusters = append(clusters, cond.clusters...)
	partitions = append(partitions, cond.partitions...)
	if len(names) == 0 {
		return errorf(" Need name of user to add.\n")
	}
	clusters, err := t.clusterList(clusters, "users")
	if err != nil {
		return errorf("  Can't add/modify users, no cluster defined yet.\n Please contact your administrator.\n")
	}
	if len(accounts) == 0 {
		return errorf(" Need name of account to add user to.\n")
	}
	accounts = uniq(accounts)
	for _, a := range accounts {
		if t.db.Accounts[a] == nil {
			return errorf(" This account '%s' doesn't exist.\n        Contact your admin to add this account.\n", a)
		}
	}
	tr := buildTree(t.live())
	memo := map[*model.Assoc]*model.Assoc{}
	// Slurm adds the user where the account exists and warns about the
	// other clusters; only an account on none of them is an error.
	missing := map[key]bool{}
	for _, a := range accounts {
		found := false
		for _, c := range clusters {
			if tr.acct[key{c, a}] == nil {
				missing[key{c, a}] = true
				fmt.Fprintf(&t.warn, " This account '%s' doesn't exist on cluster %s\n        Contact your admin to add this account.\n", a, c)
			} else {
				found = true
			}
		}
		if !found {
			return errorf(" This account '%s' doesn't exist on cluster %s\n        Contact your admin to add this account.\n", a, clusters[0])
		}
	}
	exists := map[[4]string]bool{}
	for _, a := range tr.all {
		exists[[4]string{a.Cluster, a.Account, a.User, a.Partition}] = true
	}
	if len(partitions) == 0 {
		partitions = []string{""}
	}
	var userStr, assocStr strings.Builder
	for _, name := range names {
		u := t.db.Users[name]
		if u == nil {
			lvl := admin
			if lvl == "" {
				lvl = model.AdminNone
			}
			u = &model.AcctUser{Name: name, DefaultAccount: defAcct, AdminLevel: lvl}
			t.db.Users[name] = u
			t.fresh[u] = true
			t.changed = true
			fmt.Fprintf(&userStr, "  %s\n", name)
		}
		first := ""
		for _, acct := range accounts {
			for _, c := range clusters {
				if missing[key{c, acct}] {
					continue
				}
				for _, p := range partitions {
					if exists[[4]string{c, acct, name, p}] {
						continue
					}
					exists[[4]string{c, acct, name, p}] = true
					a := model.NewAssoc(c, acct, name, p)
					l.apply(a, tr.effective(tr.acct[key{c, acct}], memo).QOS)
					t.addAssoc(a)
					if first == "" {
						first = acct
					}
					if acct == defAcct && u.DefaultAccount != defAcct {
						t.editUser(name).DefaultAccount = defAcct
					}
					fmt.Fprintf(&assocStr, "  U = %-9.9s A = %-10.10s C = %-10.10s", name, acct, c)
					if p != "" {
						fmt.Fprintf(&assocStr, " P = %-10.10s", p)
					}
					assocStr.WriteByte('\n')
				}
			}
		}
		if first != "" && t.db.Users[name].DefaultAccount == "" {
			t.editUser(name).DefaultAccount = first
		}
	}
	if userStr.Len() == 0 && assocStr.Len() == 0 {
		t.out.WriteString(msgNothingAdded)
		t.changed = false
		return nil
	}
	if userStr.Len() > 0 {
		fmt.Fprintf(&t.out, " Adding User(s)\n%s", userStr.String())
		if defAcct != "" || admin != "" {
			t.out.WriteString(" Settings =\n")
		}
		if defAcct != "" {
			fmt.Fprintf(&t.out, "  Default Account = %s\n", defAcct)
		}
		if admin != "" {
			fmt.Fprintf(&t.out, "  Admin Level     = %s\n", admin)
		}
	}
	if assocStr.Len() > 0 {
		fmt.Fprintf(&t.out, " Associations =\n%s", assocStr.String())
	}
	if limitSet {
		t.out.WriteString(" Non Default Settings\n")
		l.describe(&t.out)
	}
	return nil
}

func (t *txn) modifyUser(condOpts, set []KeyValue) error {
	c, err := parseUserCond(t.db, condOpts)
	if err != nil {
		return err
	}
	var admin, defAcct, newName *string
	l := &limits{}
	for _, kv := range set {
		k := kv.Key
		switch {
		case skipKeyword(kv):
		case kv.Op == "":
			return errorf(" Bad format on %s: End your option with an '=' sign\n", kv.Key)
		case abbrev(k, "AdminLevel", 2):
			lvl, err := adminLevel(kv.Value)
			if err != nil {
				return err
			}
			admin = &lvl
		case abbrev(k, "DefaultAccount", 8):
			s := stripQuotes(kv.Value, true)
			defAcct = &s
		case abbrev(k, "DefaultWCKey", 8), abbrev(k, "RawUsage", 7):
			return &Error{unsupportedOption(k)}
		case abbrev(k, "NewName", 1):
			s := stripQuotes(kv.Value, true)
			newName = &s
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
	if l.parent != nil {
		return &Error{unknownOption("Parent=" + *l.parent)}
	}
	userSet := admin != nil || defAcct != nil || newName != nil
	if !userSet && !l.any() {
		return errorf(" You didn't give me anything to set\n")
	}
	if userSet {
		if c.byAssoc && !c.byUser {
			return errorf(" There was a problem with your 'where' options.\n")
		}
		if err := t.modifyUserRecords(c, admin, defAcct, newName); err != nil {
			return err
		}
	}
	if !l.any() {
		return nil
	}
	if !c.byAssoc && len(c.names) == 0 {
		return errorf(" There was a problem with your 'where' options.\n")
	}
	tr := buildTree(t.live())
	memo := map[*model.Assoc]*model.Assoc{}
	var hit []*model.Assoc
	for _, a := range tr.ordered() {
		if a.User != "" && c.assoc.match(a, tr.effective(a, memo)) {
			hit = append(hit, a)
		}
	}
	return t.modifyAssocs(tr, hit, l, "user")
}

// modifyUserRecords sets what belongs to the users themselves.
func (t *txn) modifyUserRecords(c *userCond, admin, defAcct, newName *string) error {
	names := c.users(t.db)
	if len(names) == 0 {
		t.out.WriteString(msgNothingModified)
		return nil
	}
	if newName != nil && len(names) > 1 {
		return errorf(" Error with request: Can only change one at a time\n" +
			" If you are changing a users name you can only specify 1 user at a time.\n")
	}
	if defAcct != nil && *defAcct != "" {
		clusters := c.assoc.clusters
		if len(clusters) == 0 {
			clusters = t.db.Clusters
		}
		var bad strings.Builder
		for _, n := range names {
			for _, cl := range clusters {
				if !slices.ContainsFunc(t.live(), func(a *model.Assoc) bool {
					return a.User == n && a.Account == *defAcct && a.Cluster == cl
				}) {
					fmt.Fprintf(&bad, "  U = %s C = %s\n", n, cl)
				}
			}
		}
		if bad.Len() > 0 {
			return errorf(" Can't modify because these users aren't associated with new default account '%s'...\n%s", *defAcct, bad.String())
		}
	}
	t.out.WriteString(" Modified users...\n")
	for _, n := range names {
		u := t.editUser(n)
		if admin != nil {
			u.AdminLevel = *admin
		}
		if defAcct != nil {
			u.DefaultAccount = *defAcct
		}
		fmt.Fprintf(&t.out, "  %s\n", n)
	}
	if newName != nil && *newName != names[0] {
		if t.db.Users[*newName] != nil {
			return errorf(" Error with request: User %s already exists\n", *newName)
		}
		u := t.db.Users[names[0]]
		delete(t.db.Users, names[0])
		u.Name = *newName
		t.db.Users[*newName] = u
		for _, a := range t.live() {
			if a.User == names[0] {
				t.editAssoc(a).User = *newName
			}
		}
	}
	return nil
}

func (t *txn) deleteUser(opts []KeyValue) error {
	c, err := parseUserCond(t.db, opts)
	if err != nil {
		return err
	}
	if len(c.assoc.clusters) > 0 {
		c.byAssoc = true
	}
	if !c.byUser && !c.byAssoc {
		return errorf(" No conditions given to remove, not executing.\n")
	}
	live := t.live()
	if !c.byAssoc {
		names := c.users(t.db)
		if len(names) == 0 {
			t.out.WriteString(msgNothingDeleted)
			return nil
		}
		t.out.WriteString(" Deleting users...\n")
		for _, n := range names {
			delete(t.db.Users, n)
			fmt.Fprintf(&t.out, "  %s\n", n)
		}
		for _, a := range live {
			if slices.Contains(names, a.User) {
				t.dropAssoc(a)
			}
		}
		t.changed = true
		return nil
	}
	tr := buildTree(live)
	memo := map[*model.Assoc]*model.Assoc{}
	var gone []*model.Assoc
	for _, a := range tr.ordered() {
		if a.User != "" && c.assoc.match(a, tr.effective(a, memo)) {
			gone = append(gone, a)
		}
	}
	if len(gone) == 0 {
		t.out.WriteString(msgNothingDeleted)
		return nil
	}
	if err := t.checkDefaultAccounts(gone, 15); err != nil {
		e := err.(*Error)
		return errorf(" Error with request: You can not remove the default account of a user\n%s"+
			" You must change the default account of these users or remove the users completely"+
			" from the affected clusters to allow these changes.\n Changes Discarded\n", e.Text)
	}
	t.out.WriteString(" Deleting user associations...\n")
	users := map[string]bool{}
	for _, a := range gone {
		t.dropAssoc(a)
		users[a.User] = true
		fmt.Fprintf(&t.out, "  %s\n", assocLabel(a, 10))
	}
	left := map[string]bool{}
	for _, a := range t.live() {
		left[a.User] = true
	}
	var orphans []string
	for u := range users {
		if !left[u] && t.db.Users[u] != nil {
			orphans = append(orphans, u)
		}
	}
	sort.Strings(orphans)
	if len(orphans) > 0 {
		t.out.WriteString(" Deleting users (No Associations)...\n")
		for _, u := range orphans {
			delete(t.db.Users, u)
			fmt.Fprintf(&t.out, "  %s\n", u)
		}
	}
	t.fixDefaults()
	return nil
}

// uniq drops repeated names, keeping the first of each.
func uniq(l []string) []string {
	var out []string
	for _, s := range l {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}
