package acctmgr

import (
	"slices"
	"strconv"
	"strings"

	"github.com/drover-hpc/drover/internal/model"
)

// assocCond picks associations: every list given must hold the
// association's value (QOS conditions look at what it inherits too).
type assocCond struct {
	accounts, clusters, partitions, parents, users, qos, defQOS []string
	ids                                                         []int
	usersGiven                                                  bool
	subAccounts                                                 bool
}

// setAssocCond reads kv as an association condition, trying sacctmgr's
// spellings in its order; false when kv is not one.
func setAssocCond(db *model.AcctDB, c *assocCond, kv KeyValue) (bool, error) {
	k := kv.Key
	if kv.Op == "" {
		return false, nil
	}
	list := func(dst *[]string) bool {
		l := nameList(kv.Value, true)
		*dst = append(*dst, l...)
		return len(l) > 0
	}
	switch {
	case abbrev(k, "Accounts", 2), abbrev(k, "Acct", 4):
		return list(&c.accounts), nil
	case abbrev(k, "Ids", 1), abbrev(k, "Associations", 2):
		return true, c.addIDs(kv.Value)
	case abbrev(k, "Clusters", 1):
		return list(&c.clusters), nil
	case abbrev(k, "DefaultQOS", 8):
		ops, err := parseQOSList(db, KeyValue{Key: kv.Key, Op: "=", Value: kv.Value})
		if err != nil {
			return false, err
		}
		for _, o := range ops {
			c.defQOS = append(c.defQOS, o.name)
		}
		return true, nil
	case abbrev(k, "Partitions", 3):
		return list(&c.partitions), nil
	case abbrev(k, "Parents", 4):
		return list(&c.parents), nil
	case abbrev(k, "QosLevel", 1):
		ops, err := parseQOSList(db, kv)
		if err != nil {
			return false, err
		}
		for _, o := range ops {
			c.qos = append(c.qos, o.name)
		}
		return true, nil
	case abbrev(k, "Users", 1):
		c.usersGiven = true
		return list(&c.users), nil
	}
	return false, nil
}

// entityCond is what conditions pick accounts, users and QOS by (assoc:
// their associations). One reader and one matcher per entity serve list,
// modify and delete alike; each caller handles around them only the words
// that belong to it (withassoc, format, ...).
type entityCond struct {
	names, descrs, orgs, defAccts []string
	admin                         string
	ids                           []int
	modes                         []string
	assoc                         assocCond
}

// condValue is a condition's value: a bare word is a name.
func condValue(kv KeyValue) string {
	if kv.Op == "" {
		return kv.Key
	}
	return kv.Value
}

// readAccount reads kv as a condition on accounts themselves: handled
// is false when it is not one, given true when it named something.
func (c *entityCond) readAccount(kv KeyValue) (handled, given bool) {
	k := kv.Key
	var dst *[]string
	switch {
	case kv.Op == "" || abbrev(k, "Names", 1) || abbrev(k, "Accounts", 1) || abbrev(k, "Acct", 4):
		dst = &c.names
	case abbrev(k, "Descriptions", 1):
		dst = &c.descrs
	case abbrev(k, "Organizations", 1):
		dst = &c.orgs
	default:
		return false, false
	}
	l := nameList(condValue(kv), true)
	*dst = append(*dst, l...)
	return true, len(l) > 0
}

// readUser reads kv as a condition on users themselves (clusters go to
// their associations).
func (c *entityCond) readUser(kv KeyValue) (handled, given bool, err error) {
	k := kv.Key
	var dst *[]string
	switch {
	case kv.Op == "" || abbrev(k, "Names", 1) || abbrev(k, "Users", 1):
		dst = &c.names
	case abbrev(k, "AdminLevel", 2):
		lvl, err := adminLevel(kv.Value)
		if err != nil {
			return false, false, err
		}
		c.admin = lvl
		return true, true, nil
	case abbrev(k, "Clusters", 1):
		dst = &c.assoc.clusters
	case abbrev(k, "DefaultAccount", 8):
		dst = &c.defAccts
	default:
		return false, false, nil
	}
	l := nameList(condValue(kv), true)
	*dst = append(*dst, l...)
	return true, len(l) > 0, nil
}

