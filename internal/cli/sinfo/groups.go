package sinfo

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"github.com/drover-hpc/drover/internal/model"
)

// group is one output line: nodes of one partition (or of none) that print
// alike.
type group struct {
	part    *model.Partition // nil when the line is not tied to a partition
	partIdx int              // configuration order of part
	nodes   []*model.Node
}

func (g *group) first() *model.Node {
	if len(g.nodes) == 0 {
		return nil
	}
	return g.nodes[0]
}

// busy reports whether any CPU of n is allocated.
func busy(n *model.Node) bool { return n.AllocCPUs > 0 }

// baseCode is Slurm's numeric base node state: UNKNOWN 0, DOWN 1, IDLE 2,
// ALLOCATED 3, MIXED 5, FUTURE 6.
func baseCode(n *model.Node) int {
	switch {
	case n.State == model.NodeFuture:
		return 6
	case n.State == model.NodeDown:
		return 1
	case n.State == model.NodeUnknown:
		return 0
	case busy(n) && n.AllocCPUs >= n.CPUs:
		return 3
	case busy(n):
		return 5
	}
	return 2
}

// stateRank orders lines by state as Slurm's numeric states compare: the
// base code, plus the DRAIN and NO_RESPOND flag bits.
func stateRank(n *model.Node) int {
	if n == nil {
		return -1
	}
	r := baseCode(n)
	if n.Drain {
		r |= 0x200
	}
	if !n.Responding && n.State != model.NodeFuture {
		r |= 0x800
	}
	return r
}

// nodeState is one name -t accepts, with what it matches.
type nodeState struct {
	long, short string
	match       func(*model.Node) bool
}

func never(*model.Node) bool { return false }

// nodeStates lists -t names in the order Slurm tries them; a user's word
// matches the first name it is a prefix of, ignoring case.
var nodeStates = []nodeState{
	{"UNKNOWN", "UNK", func(n *model.Node) bool { return n.State == model.NodeUnknown }},
	{"DOWN", "DOWN", func(n *model.Node) bool { return n.State == model.NodeDown }},
	{"IDLE", "IDLE", func(n *model.Node) bool { return baseCode(n) == 2 }},
	{"ALLOCATED", "ALLOC", busy},
	{"ERROR", "ERR", never},
	{"MIXED", "MIX", func(n *model.Node) bool { return baseCode(n) == 5 }},
	{"FUTURE", "FUTR", func(n *model.Node) bool { return n.State == model.NodeFuture }},
	{"PLANNED", "PLND", func(n *model.Node) bool { return n.Planned }},
	{"DRAIN", "DRAIN", func(n *model.Node) bool { return n.Drain }},
	{"DRAINED", "DRAINED", func(n *model.Node) bool { return n.Drain && !busy(n) }},
	{"RESERVED", "RESV", func(n *model.Node) bool { return n.Resv != "" }},
	{"PERFCTRS", "NPC", never},
	{"DRAINING", "DRNG", func(n *model.Node) bool { return n.Drain && busy(n) }},
	{"COMPLETING", "COMP", never},
	{"NO_RESPOND", "NO_RESPOND", func(n *model.Node) bool { return !n.Responding }},
	{"POWERING_DOWN", "POWERING_DOWN", never},
	{"POWERED_DOWN", "POWERED_DOWN", never},
	{"POWER_DOWN", "POWER_DOWN", never},
	{"POWERING_UP", "POWERING_UP", never},
	{"FAIL", "FAIL", never},
	{"MAINT", "MAINT", func(n *model.Node) bool { return n.Resv == "MAINT" }},
	{"REBOOT_REQUESTED", "REBOOT_REQUESTED", never},
	{"REBOOT_ISSUED", "REBOOT_ISSUED", never},
	{"CLOUD", "CLOUD", never},
}

// stateFilter is a -t list: any of its states (all of them with "&").
type stateFilter struct {
	preds []func(*model.Node) bool
	and   bool
}

// parseStateFilter parses "idle,mix" or "drain&idle"; bad is the first
// word no state starts with. "all" matches every node.
func parseStateFilter(s string) (f *stateFilter, bad string) {
	f = &stateFilter{and: strings.ContainsRune(s, '&')}
	for _, w := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == '&' }) {
		if strings.EqualFold(w, "all") {
			f.preds = append(f.preds, func(*model.Node) bool { return true })
			continue
		}
		found := false
		for _, st := range nodeStates {
			if hasPrefixFold(st.short, w) || hasPrefixFold(st.long, w) {
				f.preds = append(f.preds, st.match)
				found = true
				break
			}
		}
		if !found {
			return nil, w
		}
	}
	return f, ""
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

func (f *stateFilter) match(n *model.Node) bool {
	if f == nil || len(f.preds) == 0 {
		return true
	}
	for _, p := range f.preds {
		if ok := p(n); ok != f.and {
			return ok
		}
	}
	return f.and
}

// nodeFilter is what selects nodes: -n, -t, -r, -d.
type nodeFilter struct {
	names      map[string]bool // nil = all
	states     *stateFilter
	responding bool
	dead       bool
}

func (f *nodeFilter) match(n *model.Node) bool {
	if f.names != nil && !f.names[n.Name] {
		return false
	}
	if f.responding && !n.Responding || f.dead && n.Responding {
		return false
	}
	return f.states.match(n)
}

// grouping says how nodes become lines.
type grouping struct {
	byPartition bool // lines are per partition
	emptyParts  bool // partitions with no node still get a line
	perNode     bool // -N: one line per node
	keys        []func(*model.Node) string
}

