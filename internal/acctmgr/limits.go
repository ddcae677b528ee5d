package acctmgr

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/drover-hpc/drover/internal/model"
)

// limits is what a command sets on associations; nil is left alone, a
// NoLimit count or time clears the limit.
type limits struct {
	shares                                       *int
	grpJobs, grpSubmit, maxJobs, maxSubmit, prio *int
	grpWall, maxWall                             *int64
	grpTRES, maxTRES, maxTRESNode                model.TRES
	qos                                          []qosOp // nil: QOS untouched
	defQOS                                       *string // "": cleared
	parent                                       *string
}

// qosOp is one item of a QOS list: set ('='), add ('+') or remove ('-').
type qosOp struct {
	op   byte
	name string
}

// any reports whether the limits change anything.
func (l *limits) any() bool {
	return l.shares != nil || l.grpJobs != nil || l.grpSubmit != nil || l.maxJobs != nil ||
		l.maxSubmit != nil || l.prio != nil || l.grpWall != nil || l.maxWall != nil ||
		l.grpTRES != nil || l.maxTRES != nil || l.maxTRESNode != nil || l.qos != nil ||
		l.defQOS != nil || l.parent != nil
}

// inheritable reports whether the limits touch one a child association
// takes from its parent when it sets none itself.
func (l *limits) inheritable() bool {
	return l.maxJobs != nil || l.maxSubmit != nil || l.prio != nil || l.maxWall != nil ||
		l.maxTRES != nil || l.maxTRESNode != nil || l.qos != nil || l.defQOS != nil
}

// setAssocLimit reads kv as an association limit, trying sacctmgr's
// spellings in its order; false when kv is not one.
func setAssocLimit(db *model.AcctDB, l *limits, kv KeyValue) (bool, error) {
	k, tok := kv.Key, kv.String()
	if kv.Op == "" {
		return false, nil
	}
	count := func(dst **int, what string) (bool, error) {
		n, err := parseCount(kv.Value, what)
		if err != nil {
			return false, &Error{err.Error() + unknownOption(tok)}
		}
		*dst = &n
		return true, nil
	}
	tres := func(dst *model.TRES) (bool, error) {
		t, err := parseTRES(kv.Key, kv.Value)
		if err != nil {
			return false, err
		}
		if *dst == nil {
			*dst = model.TRES{}
		}
		for name, n := range t {
			(*dst)[name] = n
		}
		return true, nil
	}
	one := func(dst *model.TRES, name, what string) (bool, error) {
		n, err := parseCount(kv.Value, what)
		if err != nil {
			return false, &Error{err.Error() + unknownOption(tok)}
		}
		if *dst == nil {
			*dst = model.TRES{}
		}
		(*dst)[name] = int64(n)
		return true, nil
	}
	wall := func(dst **int64, what string) (bool, error) {
		secs, ok := parseDuration(kv.Value)
		if !ok {
			return false, &Error{" Bad " + what + " time format: " + tok + "\n" + unknownOption(tok)}
		}
		*dst = &secs
		return true, nil
	}
	unsupported := func() (bool, error) {
		return false, &Error{unsupportedOption(kv.Key)}
	}
	switch {
	case abbrev(k, "DefaultQOS", 8):
		v := stripQuotes(kv.Value, true)
		if n := leadingInts(strings.TrimPrefix(v, "-"), 0, 1); strings.HasPrefix(v, "-") && len(n) == 1 && n[0] == 1 {
			v = ""
		} else if db.QOS[v] == nil {
			return true, errorf("You gave a bad default qos '%s'.  Use 'list qos' to get complete list.\n", kv.Value)
		}
		l.defQOS = &v
		return true, nil
	case abbrev(k, "FairShare", 1) || abbrev(k, "Shares", 1):
		if len(kv.Value) >= 6 && strings.EqualFold(kv.Value[:6], "parent") {
			n := model.SharesParent
			l.shares = &n
			return true, nil
		}
		return count(&l.shares, "FairShare")
	case abbrev(k, "GrpCPUMins", 7), abbrev(k, "GrpCPURunMins", 7):
		return unsupported()
	case abbrev(k, "GrpCpus", 7):
		return one(&l.grpTRES, "cpu", "GrpCpus")
	case abbrev(k, "GrpJobs", 4):
		return count(&l.grpJobs, "GrpJobs")
	case abbrev(k, "GrpJobsAccrue", 8):
		return unsupported()
	case abbrev(k, "GrpMemory", 4):
		return one(&l.grpTRES, "mem", "GrpMemory")
	case abbrev(k, "GrpNodes", 4):
		return one(&l.grpTRES, "node", "GrpNodes")
	case abbrev(k, "GrpSubmitJobs", 4):
		return count(&l.grpSubmit, "GrpSubmitJobs")
	case abbrev(k, "GrpTRES", 7):
		return tres(&l.grpTRES)
	case abbrev(k, "GrpTRESMins", 8), abbrev(k, "GrpTRESRunMins", 8):
		return unsupported()
	case abbrev(k, "GrpWall", 4):
		return wall(&l.grpWall, "GrpWall")
	case abbrev(k, "MaxCPUMinsPerJob", 7), abbrev(k, "MaxCPURunMins", 7):
		return unsupported()
	case abbrev(k, "MaxCpusPerJob", 7):
		return one(&l.maxTRES, "cpu", "MaxCpusPerJob")
	case abbrev(k, "MaxJobs", 4):
		return count(&l.maxJobs, "MaxJobs")
	case abbrev(k, "MaxJobsAccrue", 8):
		return unsupported()
	case abbrev(k, "MaxNodesPerJob", 4):
		return one(&l.maxTRES, "node", "MaxNodes")
	case abbrev(k, "MinPrioThresh", 4):
		return unsupported()
	case abbrev(k, "MaxSubmitJobs", 4):
		return count(&l.maxSubmit, "MaxSubmitJobs")
	case abbrev(k, "MaxTRESPerJob", 7):
		return tres(&l.maxTRES)
	case abbrev(k, "MaxTRESPerNode", 11):
		return tres(&l.maxTRESNode)
	case abbrev(k, "MaxTRESMinsPerJob", 8), abbrev(k, "MaxTRESRunMins", 8):
		return unsupported()
	case abbrev(k, "MaxWallDurationPerJob", 4):
		return wall(&l.maxWall, "MaxWall")
	case abbrev(k, "Parent", 2):
		p := stripQuotes(kv.Value, true)
		l.parent = &p
		return true, nil
	case abbrev(k, "Priority", 2):
		return count(&l.prio, "Priority")
	case abbrev(k, "QosLevel", 1):
		ops, err := parseQOSList(db, kv)
		if err != nil {
			return false, err
		}
		l.qos = ops
		return true, nil
	}
	return false, nil
}

