package acctmgr

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/drover-hpc/drover/internal/model"
)

// qosFlags are the QOS flags in the order Slurm prints them.
var qosFlags = []string{"DenyOnLimit", "EnforceUsageThreshold", "NoReserve", "PartitionMaxNodes",
	"PartitionMinNodes", "OverPartQOS", "PartitionTimeLimit", "RequiresReservation", "NoDecay", "UsageFactorSafe"}

// qosFlagOrder is the order Slurm recognizes flags in: a word naming
// two takes the first.
var qosFlagOrder = []string{"DenyOnLimit", "EnforceUsageThreshold", "PartitionMinNodes", "PartitionMaxNodes",
	"PartitionTimeLimit", "RequiresReservation", "OverPartQOS", "NoReserve", "NoDecay", "UsageFactorSafe"}

// qosSet is what a command sets on QOS; nil is left alone.
type qosSet struct {
	descr                                   *string
	flagOp                                  byte // '=', '+', '-'; 0: untouched
	flags                                   []string
	grace                                   *int
	grpJobs, grpSubmit, maxJobsPU, maxSubPU *int
	prio                                    *int
	maxWall                                 *int64
	usage                                   *float64
	grpTRES, perJob, perNode, perUser       model.TRES
	preempt                                 []qosOp
	preemptMode                             *string
	preemptExempt                           *int64
}

func (q *qosSet) any() bool {
	return q.descr != nil || q.flagOp != 0 || q.grace != nil || q.grpJobs != nil || q.grpSubmit != nil ||
		q.maxJobsPU != nil || q.maxSubPU != nil || q.prio != nil || q.maxWall != nil || q.usage != nil ||
		q.grpTRES != nil || q.perJob != nil || q.perNode != nil || q.perUser != nil || q.preempt != nil ||
		q.preemptMode != nil || q.preemptExempt != nil
}

// preemptMode reads a preemption mode: one of off (cluster), cancel,
// requeue, suspend (on), optionally with gang or within.
func preemptMode(v string) (string, bool) {
	var extra, mode string
	modes := 0
	for _, tok := range strings.Split(v, ",") {
		switch strings.ToLower(tok) {
		case "gang", "within":
			if extra != "" && !strings.EqualFold(extra, tok) {
				return "", false
			}
			extra = strings.ToUpper(tok)
		case "off", "cluster":
			modes++
		case "cancel", "requeue":
			mode = strings.ToUpper(tok)
			modes++
		case "on", "suspend":
			mode = "SUSPEND"
			modes++
		default:
			return "", false
		}
	}
	switch {
	case modes > 1:
		return "", false
	case extra != "" && mode != "":
		return extra + "," + mode, true
	case extra != "":
		return extra, true
	}
	return mode, true
}

// setQOSOption reads kv as a QOS setting; false when it is not one.
func setQOSOption(db *model.AcctDB, q *qosSet, kv KeyValue) (bool, error) {
	return lookupSetting(qosSettings(), db, q, kv)
}

