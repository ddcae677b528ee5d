package sreport

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/drover-hpc/drover/internal/acct"
)

// column is a report column: its header and width (right-justified).
type column struct {
	name  string
	width int
}

const (
	aligned = iota
	parsable
	parsable2
)

type printer struct {
	w    io.Writer
	mode int
}

func (p *printer) header(cols []column) {
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.name
	}
	p.row(cols, names)
	if p.mode == aligned {
		var b strings.Builder
		for _, c := range cols {
			b.WriteString(strings.Repeat("-", c.width))
			b.WriteByte(' ')
		}
		fmt.Fprintln(p.w, b.String())
	}
}

func (p *printer) row(cols []column, vals []string) {
	var b strings.Builder
	for i, v := range vals {
		if p.mode != aligned {
			b.WriteString(v)
			if i < len(vals)-1 || p.mode == parsable {
				b.WriteByte('|')
			}
			continue
		}
		w := cols[i].width
		if len(v) > w {
			v = v[:w-1] + "+"
		}
		b.WriteString(strings.Repeat(" ", w-len(v)))
		b.WriteString(v)
		b.WriteByte(' ')
	}
	fmt.Fprintln(p.w, b.String())
}

// tree is the account hierarchy of the cluster, from the associations.
type tree struct {
	children map[string][]string
	parent   map[string]string
}

func (d *data) tree() *tree {
	t := &tree{children: map[string][]string{}, parent: map[string]string{}}
	cluster := clusterName(d)
	for _, a := range d.db.Assocs {
		if a.User != "" || a.Account == "root" || (cluster != "" && a.Cluster != cluster) {
			continue
		}
		parent := a.Parent
		if parent == "" {
			parent = "root"
		}
		t.parent[a.Account] = parent
		t.children[parent] = append(t.children[parent], a.Account)
	}
	for _, c := range t.children {
		sort.Strings(c)
	}
	return t
}

// under reports whether account a is acc or below it.
func (t *tree) under(a, acc string) bool {
	for seen := 0; a != "" && seen < 64; seen++ {
		if a == acc {
			return true
		}
		a = t.parent[a]
	}
	return false
}

// walk visits the accounts depth first from root, with their depth.
func (t *tree) walk(fn func(acc string, depth int)) {
	var visit func(string, int)
	visit = func(a string, depth int) {
		fn(a, depth)
		for _, c := range t.children[a] {
			visit(c, depth+1)
		}
	}
	visit("root", 0)
}

var acctByUserHead = []column{{"Cluster", 9}, {"Account", 15}, {"Login", 9}, {"Proper Name", 15}, {"Used", 10}, {"Energy", 9}}

func acctByUser(d *data) [][]string {
	t := d.tree()
	total := d.capacity()
	var rows [][]string
	cluster := clusterName(d)
	t.walk(func(acc string, depth int) {
		if len(d.p.accounts) > 0 && !contains(d.p.accounts, acc) {
			return
		}
		var sum float64
		users := map[string]float64{}
		for _, j := range d.jobs {
			if j.Account == "" || !t.under(j.Account, acc) {
				continue
			}
			u := d.used(j)
			sum += u
			if j.Account == acc {
				users[j.User] += u
			}
		}
		if depth > 0 && sum == 0 {
			return
		}
		name := strings.Repeat(" ", depth) + acc
		rows = append(rows, []string{cluster, name, "", "", d.unit.value(sum, total), "0"})
		for _, login := range sortedKeys(users) {
			rows = append(rows, []string{cluster, strings.Repeat(" ", depth+1) + acc, login, properName(login),
				d.unit.value(users[login], total), "0"})
		}
	})
	return rows
}

// userAccount is usage by (user, account).
type userAccount struct {
	user, account string
	used          float64
}