// readQOS reads kv as a condition on QOS.
func (c *entityCond) readQOS(kv KeyValue) (handled, given bool, err error) {
	k := kv.Key
	switch {
	case kv.Op == "" || abbrev(k, "Names", 1) || abbrev(k, "QOSLevel", 1):
		l := nameList(condValue(kv), true)
		c.names = append(c.names, l...)
		return true, len(l) > 0, nil
	case abbrev(k, "Clusters", 1):
		return true, false, nil
	case abbrev(k, "Descriptions", 1):
		l := nameList(kv.Value, true)
		c.descrs = append(c.descrs, l...)
		return true, len(l) > 0, nil
	case abbrev(k, "Ids", 1):
		var a assocCond
		if err := a.addIDs(kv.Value); err != nil {
			return false, false, err
		}
		c.ids = append(c.ids, a.ids...)
		return true, len(a.ids) > 0, nil
	case abbrev(k, "PreemptMode", 8):
		for _, m := range strings.Split(kv.Value, ",") {
			pm, ok := preemptMode(stripQuotes(m, true))
			if !ok {
				return false, false, errorf(" Bad Preempt Mode given: %s\n", kv.String())
			}
			c.modes = append(c.modes, pm)
		}
		return true, true, nil
	}
	return false, false, nil
}

// matchAccount reports whether the account conditions pick account a.
func (c *entityCond) matchAccount(name string, a *model.Account) bool {
	return (len(c.names) == 0 || slices.Contains(c.names, name)) &&
		(len(c.descrs) == 0 || slices.Contains(c.descrs, strings.ToLower(a.Description))) &&
		(len(c.orgs) == 0 || slices.Contains(c.orgs, strings.ToLower(a.Organization)))
}

// matchUser reports whether the user conditions pick user u.
func (c *entityCond) matchUser(name string, u *model.AcctUser) bool {
	return (len(c.names) == 0 || slices.Contains(c.names, name)) &&
		(c.admin == "" || u.AdminLevel == c.admin) &&
		(len(c.defAccts) == 0 || slices.Contains(c.defAccts, u.DefaultAccount))
}

// matchQOS reports whether the QOS conditions pick q.
func (c *entityCond) matchQOS(q *model.QOS) bool {
	return (len(c.names) == 0 || slices.Contains(c.names, q.Name)) &&
		(len(c.descrs) == 0 || slices.Contains(c.descrs, strings.ToLower(q.Description))) &&
		(len(c.ids) == 0 || slices.Contains(c.ids, q.ID)) &&
		(len(c.modes) == 0 || slices.Contains(c.modes, q.PreemptMode))
}

// addIDs reads association ids; one that is not a number is an error.
func (c *assocCond) addIDs(v string) error {
	for _, s := range nameList(v, true) {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return errorf("%s", slurmError("Invalid value for AssocId (%s)", s))
		}
		c.ids = append(c.ids, n)
	}
	return nil
}

// match reports whether the association a (eff: with what it inherits)
// meets the condition.
func (c *assocCond) match(a, eff *model.Assoc) bool {
	in := func(l []string, v string) bool { return len(l) == 0 || slices.Contains(l, v) }
	if !in(c.accounts, a.Account) || !in(c.clusters, a.Cluster) || !in(c.partitions, a.Partition) {
		return false
	}
	if len(c.users) > 0 && !slices.Contains(c.users, a.User) {
		return false
	}
	if len(c.parents) > 0 && (a.User != "" || !slices.Contains(c.parents, a.Parent)) {
		return false
	}
	if len(c.ids) > 0 && !slices.Contains(c.ids, a.ID) {
		return false
	}
	if len(c.defQOS) > 0 && !slices.Contains(c.defQOS, eff.DefaultQOS) {
		return false
	}
	if len(c.qos) > 0 && !slices.ContainsFunc(eff.QOS, func(q string) bool { return slices.Contains(c.qos, q) }) {
		return false
	}
	return true
}

// listKeyword reports the bare words the list, modify and delete
// commands accept as flags and Drover has nothing to do for (deleted
// records are not kept, coordinators not known).
func listKeyword(kv KeyValue) bool {
	return kv.Op == "" && matchAny(kv.Key, word{"WithCoordinators", 5}, word{"WithDeleted", 5},
		word{"WithRawQOSLevel", 5}, word{"WOPLimits", 4}, word{"where", 5})
}