// qosSettings are the keys a QOS takes, in sacctmgr's order.
// Built on first use, as assocSettings.
var qosSettings = sync.OnceValue(func() []setting[qosSet] {
	return []setting[qosSet]{
		{[]word{{"Description", 1}}, func(_ *model.AcctDB, q *qosSet, kv KeyValue) error {
			if q.descr == nil {
				s := stripQuotes(kv.Value, true)
				q.descr = &s
			}
			return nil
		}},
		{[]word{{"Flags", 2}}, func(_ *model.AcctDB, q *qosSet, kv KeyValue) error { return q.setFlags(kv) }},
		{[]word{{"GraceTime", 3}}, setCount("GraceTime", func(q *qosSet) **int { return &q.grace })},
		{[]word{{"GrpCPUMins", 7}, {"GrpCPURunMins", 7}}, nil},
		{[]word{{"GrpCPUs", 7}}, setOneTRES("cpu", "GrpCPUs", qosGrpTRES)},
		{[]word{{"GrpJobs", 4}}, setCount("GrpJobs", func(q *qosSet) **int { return &q.grpJobs })},
		{[]word{{"GrpJobsAccrue", 8}}, nil},
		{[]word{{"GrpMemory", 4}}, setOneTRES("mem", "GrpMemory", qosGrpTRES)},
		{[]word{{"GrpNodes", 4}}, setOneTRES("node", "GrpNodes", qosGrpTRES)},
		{[]word{{"GrpSubmitJobs", 4}}, setCount("GrpSubmitJobs", func(q *qosSet) **int { return &q.grpSubmit })},
		{[]word{{"GrpTRES", 7}}, setTRES(qosGrpTRES)},
		{[]word{{"GrpTRESMins", 8}, {"GrpTRESRunMins", 8}, {"GrpWall", 4}, {"LimitFactor", 6}, {"MaxCPUMinsPerJob", 7}}, nil},
		{[]word{{"MaxCPUsPerJob", 7}}, setOneTRES("cpu", "MaxCPUs", qosPerJob)},
		{[]word{{"MaxCPUsPerUser", 11}, {"MaxCPUsPU", 9}}, setOneTRES("cpu", "MaxCPUsPerUser", qosPerUser)},
		{[]word{{"MaxJobsAccruePerAccount", 17}, {"MaxJobsAccruePA", 15}, {"MaxJobsAccruePerUser", 17},
			{"MaxJobsAccruePU", 15}, {"MaxJobsPerAccount", 11}, {"MaxJobsPA", 9}}, nil},
		{[]word{{"MaxJobsPerUser", 4}, {"MaxJobsPU", 4}}, setCount("MaxJobsPU", func(q *qosSet) **int { return &q.maxJobsPU })},
		{[]word{{"MaxNodesPerJob", 4}}, setOneTRES("node", "MaxNodesPerJob", qosPerJob)},
		{[]word{{"MaxNodesPerUser", 8}, {"MaxNodesPU", 8}}, setOneTRES("node", "MaxNodesPerUser", qosPerUser)},
		{[]word{{"MaxSubmitJobsPerAccount", 17}, {"MaxSubmitJobsPA", 15}}, nil},
		{[]word{{"MaxSubmitJobsPerUser", 4}, {"MaxSubmitJobsPU", 4}, {"MaxSubmitPU", 11}},
			setCount("MaxSubmitJobsPU", func(q *qosSet) **int { return &q.maxSubPU })},
		{[]word{{"MaxTRESPerAccount", 11}, {"MaxTRESPA", 9}}, nil},
		{[]word{{"MaxTRESPerJob", 7}}, setTRES(qosPerJob)},
		{[]word{{"MaxTRESPerNode", 11}}, setTRES(func(q *qosSet) *model.TRES { return &q.perNode })},
		{[]word{{"MaxTRESPerUser", 11}, {"MaxTRESPU", 9}}, setTRES(qosPerUser)},
		{[]word{{"MaxTRESMinsPerJob", 8}, {"MaxTRESRunMinsPA", 16}, {"MaxTRESRunMinsPU", 8}}, nil},
		{[]word{{"MaxWallDurationPerJob", 4}}, setWall("MaxWall", func(q *qosSet) **int64 { return &q.maxWall })},
		{[]word{{"MinCPUsPerJob", 7}, {"MinPrioThresh", 4}, {"MinTRESPerJob", 7}}, nil},
		{[]word{{"PreemptMode", 8}}, func(_ *model.AcctDB, q *qosSet, kv KeyValue) error {
			m, ok := preemptMode(stripQuotes(kv.Value, true))
			if !ok {
				return errorf(" Bad Preempt Mode given: %s\n", kv.String())
			}
			q.preemptMode = &m
			return nil
		}},
		{[]word{{"Preempt", 7}}, func(db *model.AcctDB, q *qosSet, kv KeyValue) error {
			ops, err := parseQOSList(db, kv)
			if err != nil {
				return err
			}
			q.preempt = ops
			return nil
		}},
		{[]word{{"PreemptExemptTime", 8}}, func(_ *model.AcctDB, q *qosSet, kv KeyValue) error {
			secs, ok := parseDuration(kv.Value)
			if !ok {
				tok := kv.String()
				return &Error{" Bad PreemptExemptTime format: " + tok + "\n" + unknownOption(tok)}
			}
			q.preemptExempt = &secs
			return nil
		}},
		{[]word{{"RawUsage", 7}}, nil},
		{[]word{{"Priority", 3}}, setCount("Priority", func(q *qosSet) **int { return &q.prio })},
		{[]word{{"UsageFactor", 6}}, func(_ *model.AcctDB, q *qosSet, kv KeyValue) error {
			f, err := parseFloat(kv.Value, "UsageFactor")
			if err != nil {
				return &Error{err.Error() + unknownOption(kv.String())}
			}
			q.usage = &f
			return nil
		}},
		{[]word{{"UsageThreshold", 6}}, nil},
	}
})

