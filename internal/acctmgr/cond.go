package acctmgr

import (
	"slices"
	"strconv"

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
