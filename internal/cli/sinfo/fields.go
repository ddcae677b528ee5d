package sinfo

import (
	"strconv"
	"strings"

	"github.com/drover-hpc/drover/internal/cli"
	"github.com/drover-hpc/drover/internal/format"
	"github.com/drover-hpc/drover/internal/hostlist"
	"github.com/drover-hpc/drover/internal/model"
)

// fieldKind says how a field takes part in grouping nodes into lines.
type fieldKind uint8

const (
	kindAgg  fieldKind = iota // computed over a line's nodes
	kindPart                  // a partition attribute: lines are per partition
	kindKey                   // a node attribute: nodes that differ split
	kindNum                   // numeric node attribute: split only with -e
)

// sinfoField is a format field with its grouping role.
type sinfoField struct {
	format.Field[*group]
	kind fieldKind
	key  func(*model.Node) string // for kindKey and kindNum
}

type appendFn = func([]byte, *group) []byte

type renderCtx struct {
	noConvert bool
	env       *cli.Env // names uids
}

func reasonOf(n *model.Node) string {
	if n == nil || n.Reason == "" {
		return "none"
	}
	return n.Reason
}

// withNode applies f to the line's first node, or prints "n/a".
func withNode(f func(d []byte, n *model.Node) []byte) appendFn {
	return func(d []byte, g *group) []byte {
		if n := g.first(); n != nil {
			return f(d, n)
		}
		return append(d, "n/a"...)
	}
}

// withPart applies f to the line's partition, or prints "n/a".
func withPart(f func(d []byte, p *model.Partition) []byte) appendFn {
	return func(d []byte, g *group) []byte {
		if g.part != nil {
			return f(d, g.part)
		}
		return append(d, "n/a"...)
	}
}

// minPlus prints a numeric node attribute over a line: the value, or
// "min+" when nodes differ.
func minPlus(v func(*model.Node) int64, convert bool, c *renderCtx) appendFn {
	return func(d []byte, g *group) []byte {
		if len(g.nodes) == 0 {
			return append(d, '0')
		}
		lo, hi := v(g.nodes[0]), v(g.nodes[0])
		for _, n := range g.nodes[1:] {
			lo, hi = min(lo, v(n)), max(hi, v(n))
		}
		if convert {
			d = format.AppendUnits(d, lo, format.UnitNone, c.noConvert)
		} else {
			d = strconv.AppendInt(d, lo, 10)
		}
		if hi != lo {
			d = append(d, '+')
		}
		return d
	}
}

// counts are a line's nodes or CPUs split into allocated, idle, other.
func counts(g *group, cpus bool) (a, i, o, t int) {
	for _, n := range g.nodes {
		down := n.Drain || n.State == model.NodeDown
		if cpus {
			a += n.AllocCPUs
			t += n.CPUs
			if rest := n.CPUs - n.AllocCPUs; down {
				o += rest
			} else {
				i += rest
			}
			continue
		}
		t++
		switch {
		case busy(n):
			a++
		case down:
			o++
		default:
			i++
		}
	}
	return
}

func appendCounts(d []byte, vals ...int) []byte {
	for k, v := range vals {
		if k > 0 {
			d = append(d, '/')
		}
		d = strconv.AppendInt(d, int64(v), 10)
	}
	return d
}

// names compresses a name of every node of the line.
func names(f func(*model.Node) string) appendFn {
	return func(d []byte, g *group) []byte {
		ns := make([]string, len(g.nodes))
		for i, n := range g.nodes {
			ns[i] = f(n)
		}
		return append(d, hostlist.Compress(ns)...)
	}
}

func appendLimit(d []byte, t int64) []byte {
	switch {
	case t == model.Unlimited:
		return append(d, "infinite"...)
	case t < 0:
		return append(d, "n/a"...)
	}
	return format.AppendClock(d, t)
}