// parseQOSList reads a QOS list value: names, each one optionally
// prefixed with + or -, or the whole list added or removed with += or
// -=; "" alone clears the list (the association inherits again).
func parseQOSList(db *model.AcctDB, kv KeyValue) ([]qosOp, error) {
	def := byte('=')
	if kv.Op != "=" {
		def = kv.Op[0]
	}
	if kv.Value == "" {
		return []qosOp{{'=', ""}}, nil
	}
	var ops []qosOp
	set, delta := false, false
	for _, n := range nameList(kv.Value, true) {
		op := def
		if n[0] == '+' || n[0] == '-' {
			op, n = n[0], n[1:]
		}
		if db.QOS[n] == nil {
			return nil, &Error{slurmError("You gave a bad qos '%s'. Valid QOS's are %s", n, strings.Join(qosNames(db), ",")) +
				unknownOption(kv.String())}
		}
		if op == '=' {
			set = true
		} else {
			delta = true
		}
		if set && delta {
			return nil, &Error{slurmError("You can't set qos equal to something and then add or subtract from it in the same line") +
				unknownOption(kv.String())}
		}
		ops = append(ops, qosOp{op, n})
	}
	if len(ops) == 0 {
		return nil, &Error{slurmError("You gave me an empty qos list") + unknownOption(kv.String())}
	}
	return ops, nil
}

// qosNames lists the QOS by id, as Slurm reads them.
func qosNames(db *model.AcctDB) []string {
	qs := make([]*model.QOS, 0, len(db.QOS))
	for _, q := range db.QOS {
		qs = append(qs, q)
	}
	sort.Slice(qs, func(i, j int) bool { return qs[i].ID < qs[j].ID || qs[i].ID == qs[j].ID && qs[i].Name < qs[j].Name })
	out := make([]string, len(qs))
	for i, q := range qs {
		out[i] = q.Name
	}
	return out
}

