package sreport

import (
	"fmt"
	"sort"
	"strings"
)

// sizeGroup is one account's line of job SizesByAccount.
type sizeGroup struct {
	acct   string
	use    []int64 // TRES-seconds per size bucket
	jobs   []int64 // jobs per size bucket
	total  int64
	njobs  int64
	active bool
}

// sizes is job SizesByAccount: per account, the usage of the jobs in
// each size bucket (by their count of the TRES, CPUs by default). By
// default every job counts toward root; Accounts= gives a line to each
// listed account (its subtree), AcctAsParent to the accounts under them
// (root's by default), FlatView to each job's own account.
func (s *session) sizes(w *world, c *cond, tres []string) error {
	if len(tres) > 1 {
		return condError(" Job report only supports a single --tres type.\n Generate a separate report for each TRES type.")
	}
	t := tres[0]
	fields := s.fields(jobFields, s.defaultFormat(c, "Cl,a", "Cl,a"))
	kept := func(r *rec) bool {
		_, has := r.tres[t]
		return has && (len(c.users) == 0 || contains(c.users, r.User)) &&
			(len(c.partitions) == 0 || contains(c.partitions, r.Partition)) &&
			(!c.flat || len(c.accounts) == 0 || contains(c.accounts, r.Account))
	}
	bounds := c.grouping
	if c.individual {
		bounds = nil
		for _, r := range w.recs {
			if n := int(r.tres[t]); kept(r) && !containsInt(bounds, n) {
				bounds = append(bounds, n)
			}
		}
		sort.Ints(bounds)
	} else if len(bounds) == 0 {
		bounds = []int{50, 250, 500, 1000}
	}
	nb := len(bounds) + 1
	if c.individual {
		nb = len(bounds)
	}
	bucket := func(n int) int {
		if c.individual {
			return sort.SearchInts(bounds, n)
		}
		return sort.SearchInts(bounds, n+1)
	}

	type clusterGroups struct {
		name   string
		groups []*sizeGroup
		total  int64
		njobs  int64
	}
	var all []clusterGroups
	for _, cl := range s.clusterList(w, c) {
		tr := w.tree(cl)
		var names []string
		switch {
		case c.flat:
		case c.asParent:
			parents := c.accounts
			if len(parents) == 0 {
				parents = []string{"root"}
			}
			for _, a := range tr.order("root") {
				if contains(parents, tr.parent[a]) {
					names = append(names, a)
				}
			}
		case len(c.accounts) > 0:
			for _, a := range tr.order("root") {
				if contains(c.accounts, a) {
					names = append(names, a)
				}
			}
		default:
			names = tr.order("root")
		}
		byName := map[string]*sizeGroup{}
		group := func(a string) *sizeGroup {
			g := byName[a]
			if g == nil {
				g = &sizeGroup{acct: a, use: make([]int64, nb), jobs: make([]int64, nb)}
				byName[a] = g
			}
			return g
		}
		cg := clusterGroups{name: cl}
		for _, r := range w.clusterRecs(cl) {
			if !kept(r) {
				continue
			}
			var g *sizeGroup
			if c.flat {
				g = group(r.Account)
			} else {
				for _, a := range names {
					if r.Account != "" && tr.under(r.Account, a) {
						g = group(a)
						break
					}
				}
			}
			if g == nil {
				continue
			}
			i := bucket(int(r.tres[t]))
			u := r.usage(t)
			g.use[i] += u
			g.jobs[i]++
			g.total += u
			g.njobs++
			cg.total += u
			cg.njobs++
		}
		for _, g := range byName {
			cg.groups = append(cg.groups, g)
		}
		sort.Slice(cg.groups, func(a, b int) bool { return cg.groups[a].acct < cg.groups[b].acct })
		if cg.njobs > 0 {
			all = append(all, cg)
		}
	}

	what := "CPUs"
	if s.tresArg != "" && !strings.EqualFold(s.tresArg, "cpu") {
		what = "TRES"
	}
	width := 13
	if s.unit.per() {
		width = 20
	}
	var buckets []field
	for i, b := range bounds {
		name := fmt.Sprintf("%d %s", b, what)
		if !c.individual {
			lo := 0
			if i > 0 {
				lo = bounds[i-1]
			}
			name = fmt.Sprintf("%d-%d %s", lo, b-1, what)
		}
		buckets = append(buckets, field{id: "bucket", header: name, width: width})
	}
	if !c.individual {
		buckets = append(buckets, field{id: "bucket", header: fmt.Sprintf(">= %d %s", bounds[len(bounds)-1], what), width: width})
	}
	cols := append(append(append([]field(nil), fields...), buckets...), field{id: "pct", header: "% of cluster", width: 12})

	if s.header {
		lines := []string{"Job Sizes " + periodSecs(w)}
		if s.tresArg != "" {
			lines = append(lines, "TRES type is "+s.tresArg)
		}
		if c.jobCount {
			lines = append(lines, "Units are in number of jobs ran")
		} else {
			lines = append(lines, "Time reported in "+s.unit.String())
		}
		banner(s.out, lines...)
	}
	p := s.printer()
	if s.header {
		p.header(cols)
	}
	for _, cg := range all {
		for _, g := range cg.groups {
			if g.njobs == 0 {
				continue
			}
			cells := make([]cell, 0, len(cols))
			for _, f := range fields {
				switch f.id {
				case "cluster":
					cells = append(cells, str(cg.name))
				case "acct":
					cells = append(cells, str(g.acct))
				default:
					cells = append(cells, cell{})
				}
			}
			for i := range buckets {
				if c.jobCount {
					cells = append(cells, num(g.jobs[i]))
				} else {
					cells = append(cells, s.time(g.use[i], g.total))
				}
			}
			part, whole := g.total, cg.total
			if c.jobCount {
				part, whole = g.njobs, cg.njobs
			}
			cells = append(cells, cell{uPercent.format(part, whole), cTime})
			p.row(cols, cells)
		}
	}
	return nil
}

func containsInt(list []int, n int) bool {
	for _, x := range list {
		if x == n {
			return true
		}
	}
	return false
}