func (c *renderCtx) userName(n *model.Node) string {
	if n.Reason == "" && n.ReasonTime == 0 {
		return "Unknown"
	}
	if u, err := c.env.LookupUserID(strconv.FormatUint(uint64(n.ReasonUID), 10)); err == nil && u.Username != "" {
		return u.Username
	}
	return "Unk(" + strconv.FormatUint(uint64(n.ReasonUID), 10) + ")"
}

// gresUsed is sinfo's GresUsed ("gpu:2", "gpu:a100:1(IDX:0)"; "(null)"
// without GRES).
func gresUsed(n *model.Node) string { return orNull(cli.GresUsed(n)) }

func str(f func(*model.Node) string) func([]byte, *model.Node) []byte {
	return func(d []byte, n *model.Node) []byte { return append(d, f(n)...) }
}

func orNull(s string) string {
	if s == "" {
		return "(null)"
	}
	return s
}

func features(n *model.Node) string { return orNull(strings.Join(n.Features, ",")) }

func stateLong(n *model.Node) string {
	l, _ := n.DisplayState()
	return strings.ToLower(l)
}

func stateShort(n *model.Node) string {
	_, s := n.DisplayState()
	return strings.ToLower(s)
}

func stateComplete(n *model.Node) string {
	s := [...]string{"unknown", "down", "idle", "allocated", "error", "mixed", "future"}[baseCode(n)]
	if n.Drain {
		s += "+drain"
	}
	if !n.Responding && n.State != model.NodeFuture {
		s += "+not_responding"
	}
	return s
}

func availText(p *model.Partition) string {
	switch p.State {
	case model.PartDown:
		return "down"
	case model.PartDrain:
		return "drain"
	case model.PartInactive:
		return "inactive"
	}
	return "up"
}

func appendSize(d []byte, p *model.Partition, c *renderCtx) []byte {
	lo, hi := int64(p.MinNodes), int64(p.MaxNodes)
	if lo < 1 && (hi > 0 || hi == model.Unlimited) {
		lo = 1
	}
	d = format.AppendUnits(d, lo, format.UnitNone, c.noConvert)
	switch {
	case hi == lo:
		return d
	case hi == model.Unlimited || hi < 0:
		return append(d, "-infinite"...)
	}
	d = append(d, '-')
	return format.AppendUnits(d, hi, format.UnitNone, c.noConvert)
}

func fixed(v string) appendFn { return func(d []byte, _ *group) []byte { return append(d, v...) } }

func mk(letter byte, name, header string, kind fieldKind, fn appendFn, key func(*model.Node) string, aliases ...string) sinfoField {
	return sinfoField{Field: format.Field[*group]{Letter: letter, Name: name, Header: header, Append: fn, Aliases: aliases}, kind: kind, key: key}
}

func i64(f func(*model.Node) int) func(*model.Node) int64 {
	return func(n *model.Node) int64 { return int64(f(n)) }
}

func keyInt(f func(*model.Node) int64) func(*model.Node) string {
	return func(n *model.Node) string { return strconv.FormatInt(f(n), 10) }
}

