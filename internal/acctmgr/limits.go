package acctmgr

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

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

// setAssocLimit reads kv as an association limit; false when kv is not
// one.
func setAssocLimit(db *model.AcctDB, l *limits, kv KeyValue) (bool, error) {
	if kv.Op == "" {
		return false, nil
	}
	return lookupSetting(assocSettings(), db, l, kv)
}

// assocSettings are the keys an association takes, in sacctmgr's order.
// Built on first use: its closures were allocated at every command's start.
var assocSettings = sync.OnceValue(func() []setting[limits] {
	return []setting[limits]{
		{[]word{{"DefaultQOS", 8}}, func(db *model.AcctDB, l *limits, kv KeyValue) error {
			v := stripQuotes(kv.Value, true)
			if n := leadingInts(strings.TrimPrefix(v, "-"), 0, 1); strings.HasPrefix(v, "-") && len(n) == 1 && n[0] == 1 {
				v = ""
			} else if db.QOS[v] == nil {
				return errorf("You gave a bad default qos '%s'.  Use 'list qos' to get complete list.\n", kv.Value)
			}
			l.defQOS = &v
			return nil
		}},
		{[]word{{"FairShare", 1}, {"Shares", 1}}, func(db *model.AcctDB, l *limits, kv KeyValue) error {
			if len(kv.Value) >= 6 && strings.EqualFold(kv.Value[:6], "parent") {
				n := model.SharesParent
				l.shares = &n
				return nil
			}
			return setCount("FairShare", func(l *limits) **int { return &l.shares })(db, l, kv)
		}},
		{[]word{{"GrpCPUMins", 7}, {"GrpCPURunMins", 7}}, nil},
		{[]word{{"GrpCpus", 7}}, setOneTRES("cpu", "GrpCpus", assocGrpTRES)},
		{[]word{{"GrpJobs", 4}}, setCount("GrpJobs", func(l *limits) **int { return &l.grpJobs })},
		{[]word{{"GrpJobsAccrue", 8}}, nil},
		{[]word{{"GrpMemory", 4}}, setOneTRES("mem", "GrpMemory", assocGrpTRES)},
		{[]word{{"GrpNodes", 4}}, setOneTRES("node", "GrpNodes", assocGrpTRES)},
		{[]word{{"GrpSubmitJobs", 4}}, setCount("GrpSubmitJobs", func(l *limits) **int { return &l.grpSubmit })},
		{[]word{{"GrpTRES", 7}}, setTRES(assocGrpTRES)},
		{[]word{{"GrpTRESMins", 8}, {"GrpTRESRunMins", 8}}, nil},
		{[]word{{"GrpWall", 4}}, setWall("GrpWall", func(l *limits) **int64 { return &l.grpWall })},
		{[]word{{"MaxCPUMinsPerJob", 7}, {"MaxCPURunMins", 7}}, nil},
		{[]word{{"MaxCpusPerJob", 7}}, setOneTRES("cpu", "MaxCpusPerJob", assocMaxTRES)},
		{[]word{{"MaxJobs", 4}}, setCount("MaxJobs", func(l *limits) **int { return &l.maxJobs })},
		{[]word{{"MaxJobsAccrue", 8}}, nil},
		{[]word{{"MaxNodesPerJob", 4}}, setOneTRES("node", "MaxNodes", assocMaxTRES)},
		{[]word{{"MinPrioThresh", 4}}, nil},
		{[]word{{"MaxSubmitJobs", 4}}, setCount("MaxSubmitJobs", func(l *limits) **int { return &l.maxSubmit })},
		{[]word{{"MaxTRESPerJob", 7}}, setTRES(assocMaxTRES)},
		{[]word{{"MaxTRESPerNode", 11}}, setTRES(func(l *limits) *model.TRES { return &l.maxTRESNode })},
		{[]word{{"MaxTRESMinsPerJob", 8}, {"MaxTRESRunMins", 8}}, nil},
		{[]word{{"MaxWallDurationPerJob", 4}}, setWall("MaxWall", func(l *limits) **int64 { return &l.maxWall })},
		{[]word{{"Parent", 2}}, func(_ *model.AcctDB, l *limits, kv KeyValue) error {
			p := stripQuotes(kv.Value, true)
			l.parent = &p
			return nil
		}},
		{[]word{{"Priority", 2}}, setCount("Priority", func(l *limits) **int { return &l.prio })},
		{[]word{{"QosLevel", 1}}, func(db *model.AcctDB, l *limits, kv KeyValue) error {
			ops, err := parseQOSList(db, kv)
			if err != nil {
				return err
			}
			l.qos = ops
			return nil
		}},
	}
})

func assocGrpTRES(l *limits) *model.TRES { return &l.grpTRES }
func assocMaxTRES(l *limits) *model.TRES { return &l.maxTRES }

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
