package sreport

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// clusterFields are the columns of the cluster reports, in the order
// Format= names are tried.
var clusterFields = []fieldDef{
	{[]alias{{"Accounts", 2}}, "acct", "Account", 15, 0},
	{[]alias{{"allocated", 2}}, "alloc", "Allocated", 12, 20},
	{[]alias{{"Cluster", 2}}, "cluster", "Cluster", 9, 0},
	{[]alias{{"down", 1}}, "down", "Down", 10, 18},
	{[]alias{{"idle", 1}}, "idle", "Idle", 12, 20},
	{[]alias{{"Login", 1}}, "login", "Login", 9, 0},
	{[]alias{{"overcommitted", 1}}, "over", "Over Comm", 9, 18},
	{[]alias{{"PlannedDown", 2}}, "pdown", "PLND Down", 10, 18},
	{[]alias{{"Proper", 2}}, "proper", "Proper Name", 15, 0},
	{[]alias{{"reported", 3}}, "reported", "Reported", 12, 20},
	{[]alias{{"reserved", 3}, {"planned", 4}}, "plan", "Planned", 9, 18},
	{[]alias{{"TresCount", 5}, {"cpucount", 2}, {"count", 2}}, "count", "TRES Count", 10, 0},
	{[]alias{{"TresName", 5}}, "tres", "TRES Name", 14, 0},
	{[]alias{{"Used", 1}}, "used", "Used", 10, 18},
	{[]alias{{"WCKey", 2}}, "wckey", "WCKey", 15, 20},
	{[]alias{{"Energy", 1}}, "energy", "Energy", 10, 18},
}

// userFields are the columns of user TopUsage.
var userFields = []fieldDef{
	{[]alias{{"Accounts", 1}}, "acct", "Account", 15, 0},
	{[]alias{{"Cluster", 1}}, "cluster", "Cluster", 9, 0},
	{[]alias{{"Energy", 1}}, "energy", "Energy", 10, 18},
	{[]alias{{"Login", 1}}, "login", "Login", 9, 0},
	{[]alias{{"Proper", 1}}, "proper", "Proper Name", 15, 0},
	{[]alias{{"TresName", 5}}, "tres", "TRES Name", 14, 0},
	{[]alias{{"Used", 1}}, "used", "Used", 10, 18},
}

// jobFields are the leading columns of job SizesByAccount.
var jobFields = []fieldDef{
	{[]alias{{"Account", 1}, {"Acct", 4}}, "acct", "Account", 9, 0},
	{[]alias{{"Cluster", 2}}, "cluster", "Cluster", 9, 0},
	{[]alias{{"Duration", 1}}, "duration", "Duration", 12, 0},
	{[]alias{{"JobCount", 2}}, "jobcount", "Job Count", 9, 0},
	{[]alias{{"NodeCount", 2}}, "nodecount", "Node Count", 9, 0},
	{[]alias{{"TresCount", 5}, {"CpuCount", 2}, {"count", 2}}, "count", "TRES Count", 10, 0},
	{[]alias{{"User", 1}}, "user", "User", 9, 0},
	{[]alias{{"Wckey", 1}}, "wckey", "Wckey", 9, 0},
}

// defaultFormat is a report's Format= when none is given; with --tres
// the TRES name replaces the energy column.
func (s *session) defaultFormat(c *cond, plain, withTRES string) []string {
	if len(c.format) > 0 {
		return c.format
	}
	if s.tresArg != "" {
		return strings.Split(withTRES, ",")
	}
	return strings.Split(plain, ",")
}

func (s *session) fields(defs []fieldDef, format []string) []field {
	f, ok := pickFields(defs, format, s.unit, s.env.Stderr)
	if !ok {
		s.failed = true
	}
	return f
}

// period is the title's "start - end" with the last second of the period.
func period(w *world) string { return stamp(w.start) + " - " + stamp(w.end-1) }

func periodSecs(w *world) string {
	return period(w) + " (" + strconv.FormatInt(w.end-w.start, 10) + " secs)"
}