func (d *data) byUserAccount() []userAccount {
	m := map[[2]string]float64{}
	for _, j := range d.jobs {
		if len(d.p.accounts) > 0 && !contains(d.p.accounts, j.Account) {
			continue
		}
		m[[2]string{j.User, j.Account}] += d.used(j)
	}
	var out []userAccount
	for k, v := range m {
		if v > 0 {
			out = append(out, userAccount{k[0], k[1], v})
		}
	}
	sort.Slice(out, func(a, b int) bool {
		if out[a].used != out[b].used {
			return out[a].used > out[b].used
		}
		return out[a].user+"/"+out[a].account < out[b].user+"/"+out[b].account
	})
	return out
}

var userByAcctHead = []column{{"Cluster", 9}, {"Login", 9}, {"Proper Name", 15}, {"Account", 15}, {"Used", 10}, {"Energy", 9}}

func userByAcct(d *data) [][]string {
	total := d.capacity()
	var rows [][]string
	for _, ua := range d.byUserAccount() {
		rows = append(rows, []string{clusterName(d), ua.user, properName(ua.user), ua.account, d.unit.value(ua.used, total), "0"})
	}
	return rows
}

var topHead = []column{{"Cluster", 9}, {"Login", 9}, {"Proper Name", 15}, {"Account", 15}, {"Used", 10}, {"Energy", 9}}

func topUsage(d *data) [][]string {
	total := d.capacity()
	type usage struct {
		user     string
		accounts []string
		used     float64
	}
	byUser := map[string]*usage{}
	for _, ua := range d.byUserAccount() {
		u := byUser[ua.user]
		if u == nil {
			u = &usage{user: ua.user}
			byUser[ua.user] = u
		}
		u.accounts = append(u.accounts, ua.account)
		u.used += ua.used
	}
	list := make([]*usage, 0, len(byUser))
	for _, u := range byUser {
		list = append(list, u)
	}
	sort.Slice(list, func(a, b int) bool {
		if list[a].used != list[b].used {
			return list[a].used > list[b].used
		}
		return list[a].user < list[b].user
	})
	var rows [][]string
	for i, u := range list {
		if i >= d.p.top {
			break
		}
		rows = append(rows, []string{clusterName(d), u.user, properName(u.user), strings.Join(u.accounts, ","),
			d.unit.value(u.used, total), "0"})
	}
	return rows
}

func sizesHead(groups []int) []column {
	cols := []column{{"Cluster", 9}, {"Account", 9}}
	lo := 0
	for _, g := range groups {
		cols = append(cols, column{fmt.Sprintf("%d-%d CPUs", lo, g-1), 13})
		lo = g
	}
	cols = append(cols, column{fmt.Sprintf(">= %d CPUs", lo), 13}, column{"% of cluster", 12})
	return cols
}

// sizes is job SizesByAccount: usage of each top-level account by job
// size (CPUs) bucket.
func sizes(d *data) [][]string {
	t := d.tree()
	top := func(a string) string {
		for t.parent[a] != "" && t.parent[a] != "root" {
			a = t.parent[a]
		}
		if a == "" {
			return "root"
		}
		return a
	}
	groups := d.p.grouping
	buckets := map[string][]float64{}
	var all float64
	for _, j := range d.jobs {
		acc := top(j.Account)
		if len(d.p.accounts) > 0 && !contains(d.p.accounts, acc) {
			continue
		}
		b := buckets[acc]
		if b == nil {
			b = make([]float64, len(groups)+1)
			buckets[acc] = b
		}
		i := sort.SearchInts(groups, int(j.NCPUs)+1)
		u := d.used(j)
		b[i] += u
		all += u
	}
	var rows [][]string
	unit := d.unit
	if unit.percent {
		unit.percent = false
	}
	for _, acc := range sortedKeys(buckets) {
		r := []string{clusterName(d), acc}
		var sum float64
		for _, v := range buckets[acc] {
			r = append(r, unit.value(v, all))
			sum += v
		}
		pct := 0.0
		if all > 0 {
			pct = 100 * sum / all
		}
		rows = append(rows, append(r, fmt.Sprintf("%.2f%%", pct)))
	}
	return rows
}

var _ = acct.Job{}