// fields is sinfo's field table.
func fields(c *renderCtx) []sinfoField {
	cpus := i64(func(n *model.Node) int { return n.CPUs })
	sockets := i64(func(n *model.Node) int { return n.Sockets })
	cores := i64(func(n *model.Node) int { return n.Cores })
	threads := i64(func(n *model.Node) int { return n.Threads })
	weight := i64(func(n *model.Node) int { return n.Weight })
	memory := func(n *model.Node) int64 { return n.Memory }
	sct := func(n *model.Node) string {
		return strconv.Itoa(n.Sockets) + ":" + strconv.Itoa(n.Cores) + ":" + strconv.Itoa(n.Threads)
	}
	partName := func(p *model.Partition) string { return p.Name }
	list := []sinfoField{
		mk('a', "available", "AVAIL", kindPart, withPart(func(d []byte, p *model.Partition) []byte { return append(d, availText(p)...) }), nil),
		mk('A', "nodeai", "NODES(A/I)", kindAgg, func(d []byte, g *group) []byte {
			a, i, _, _ := counts(g, false)
			return appendCounts(d, a, i)
		}, nil),
		mk('b', "features_act", "ACTIVE_FEATURES", kindKey, withNode(str(features)), features),
		mk('B', "maxcpuspernode", "MAX_CPUS_PER_NODE", kindPart, fixed("UNLIMITED"), nil),
		mk('c', "cpus", "CPUS", kindNum, minPlus(cpus, true, c), keyInt(cpus)),
		mk('C', "cpusstate", "CPUS(A/I/O/T)", kindAgg, func(d []byte, g *group) []byte {
			a, i, o, t := counts(g, true)
			return appendCounts(d, a, i, o, t)
		}, nil),
		mk('d', "disk", "TMP_DISK", kindNum, fixed("0"), func(*model.Node) string { return "0" }),
		mk('D', "nodes", "NODES", kindAgg, func(d []byte, g *group) []byte { return strconv.AppendInt(d, int64(len(g.nodes)), 10) }, nil),
		mk('e', "freemem", "FREE_MEM", kindAgg, fixed("N/A"), nil),
		mk('E', "reason", "REASON", kindKey, func(d []byte, g *group) []byte { return append(d, reasonOf(g.first())...) }, reasonOf),
		mk('f', "features", "AVAIL_FEATURES", kindKey, withNode(str(features)), features),
		mk('F', "nodeaiot", "NODES(A/I/O/T)", kindAgg, func(d []byte, g *group) []byte {
			a, i, o, t := counts(g, false)
			return appendCounts(d, a, i, o, t)
		}, nil),
		mk('g', "groups", "GROUPS", kindPart, withPart(func(d []byte, p *model.Partition) []byte {
			if p.AllowGroups == nil {
				return append(d, "all"...)
			}
			return append(d, strings.Join(p.AllowGroups, ",")...)
		}), nil),
		mk('G', "gres", "GRES", kindKey, withNode(str(func(n *model.Node) string { return orNull(n.Gres) })), func(n *model.Node) string { return n.Gres }),
		mk('h', "oversubscribe", "OVERSUBSCRIBE", kindPart, withPart(func(d []byte, p *model.Partition) []byte {
			if p.OverSubscribe == "" {
				return append(d, "NO"...)
			}
			return append(d, strings.ToUpper(p.OverSubscribe)...)
		}), nil, "share"),
		mk('H', "timestamp", "TIMESTAMP", kindKey, func(d []byte, g *group) []byte {
			if n := g.first(); n != nil {
				return format.AppendTimestamp(d, n.ReasonTime, "Unknown")
			}
			return append(d, "Unknown"...)
		}, func(n *model.Node) string { return strconv.FormatInt(n.ReasonTime, 10) }),
		mk('I', "priorityjobfactor", "PRIO_JOB_FACTOR", kindPart, withPart(func(d []byte, p *model.Partition) []byte {
			return strconv.AppendInt(d, int64(p.PriorityJobFactor), 10)
		}), nil),
		mk('l', "time", "TIMELIMIT", kindPart, withPart(func(d []byte, p *model.Partition) []byte { return appendLimit(d, p.MaxTime) }), nil),
		mk('L', "defaulttime", "DEFAULTTIME", kindPart, withPart(func(d []byte, p *model.Partition) []byte { return appendLimit(d, p.DefaultTime) }), nil),
		mk('m', "memory", "MEMORY", kindNum, minPlus(memory, false, c), keyInt(memory)),
		mk('M', "preemptmode", "PREEMPT_MODE", kindPart, fixed("OFF"), nil),
		mk('n', "nodehost", "HOSTNAMES", kindAgg, names(func(n *model.Node) string {
			if n.Hostname != "" {
				return n.Hostname
			}
			return n.Name
		}), nil),
		mk('N', "nodelist", "NODELIST", kindAgg, names(func(n *model.Node) string { return n.Name }), nil),
		mk('o', "nodeaddr", "NODE_ADDR", kindAgg, names(func(n *model.Node) string {
			if n.Addr != "" {
				return n.Addr
			}
			return n.Name
		}), nil),
		mk('O', "cpusload", "CPU_LOAD", kindAgg, fixed("N/A"), nil),
		mk('p', "prioritytier", "PRIO_TIER", kindPart, withPart(func(d []byte, p *model.Partition) []byte {
			return strconv.AppendInt(d, int64(p.PriorityTier), 10)
		}), nil),
		mk('P', "partition", "PARTITION", kindPart, withPart(func(d []byte, p *model.Partition) []byte {
			d = append(d, p.Name...)
			if p.Default {
				d = append(d, '*')
			}
			return d
		}), nil),
		mk('r', "root", "ROOT", kindPart, fixed("no"), nil),
		mk('R', "partitionname", "PARTITION", kindPart, withPart(func(d []byte, p *model.Partition) []byte { return append(d, partName(p)...) }), nil),
		mk('s', "size", "JOB_SIZE", kindPart, withPart(func(d []byte, p *model.Partition) []byte { return appendSize(d, p, c) }), nil),
		mk('S', "allocnodes", "ALLOCNODES", kindPart, fixed("all"), nil),
		mk('t', "statecompact", "STATE", kindKey, withNode(str(stateShort)), stateLong),
		mk('T', "statelong", "STATE", kindKey, withNode(str(stateLong)), stateLong),
		mk('u', "user", "USER", kindKey, func(d []byte, g *group) []byte {
			if n := g.first(); n != nil {
				return append(d, c.userName(n)...)
			}
			return append(d, "Unknown"...)
		}, c.userName),
		mk('U', "userlong", "USER", kindKey, func(d []byte, g *group) []byte {
			n := g.first()
			if n == nil || n.Reason == "" && n.ReasonTime == 0 {
				return append(d, "Unknown"...)
			}
			d = append(d, c.userName(n)...)
			d = append(d, '(')
			d = strconv.AppendUint(d, uint64(n.ReasonUID), 10)
			return append(d, ')')
		}, c.userName),
		mk('v', "version", "VERSION", kindKey, withNode(str(func(n *model.Node) string {
			if n.Version == "" {
				return "N/A"
			}
			return n.Version
		})), func(n *model.Node) string { return n.Version }),
		mk('V', "cluster", "CLUSTER", kindAgg, fixed("N/A"), nil),
		mk('w', "weight", "WEIGHT", kindNum, minPlus(weight, false, c), keyInt(weight)),
		mk('X', "sockets", "SOCKETS", kindNum, minPlus(sockets, true, c), keyInt(sockets)),
		mk('Y', "cores", "CORES", kindNum, minPlus(cores, true, c), keyInt(cores)),
		mk('Z', "threads", "THREADS", kindNum, minPlus(threads, true, c), keyInt(threads)),
		mk('z', "socketcorethread", "S:C:T", kindNum, func(d []byte, g *group) []byte {
			d = minPlus(sockets, true, c)(d, g)
			d = append(d, ':')
			d = minPlus(cores, true, c)(d, g)
			d = append(d, ':')
			return minPlus(threads, true, c)(d, g)
		}, sct),
		// -O only.
		mk(0, "allocmem", "ALLOCMEM", kindKey, func(d []byte, g *group) []byte {
			if n := g.first(); n != nil {
				return strconv.AppendInt(d, n.AllocMem, 10)
			}
			return append(d, '0')
		}, keyInt(func(n *model.Node) int64 { return n.AllocMem })),
		mk(0, "comment", "COMMENT", kindAgg, fixed("(null)"), nil),
		mk(0, "extra", "EXTRA", kindAgg, fixed("(null)"), nil),
		mk(0, "gresused", "GRES_USED", kindKey, withNode(str(gresUsed)), gresUsed),
		mk(0, "statecomplete", "STATECOMPLETE", kindKey, withNode(str(stateComplete)), stateComplete),
	}
	for i := range list {
		switch list[i].Letter {
		case 'P', 'R':
			list[i].MinAuto = 9
		case 'N', 'n', 'o':
			list[i].MinAuto, list[i].NoTruncate = 9, true
		}
	}
	return list
}