func qosGrpTRES(q *qosSet) *model.TRES { return &q.grpTRES }
func qosPerJob(q *qosSet) *model.TRES  { return &q.perJob }
func qosPerUser(q *qosSet) *model.TRES { return &q.perUser }

// setFlags reads a Flags value; -1 clears them all.
func (q *qosSet) setFlags(kv KeyValue) error {
	v := stripQuotes(kv.Value, false)
	if n := leadingInts(strings.TrimPrefix(v, "-"), 0, 1); strings.HasPrefix(v, "-") && len(n) == 1 && n[0] == 1 {
		q.flagOp, q.flags = '-', slices.Clone(qosFlags)
		return nil
	}
	var got []string
	for _, tok := range strings.Split(v, ",") {
		for _, f := range qosFlagOrder {
			if strings.Contains(strings.ToLower(tok), strings.ToLower(f)) {
				if !slices.Contains(got, f) {
					got = append(got, f)
				}
				break
			}
		}
	}
	if len(got) == 0 {
		return errorf(" Unknown QOS flag used in:\n  '%s'\n Valid QOS flags are\n  '%s'\n", kv.Value, strings.Join(qosFlags, ","))
	}
	q.flagOp, q.flags = '=', got
	if kv.Op != "=" {
		q.flagOp = kv.Op[0]
	}
	return nil
}

// sortFlags puts flags in Slurm's printing order.
func sortFlags(f []string) []string {
	out := slices.Clone(f)
	sort.Slice(out, func(i, j int) bool { return slices.Index(qosFlags, out[i]) < slices.Index(qosFlags, out[j]) })
	return out
}

// apply sets q on the QOS.
func (q *qosSet) apply(dst *model.QOS) {
	if q.descr != nil {
		dst.Description = *q.descr
	}
	switch q.flagOp {
	case '=':
		dst.Flags = sortFlags(q.flags)
	case '+':
		dst.Flags = sortFlags(uniq(append(slices.Clone(dst.Flags), q.flags...)))
	case '-':
		dst.Flags = slices.DeleteFunc(slices.Clone(dst.Flags), func(f string) bool { return slices.Contains(q.flags, f) })
	}
	if len(dst.Flags) == 0 {
		dst.Flags = nil
	}
	set := func(p *int, v *int, cleared int) {
		if v != nil {
			if *p = *v; *v == model.NoLimit {
				*p = cleared
			}
		}
	}
	if q.grace != nil {
		dst.GraceTime = int64(max(*q.grace, 0))
	}
	set(&dst.GrpJobs, q.grpJobs, model.NoLimit)
	set(&dst.GrpSubmitJobs, q.grpSubmit, model.NoLimit)
	set(&dst.MaxJobsPerUser, q.maxJobsPU, model.NoLimit)
	set(&dst.MaxSubmitJobsPerUser, q.maxSubPU, model.NoLimit)
	set(&dst.Priority, q.prio, 0)
	if q.maxWall != nil {
		dst.MaxWall = *q.maxWall
	}
	if q.usage != nil {
		if dst.UsageFactor = *q.usage; *q.usage < 0 {
			dst.UsageFactor = 1
		}
	}
	merge := func(dst *model.TRES, t model.TRES) {
		if t != nil {
			if *dst = (*dst).Merge(t); len(*dst) == 0 {
				*dst = nil
			}
		}
	}
	merge(&dst.GrpTRES, q.grpTRES)
	merge(&dst.MaxTRESPerJob, q.perJob)
	merge(&dst.MaxTRESPerNode, q.perNode)
	merge(&dst.MaxTRESPerUser, q.perUser)
	if q.preempt != nil {
		if dst.Preempt = applyQOS(dst.Preempt, q.preempt); len(dst.Preempt) == 0 {
			dst.Preempt = nil
		}
		sort.Strings(dst.Preempt)
	}
	if q.preemptMode != nil {
		dst.PreemptMode = *q.preemptMode
	}
	if q.preemptExempt != nil {
		dst.PreemptExemptTime = max(*q.preemptExempt, 0)
	}
}