// usageLine is the banner's unit line.
func (s *session) usageLine() string {
	if s.unit == uPercent {
		return "Usage reported in " + s.unit.String()
	}
	what := "CPU"
	if s.tresArg != "" {
		what = "TRES"
	}
	return "Usage reported in " + what + " " + s.unit.String()
}

func (s *session) time(secs, total int64) cell { return cell{s.unit.format(secs, total), cTime} }

// utilization is cluster Utilization: per cluster and TRES, the time
// allocated to jobs, idle, and reported in all. Drover keeps no record
// of node down time or reservations yet: Down, PLND Down, Planned and
// Over Comm are 0.
func (s *session) utilization(w *world, c *cond, tres []string) {
	fields := s.fields(clusterFields, s.defaultFormat(c, "Cl,al,d,planned,i,res,rep", "Cl,TresName,al,d,planned,i,res,rep"))
	type util struct {
		cluster, tres                 string
		count, alloc, reported, total int64
	}
	var rows []util
	var maxAlloc, maxIdle, maxRep int64
	for _, cl := range s.clusterList(w, c) {
		recs := w.clusterRecs(cl)
		for _, t := range tres {
			u := util{cluster: cl, tres: t, count: w.capacity(cl, t)}
			for _, r := range recs {
				u.alloc += r.usage(t)
			}
			u.total = u.count * w.seconds()
			u.reported = max(u.total, u.alloc)
			if u.count == 0 {
				u.total = u.reported
			}
			maxAlloc, maxIdle, maxRep = max(maxAlloc, u.alloc), max(maxIdle, u.reported-u.alloc), max(maxRep, u.reported)
			rows = append(rows, u)
		}
	}
	for _, id := range []string{"down", "pdown", "plan", "over"} {
		setWidth(fields, id, 0, s.unit)
	}
	setWidth(fields, "alloc", maxAlloc, s.unit)
	setWidth(fields, "energy", maxAlloc, s.unit)
	setWidth(fields, "idle", maxIdle, s.unit)
	setWidth(fields, "reported", maxRep, s.unit)
	if s.header {
		banner(s.out, "Cluster Utilization "+period(w), s.usageLine())
	}
	p := s.printer()
	if s.header {
		p.header(fields)
	}
	for _, u := range rows {
		cells := make([]cell, len(fields))
		for i, f := range fields {
			switch f.id {
			case "cluster":
				cells[i] = str(u.cluster)
			case "tres":
				cells[i] = str(u.tres)
			case "count":
				cells[i] = num(u.count)
			case "alloc":
				cells[i] = s.time(u.alloc, u.reported)
			case "down", "pdown", "plan", "over":
				cells[i] = s.time(0, u.reported)
			case "idle":
				cells[i] = s.time(u.reported-u.alloc, u.reported)
			case "reported":
				cells[i] = s.time(u.reported, u.total)
			case "energy":
				cells[i] = s.time(0, 0)
			}
		}
		p.row(fields, cells)
	}
}

// usageRow is one line of the association reports: an account (user
// empty) or a user's usage in an account, per TRES.
type usageRow struct {
	cluster, acct, user string
	shown               string // the account as printed (indented in a tree)
	use                 []int64
	reported            []int64 // the cluster's, per TRES
}

// printUsage prints the rows of the association and user reports, one
// line per row and TRES.
func (s *session) printUsage(w *world, fields []field, rows []usageRow, tres []string, title string) {
	var maxUsed int64
	for _, r := range rows {
		for _, u := range r.use {
			maxUsed = max(maxUsed, u)
		}
	}
	setWidth(fields, "used", maxUsed, s.unit)
	setWidth(fields, "energy", 0, s.unit)
	if s.header {
		banner(s.out, title+" "+periodSecs(w), s.usageLine())
	}
	p := s.printer()
	if s.header {
		p.header(fields)
	}
	for _, r := range rows {
		for ti, t := range tres {
			cells := make([]cell, len(fields))
			for i, f := range fields {
				switch f.id {
				case "cluster":
					cells[i] = str(r.cluster)
				case "acct":
					cells[i] = str(r.shown)
				case "login":
					cells[i] = str(r.user)
				case "proper":
					cells[i] = str(w.properName(r.user))
				case "tres":
					cells[i] = str(t)
				case "used":
					cells[i] = s.time(r.use[ti], r.reported[ti])
				case "energy":
					cells[i] = s.time(0, 0)
				}
			}
			p.row(fields, cells)
		}
	}
}

