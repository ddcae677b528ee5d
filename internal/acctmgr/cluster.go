package acctmgr

import (
	"fmt"
	"slices"
	"sort"

	"github.com/drover-hpc/drover/internal/model"
)

// setClusterOption reads kv as a setting of a cluster: its root
// association's limits (names go to names when it is not nil).
func setClusterOption(db *model.AcctDB, l *limits, names *[]string, kv KeyValue) error {
	k := kv.Key
	switch {
	case skipKeyword(kv):
	case kv.Op == "" || abbrev(k, "Names", 1) || abbrev(k, "Clusters", 3):
		if names != nil {
			v := kv.Value
			if kv.Op == "" {
				v = kv.Key
			}
			*names = append(*names, nameList(v, true)...)
		}
	case abbrev(k, "Classification", 3), abbrev(k, "Features", 2), abbrev(k, "Federation", 3),
		abbrev(k, "FedState", 2):
		return &Error{unsupportedOption(k)}
	case abbrev(k, "GrpCPURunMins", 7), abbrev(k, "GrpTRESRunMins", 8):
		return errorf("GrpTRESRunMins is not a valid option for the root association of a cluster.\n")
	case abbrev(k, "GrpCPUMins", 7), abbrev(k, "GrpTRESMins", 8):
		return errorf("GrpTRESMins is not a valid option for the root association of a cluster.\n")
	case abbrev(k, "GrpWall", 4):
		return errorf("GrpWall is not a valid option for the root association of a cluster.\n")
	default:
		ok, err := setAssocLimit(db, l, kv)
		if err != nil {
			return err
		}
		if !ok || l.parent != nil {
			return &Error{unknownOption(kv.String())}
		}
	}
	return nil
}

func (t *txn) addCluster(opts []KeyValue) error {
	var names []string
	l := &limits{}
	for _, kv := range opts {
		if err := setClusterOption(t.db, l, &names, kv); err != nil {
			return err
		}
	}
	if len(names) == 0 {
		return errorf(" Need name of cluster to add.\n")
	}
	var add []string
	for _, n := range names {
		if n == "" {
			return errorf(" No blank names are allowed when adding.\n")
		}
		if slices.Contains(t.db.Clusters, n) {
			fmt.Fprintf(&t.out, " This cluster %s already exists.  Not adding.\n", n)
		} else {
			add = append(add, n)
		}
	}
	if len(add) == 0 {
		return nil
	}
	t.out.WriteString(" Adding Cluster(s)\n")
	for _, n := range add {
		fmt.Fprintf(&t.out, "  Name           = %s\n", n)
		t.db.Clusters = append(t.db.Clusters, n)
		if t.db.Accounts["root"] == nil {
			t.db.Accounts["root"] = &model.Account{Name: "root", Description: "default root account", Organization: "root"}
		}
		if t.db.Users["root"] == nil {
			t.db.Users["root"] = &model.AcctUser{Name: "root", DefaultAccount: "root", AdminLevel: model.AdminAdmin}
		}
		root := model.NewAssoc(n, "root", "", "")
		if t.db.QOS["normal"] != nil {
			root.QOS = []string{"normal"}
		}
		l.apply(root, nil)
		t.addAssoc(root)
		t.addAssoc(model.NewAssoc(n, "root", "root", ""))
	}
	sort.Strings(t.db.Clusters)
	if l.any() {
		t.out.WriteString(" Setting\n  Default Limits:\n")
		l.describe(&t.out)
	}
	return nil
}

// clusterCond reads the conditions naming clusters.
func clusterCond(opts []KeyValue) ([]string, bool, error) {
	var names []string
	set := false
	for _, kv := range opts {
		k := kv.Key
		switch {
		case skipKeyword(kv), kv.Op == "" && matchAny(k, word{"WithDeleted", 5}, word{"WithFed", 5}, word{"WOLimits", 3}):
		case kv.Op == "" || abbrev(k, "Names", 1) || abbrev(k, "Clusters", 3):
			v := kv.Value
			if kv.Op == "" {
				v = kv.Key
			}
			l := nameList(v, true)
			names = append(names, l...)
			set = set || len(l) > 0
		case abbrev(k, "Format", 2):
		case abbrev(k, "Federations", 3), abbrev(k, "Classification", 3), abbrev(k, "flags", 2),
			abbrev(k, "PluginIDSelect", 1), abbrev(k, "RPCVersions", 1):
			return nil, false, &Error{unsupportedOption(k)}
		default:
			return nil, false, &Error{unknownCondition(kv.String())}
		}
	}
	return names, set, nil
}

func (t *txn) modifyCluster(condOpts, set []KeyValue) error {
	names, _, err := clusterCond(condOpts)
	if err != nil {
		return err
	}
	l := &limits{}
	for _, kv := range set {
		if err := setClusterOption(t.db, l, nil, kv); err != nil {
			return err
		}
	}
	if !l.any() {
		return errorf(" You didn't give me anything to set\n")
	}
	t.out.WriteString(" Setting\n  Default Limits:\n")
	l.describe(&t.out)
	tr := buildTree(t.live())
	var hit []*model.Assoc
	for _, a := range tr.ordered() {
		if a.User == "" && a.Account == "root" && a.Parent == "" && (len(names) == 0 || slices.Contains(names, a.Cluster)) {
			hit = append(hit, a)
		}
	}
	return t.modifyAssocs(tr, hit, l, "cluster defaults for")
}

func (t *txn) deleteCluster(opts []KeyValue) error {
	names, set, err := clusterCond(opts)
	if err != nil {
		return err
	}
	if !set {
		return errorf(" No conditions given to remove, not executing.\n")
	}
	var gone []string
	for _, c := range t.db.Clusters {
		if slices.Contains(names, c) {
			gone = append(gone, c)
		}
	}
	if len(gone) == 0 {
		t.out.WriteString(msgNothingDeleted)
		return nil
	}
	t.out.WriteString(" Deleting clusters...\n")
	for _, c := range gone {
		fmt.Fprintf(&t.out, "  %s\n", c)
	}
	t.db.Clusters = slices.DeleteFunc(t.db.Clusters, func(c string) bool { return slices.Contains(gone, c) })
	for _, a := range t.live() {
		if slices.Contains(gone, a.Cluster) {
			t.dropAssoc(a)
		}
	}
	t.changed = true
	t.fixDefaults()
	return nil
}