// describe prints the settings of an added QOS as sacctmgr does.
func (q *qosSet) describe(b *strings.Builder) {
	line := func(label, v string) { fmt.Fprintf(b, "  %-25s= %s\n", label, v) }
	num := func(label string, v *int) {
		switch {
		case v == nil:
		case *v == model.NoLimit:
			line(label, "NONE")
		default:
			line(label, fmt.Sprint(*v))
		}
	}
	if q.flagOp != 0 {
		flags := sortFlags(q.flags)
		switch q.flagOp {
		case '+':
			flags = append([]string{"Add"}, flags...)
		case '-':
			flags = append([]string{"Remove"}, flags...)
		}
		line("Flags", strings.Join(flags, ","))
	}
	num("GraceTime", q.grace)
	num("GrpJobs", q.grpJobs)
	num("GrpSubmitJobs", q.grpSubmit)
	if q.grpTRES != nil {
		line("GrpTRES", tresString(q.grpTRES))
	}
	switch {
	case q.maxJobsPU == nil:
	case *q.maxJobsPU == model.NoLimit:
		b.WriteString("  MaxJobsPerUser = NONE\n")
	default:
		fmt.Fprintf(b, "  MaxJobsPerUser = %d\n", *q.maxJobsPU)
	}
	num("MaxSubmitJobsPerUser", q.maxSubPU)
	for _, t := range []struct {
		label string
		v     model.TRES
	}{{"MaxTRESPerJob", q.perJob}, {"MaxTRESPerNode", q.perNode}, {"MaxTRESPerUser", q.perUser}} {
		if t.v != nil {
			line(t.label, tresString(t.v))
		}
	}
	if q.maxWall != nil {
		line("MaxWall", durationString(*q.maxWall))
	}
	if q.preempt != nil {
		line("Preempt", qosOpsString(q.preempt))
	}
	if q.preemptMode != nil && *q.preemptMode != "" {
		line("PreemptMode", *q.preemptMode)
	}
	if q.preemptExempt != nil && *q.preemptExempt >= 0 {
		line("PreemptExemptTime", durationString(*q.preemptExempt))
	}
	num("Priority", q.prio)
	if q.usage != nil {
		if *q.usage < 0 {
			line("UsageFactor", "NONE")
		} else {
			line("UsageFactor", fmt.Sprintf("%.4f", *q.usage))
		}
	}
}

func (t *txn) addQOS(opts []KeyValue) error {
	var names []string
	q := &qosSet{}
	for _, kv := range opts {
		switch {
		case skipKeyword(kv):
		case kv.Op == "" || abbrev(kv.Key, "Name", 1):
			v := kv.Value
			if kv.Op == "" {
				v = kv.Key
			}
			names = append(names, nameList(v, true)...)
		default:
			ok, err := setQOSOption(t.db, q, kv)
			if err != nil {
				return err
			}
			if !ok {
				return &Error{unknownOption(kv.String())}
			}
		}
	}
	if len(names) == 0 {
		return errorf(" Need name of qos to add.\n")
	}
	var added strings.Builder
	descr := ""
	for _, n := range names {
		if t.db.QOS[n] != nil {
			continue
		}
		nq := model.NewQOS(n)
		nq.ID = t.db.NextQOS
		t.db.NextQOS++
		nq.Description = n
		q.apply(nq)
		descr = nq.Description
		t.db.QOS[n] = nq
		t.fresh[nq] = true
		t.changed = true
		fmt.Fprintf(&added, "  %s\n", n)
	}
	if added.Len() == 0 {
		t.out.WriteString(msgNothingAdded)
		return nil
	}
	fmt.Fprintf(&t.out, " Adding QOS(s)\n%s Settings\n  Description    = %s\n", added.String(), descr)
	q.describe(&t.out)
	return nil
}

// qosCond picks QOS.
type qosCond struct {
	entityCond
	set bool // some condition was given
}