// buildGroups turns partitions and nodes into lines. parts is already
// restricted to the partitions asked for; partIdx keeps their config order.
func buildGroups(parts []*model.Partition, partIdx []int, nodes []*model.Node, f *nodeFilter, how grouping) []*group {
	byName := make(map[string]*model.Node, len(nodes))
	for _, n := range nodes {
		if n != nil {
			byName[n.Name] = n
		}
	}
	var out []*group
	index := map[string]*group{}
	var key strings.Builder
	add := func(p *model.Partition, pi int, n *model.Node) {
		if how.perNode {
			out = append(out, &group{part: p, partIdx: pi, nodes: []*model.Node{n}})
			return
		}
		key.Reset()
		key.WriteString(strconv.Itoa(pi))
		for _, k := range how.keys {
			key.WriteByte(0)
			key.WriteString(k(n))
		}
		g := index[key.String()]
		if g == nil {
			g = &group{part: p, partIdx: pi}
			index[key.String()] = g
			out = append(out, g)
		}
		g.nodes = append(g.nodes, n)
	}
	seen := map[string]bool{}
	for i, p := range parts {
		before := len(out)
		for _, name := range p.Nodes {
			n := byName[name]
			if n == nil || !f.match(n) {
				continue
			}
			if !how.byPartition {
				if seen[name] {
					continue
				}
				seen[name] = true
				add(nil, -1, n)
				continue
			}
			add(p, partIdx[i], n)
		}
		if how.byPartition && how.emptyParts && len(out) == before {
			out = append(out, &group{part: p, partIdx: partIdx[i]})
		}
	}
	return out
}

// sortKey is one -S field.
type sortKey struct {
	letter    byte
	desc      bool
	partOrder bool // "#P": configuration order
}

func parseSort(s string) []sortKey {
	var keys []sortKey
	desc, hash := false, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case ',':
			desc, hash = false, false
		case '-':
			desc = true
		case '+':
		case '#':
			hash = true
		default:
			keys = append(keys, sortKey{letter: c, desc: desc, partOrder: hash})
			desc, hash = false, false
		}
	}
	return keys
}

func sortGroups(groups []*group, keys []sortKey) {
	slices.SortStableFunc(groups, func(a, b *group) int {
		for _, k := range keys {
			d := compareGroups(k, a, b)
			if k.desc {
				d = -d
			}
			if d != 0 {
				return d
			}
		}
		return 0
	})
}

func partName(g *group) string {
	if g.part == nil {
		return ""
	}
	return g.part.Name
}

func compareGroups(k sortKey, a, b *group) int {
	fa, fb := a.first(), b.first()
	num := func(f func(*model.Node) int64) int {
		var x, y int64
		if fa != nil {
			x = f(fa)
		}
		if fb != nil {
			y = f(fb)
		}
		return cmp.Compare(x, y)
	}
	switch k.letter {
	case 'P', 'R':
		if k.partOrder {
			return cmp.Compare(a.partIdx, b.partIdx)
		}
		return strings.Compare(partName(a), partName(b))
	case 't', 'T':
		return cmp.Compare(stateRank(fa), stateRank(fb))
	case 'N', 'n':
		return compareNodeNames(firstName(a), firstName(b))
	case 'D':
		return cmp.Compare(len(a.nodes), len(b.nodes))
	case 'c':
		return num(func(n *model.Node) int64 { return int64(n.CPUs) })
	case 'm':
		return num(func(n *model.Node) int64 { return n.Memory })
	case 'w':
		return num(func(n *model.Node) int64 { return int64(n.Weight) })
	case 'E':
		return strings.Compare(reasonOf(fa), reasonOf(fb))
	case 'H':
		return num(func(n *model.Node) int64 { return n.ReasonTime })
	case 'l':
		return cmp.Compare(partLimit(a), partLimit(b))
	case 'p':
		return cmp.Compare(partInt(a, func(p *model.Partition) int { return p.PriorityTier }),
			partInt(b, func(p *model.Partition) int { return p.PriorityTier }))
	case 'a':
		return cmp.Compare(partInt(a, func(p *model.Partition) int { return int(p.State) }),
			partInt(b, func(p *model.Partition) int { return int(p.State) }))
	}
	return 0
}

func partLimit(g *group) int64 {
	if g.part == nil {
		return 0
	}
	if g.part.MaxTime == model.Unlimited {
		return 1 << 62
	}
	return g.part.MaxTime
}

func partInt(g *group, f func(*model.Partition) int) int {
	if g.part == nil {
		return 0
	}
	return f(g.part)
}

func firstName(g *group) string {
	if n := g.first(); n != nil {
		return slices.MinFunc(g.nodes, func(a, b *model.Node) int { return compareNodeNames(a.Name, b.Name) }).Name
	}
	return ""
}

// compareNodeNames orders "n2" before "n10": by the text before the
// trailing number, then by that number.
func compareNodeNames(a, b string) int {
	pa, na := splitNum(a)
	pb, nb := splitNum(b)
	if d := strings.Compare(pa, pb); d != 0 {
		return d
	}
	if d := cmp.Compare(len(strings.TrimLeft(na, "0")), len(strings.TrimLeft(nb, "0"))); d != 0 {
		return d
	}
	if d := strings.Compare(strings.TrimLeft(na, "0"), strings.TrimLeft(nb, "0")); d != 0 {
		return d
	}
	return strings.Compare(a, b)
}

func splitNum(s string) (prefix, digits string) {
	i := len(s)
	for i > 0 && s[i-1] >= '0' && s[i-1] <= '9' {
		i--
	}
	return s[:i], s[i:]
}