func reportedList(w *world, cluster string, recs []*rec, tres []string) []int64 {
	out := make([]int64, len(tres))
	for i, t := range tres {
		out[i] = w.reported(cluster, t, recs)
	}
	return out
}

func addUse(dst []int64, r *rec, tres []string) []int64 {
	if dst == nil {
		dst = make([]int64, len(tres))
	}
	for i, t := range tres {
		dst[i] += r.usage(t)
	}
	return dst
}

// acctByUser is cluster AccountUtilizationByUser: the account tree
// depth first, each account's usage (its whole subtree) followed by its
// users' and then its sub-accounts'. Users= leaves only user lines.
func (s *session) acctByUser(w *world, c *cond, tres []string) {
	fields := s.fields(clusterFields, s.defaultFormat(c, "Cluster,Ac,Login,Proper,Used,Energy", "Cluster,Ac,Login,Proper,TresName,Used"))
	if c.tree {
		for i := range fields {
			if fields[i].id == "acct" && !fields[i].fixed {
				fields[i].width = -20
			}
		}
	}
	var rows []usageRow
	for _, cl := range s.clusterList(w, c) {
		t := w.tree(cl)
		recs := w.clusterRecs(cl)
		rep := reportedList(w, cl, recs, tres)
		users := map[[2]string][]int64{}
		accts := map[string][]int64{}
		for _, r := range recs {
			if r.Account == "" || (len(c.users) > 0 && !contains(c.users, r.User)) {
				continue
			}
			users[[2]string{r.Account, r.User}] = addUse(users[[2]string{r.Account, r.User}], r, tres)
			for a, n := r.Account, 0; a != "" && n < 128; a, n = t.parent[a], n+1 {
				accts[a] = addUse(accts[a], r, tres)
			}
		}
		tops := []string{"root"}
		if len(c.accounts) > 0 {
			tops = nil
			for _, a := range t.order("root") {
				if contains(c.accounts, a) && (t.parent[a] == "" || !selectedAbove(t, t.parent[a], c.accounts)) {
					tops = append(tops, a)
				}
			}
		}
		if len(c.users) > 0 {
			var keys [][2]string
			for k := range users {
				for _, top := range tops {
					if t.under(k[0], top) {
						keys = append(keys, k)
						break
					}
				}
			}
			sort.Slice(keys, func(a, b int) bool {
				if keys[a][1] != keys[b][1] {
					return keys[a][1] < keys[b][1]
				}
				return keys[a][0] < keys[b][0]
			})
			for _, k := range keys {
				rows = append(rows, usageRow{cluster: cl, acct: k[0], user: k[1], shown: k[0], use: users[k], reported: rep})
			}
			continue
		}
		var walk func(a, indent string)
		walk = func(a, indent string) {
			if accts[a] == nil {
				return
			}
			shown, inner := a, a
			if c.tree {
				shown, inner = indent+a, indent+" "+a
			}
			rows = append(rows, usageRow{cluster: cl, acct: a, shown: shown, use: accts[a], reported: rep})
			var logins []string
			for k := range users {
				if k[0] == a {
					logins = append(logins, k[1])
				}
			}
			sort.Strings(logins)
			for _, u := range logins {
				rows = append(rows, usageRow{cluster: cl, acct: a, user: u, shown: inner, use: users[[2]string{a, u}], reported: rep})
			}
			for _, child := range t.children[a] {
				walk(child, indent+" ")
			}
		}
		for _, top := range tops {
			walk(top, "")
		}
	}
	s.printUsage(w, fields, rows, tres, "Cluster/Account/User Utilization")
}