// applyQOS edits a QOS list: a set replaces it (empty: cleared), adds
// and removes start from base, the list the owner follows now.
func applyQOS(base []string, ops []qosOp) []string {
	if len(ops) > 0 && ops[0].op == '=' {
		var out []string
		for _, o := range ops {
			if o.name != "" && !slices.Contains(out, o.name) {
				out = append(out, o.name)
			}
		}
		return out
	}
	out := slices.Clone(base)
	for _, o := range ops {
		i := slices.Index(out, o.name)
		switch {
		case o.op == '+' && i < 0:
			out = append(out, o.name)
		case o.op == '-' && i >= 0:
			out = slices.Delete(out, i, i+1)
		}
	}
	return out
}

// apply sets the limits on a; inherited is the QOS list a follows when
// it names none itself (the base of += and -=).
func (l *limits) apply(a *model.Assoc, inherited []string) {
	if l.shares != nil {
		a.Shares = *l.shares
		if a.Shares < 0 {
			a.Shares = 1
		}
	}
	setInt := func(dst *int, v *int) {
		if v != nil {
			*dst = *v
		}
	}
	setInt(&a.GrpJobs, l.grpJobs)
	setInt(&a.GrpSubmitJobs, l.grpSubmit)
	setInt(&a.MaxJobs, l.maxJobs)
	setInt(&a.MaxSubmitJobs, l.maxSubmit)
	setInt(&a.Priority, l.prio)
	if l.grpWall != nil {
		a.GrpWall = *l.grpWall
	}
	if l.maxWall != nil {
		a.MaxWall = *l.maxWall
	}
	mergeTRES := func(dst *model.TRES, t model.TRES) {
		if t != nil {
			if *dst = (*dst).Merge(t); len(*dst) == 0 {
				*dst = nil
			}
		}
	}
	mergeTRES(&a.GrpTRES, l.grpTRES)
	mergeTRES(&a.MaxTRES, l.maxTRES)
	mergeTRES(&a.MaxTRESPerNode, l.maxTRESNode)
	if l.qos != nil {
		base := a.QOS
		if len(base) == 0 {
			base = inherited
		}
		a.QOS = applyQOS(base, l.qos)
		if len(a.QOS) == 0 {
			a.QOS = nil
		}
	}
	if l.defQOS != nil {
		a.DefaultQOS = *l.defQOS
	}
}

// qosOpsString prints a QOS list as given: names sorted, adds and
// removes marked.
func qosOpsString(ops []qosOp) string {
	var names []string
	for _, o := range ops {
		switch o.op {
		case '=':
			names = append(names, o.name)
		default:
			names = append(names, string(o.op)+o.name)
		}
	}
	sort.Strings(names)
	return strings.Join(names, ",")
}

// describe prints the limits as sacctmgr lists the settings of a change.
func (l *limits) describe(b *strings.Builder) {
	num := func(label string, v *int) {
		switch {
		case v == nil:
		case *v == model.NoLimit:
			fmt.Fprintf(b, "  %s= NONE\n", label)
		default:
			fmt.Fprintf(b, "  %s= %d\n", label, *v)
		}
	}
	dur := func(label string, v *int64) {
		switch {
		case v == nil:
		case *v == model.NoLimit:
			fmt.Fprintf(b, "  %s= NONE\n", label)
		default:
			fmt.Fprintf(b, "  %s= %s\n", label, durationString(*v))
		}
	}
	tres := func(label string, t model.TRES) {
		if t != nil {
			fmt.Fprintf(b, "  %s= %s\n", label, tresString(t))
		}
	}
	if l.shares != nil {
		switch *l.shares {
		case model.SharesParent:
			b.WriteString("  Fairshare     = parent\n")
		case model.NoLimit:
			b.WriteString("  Fairshare     = NONE\n")
		default:
			fmt.Fprintf(b, "  Fairshare     = %d\n", *l.shares)
		}
	}
	num("GrpJobs       ", l.grpJobs)
	num("GrpSubmitJobs ", l.grpSubmit)
	tres("GrpTRES       ", l.grpTRES)
	dur("GrpWall       ", l.grpWall)
	num("MaxJobs       ", l.maxJobs)
	num("MaxSubmitJobs ", l.maxSubmit)
	tres("MaxTRES       ", l.maxTRES)
	tres("MaxTRESPerNode", l.maxTRESNode)
	dur("MaxWall       ", l.maxWall)
	if l.parent != nil {
		fmt.Fprintf(b, "  Parent        = %s\n", *l.parent)
	}
	num("Priority      ", l.prio)
	if l.qos != nil {
		fmt.Fprintf(b, "  QOS           = %s\n", qosOpsString(l.qos))
	}
	if l.defQOS != nil {
		fmt.Fprintf(b, "  DefQOS        = %s\n", *l.defQOS)
	}
}