func parseQOSCond(opts []KeyValue) (*qosCond, error) {
	c := &qosCond{}
	for _, kv := range opts {
		switch {
		case skipKeyword(kv), listKeyword(kv):
		case kv.Op != "" && abbrev(kv.Key, "Format", 1):
		default:
			ok, given, err := c.readQOS(kv)
			if err != nil {
				return nil, err
			}
			if !ok {
				return nil, &Error{unknownCondition(kv.String())}
			}
			c.set = c.set || given
		}
	}
	return c, nil
}

// match lists the QOS the condition picks, by id.
func (c *qosCond) match(db *model.AcctDB) []*model.QOS {
	var out []*model.QOS
	for _, n := range qosNames(db) {
		if q := db.QOS[n]; c.matchQOS(q) {
			out = append(out, q)
		}
	}
	return out
}

func (t *txn) modifyQOS(condOpts, set []KeyValue) error {
	c, err := parseQOSCond(condOpts)
	if err != nil {
		return err
	}
	q := &qosSet{}
	for _, kv := range set {
		switch {
		case skipKeyword(kv):
		case kv.Op == "" || abbrev(kv.Key, "Name", 1):
		default:
			ok, err := setQOSOption(t.db, q, kv)
			if err != nil {
				return err
			}
			if !ok {
				return &Error{unknownOption(kv.String())}
			}
		}
	}
	if !q.any() {
		return errorf(" You didn't give me anything to set\n")
	}
	hit := c.match(t.db)
	if len(hit) == 0 {
		t.out.WriteString(msgNothingModified)
		return nil
	}
	t.out.WriteString(" Modified qos...\n")
	for _, old := range hit {
		q.apply(t.editQOS(old.Name))
		fmt.Fprintf(&t.out, "  %s\n", old.Name)
	}
	return nil
}

func (t *txn) deleteQOS(opts []KeyValue) error {
	c, err := parseQOSCond(opts)
	if err != nil {
		return err
	}
	if !c.set {
		return errorf(" No conditions given to remove, not executing.\n")
	}
	hit := c.match(t.db)
	if len(hit) == 0 {
		t.out.WriteString(msgNothingDeleted)
		return nil
	}
	var names []string
	for _, q := range hit {
		names = append(names, q.Name)
	}
	var users strings.Builder
	for _, a := range buildTree(t.live()).ordered() {
		if !slices.Contains(names, a.DefaultQOS) {
			continue
		}
		switch {
		case a.User == "":
			fmt.Fprintf(&users, "  DefQOS = %-10s C = %-10s A = %-20s\n", a.DefaultQOS, a.Cluster, a.Account)
		case a.Partition != "":
			fmt.Fprintf(&users, "  DefQOS = %-10s C = %-10s A = %-20s U = %-9s P = %s\n", a.DefaultQOS, a.Cluster, a.Account, a.User, a.Partition)
		default:
			fmt.Fprintf(&users, "  DefQOS = %-10s C = %-10s A = %-20s U = %-9s\n", a.DefaultQOS, a.Cluster, a.Account, a.User)
		}
	}
	if users.Len() > 0 {
		return errorf(" Associations listed below have these as their Default QOS.\n%s"+
			" Please either remove the qos' listed above from list and resubmit,\n"+
			" or change the default qos to remove the qos.\n Changes Discarded\n", users.String())
	}
	t.out.WriteString(" Deleting QOS(s)...\n")
	for _, n := range names {
		delete(t.db.QOS, n)
		fmt.Fprintf(&t.out, "  %s\n", n)
	}
	t.changed = true
	for _, a := range t.live() {
		if slices.ContainsFunc(a.QOS, func(q string) bool { return slices.Contains(names, q) }) {
			e := t.editAssoc(a)
			if e.QOS = slices.DeleteFunc(e.QOS, func(q string) bool { return slices.Contains(names, q) }); len(e.QOS) == 0 {
				e.QOS = nil
			}
		}
	}
	for n, q := range t.db.QOS {
		if slices.ContainsFunc(q.Preempt, func(p string) bool { return slices.Contains(names, p) }) {
			e := t.editQOS(n)
			if e.Preempt = slices.DeleteFunc(e.Preempt, func(p string) bool { return slices.Contains(names, p) }); len(e.Preempt) == 0 {
				e.Preempt = nil
			}
		}
	}
	return nil
}