// selectedAbove reports whether a or an account above it is listed.
func selectedAbove(t *tree, a string, list []string) bool {
	for n := 0; a != "" && n < 128; a, n = t.parent[a], n+1 {
		if contains(list, a) {
			return true
		}
	}
	return false
}

// userAccounts sums the records by user and account (by user alone when
// group), keeping Accounts= and Users=.
func userAccounts(recs []*rec, c *cond, tres []string, group bool) map[[2]string][]int64 {
	m := map[[2]string][]int64{}
	for _, r := range recs {
		if (len(c.accounts) > 0 && !contains(c.accounts, r.Account)) || (len(c.users) > 0 && !contains(c.users, r.User)) {
			continue
		}
		k := [2]string{r.User, r.Account}
		if group {
			k[1] = ""
		}
		m[k] = addUse(m[k], r, tres)
	}
	return m
}

// sortUsers orders user lines by the usage of TRES i, largest first, then
// by name (by name alone with -s name).
func (s *session) sortUsers(rows []usageRow, i int) {
	sort.SliceStable(rows, func(a, b int) bool {
		x, y := rows[a], rows[b]
		if !s.byName && x.use[i] != y.use[i] {
			return x.use[i] > y.use[i]
		}
		if x.user != y.user {
			return x.user < y.user
		}
		return x.acct < y.acct
	})
}

// userByAcct is cluster UserUtilizationByAccount: a line per user and
// account, the largest CPU users first.
func (s *session) userByAcct(w *world, c *cond, tres []string) {
	fields := s.fields(clusterFields, s.defaultFormat(c, "Cluster,Login,Proper,Ac,Used,Energy", "Cluster,Login,Proper,Ac,TresName,Used"))
	var rows []usageRow
	sortTRES := append([]string{"cpu"}, tres...)
	for _, cl := range s.clusterList(w, c) {
		recs := w.clusterRecs(cl)
		rep := reportedList(w, cl, recs, sortTRES)[1:]
		var part []usageRow
		for k, use := range userAccounts(recs, c, sortTRES, false) {
			part = append(part, usageRow{cluster: cl, user: k[0], acct: k[1], shown: k[1], use: use, reported: rep})
		}
		s.sortUsers(part, 0)
		for i := range part {
			part[i].use = part[i].use[1:]
		}
		rows = append(rows, part...)
	}
	s.printUsage(w, fields, rows, tres, "Cluster/User/Account Utilization")
}

// topUsage is user TopUsage: the TopCount users (by user and account, or
// by user with Group) who used most of the first TRES.
func (s *session) topUsage(w *world, c *cond, tres []string) {
	fields := s.fields(userFields, s.defaultFormat(c, "Cl,L,P,A,U,Energy", "Cl,L,P,A,TresName,Used"))
	var rows []usageRow
	for _, cl := range s.clusterList(w, c) {
		recs := w.clusterRecs(cl)
		rep := reportedList(w, cl, recs, tres)
		var part []usageRow
		for k, use := range userAccounts(recs, c, tres, c.group) {
			shown := k[1]
			if c.group {
				shown = strings.Join(accountsOf(recs, c, k[0]), ", ")
			}
			part = append(part, usageRow{cluster: cl, user: k[0], acct: k[1], shown: shown, use: use, reported: rep})
		}
		s.sortUsers(part, 0)
		if len(part) > c.top {
			part = part[:c.top]
		}
		rows = append(rows, part...)
	}
	s.printUsage(w, fields, rows, tres, fmt.Sprintf("Top %d Users", c.top))
}

// accountsOf lists the accounts a user's records (kept by Accounts=) name.
func accountsOf(recs []*rec, c *cond, login string) []string {
	var out []string
	for _, r := range recs {
		if r.User == login && (len(c.accounts) == 0 || contains(c.accounts, r.Account)) && !contains(out, r.Account) {
			out = append(out, r.Account)
		}
	}
	sort.Strings(out)
	return out
}
