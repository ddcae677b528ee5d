package slurmconf

import (
	"fmt"
	"strings"

	"github.com/drover-hpc/drover/internal/hostlist"
	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/units"
)

// nodeSpec is a NodeName line before expansion. The *Set flags record what
// was written, on this line or a DEFAULT line, because several defaults
// (CPUs, Sockets) are derived from what was left out.
type nodeSpec struct {
	addr, hostname, port string // hostlists, one entry or one per node

	cpus, boards, sockets, socketsPerBoard, cores, threads int

	cpusSet, socketsSet, socketsPerBoardSet bool
	topologySet, memorySet                  bool // anything CPU-shaped / RealMemory given

	realMemory, tmpDisk int64
	gres                string
	features            []string
	weight              int
	state, reason       string
}

func defaultNodeSpec() nodeSpec {
	return nodeSpec{boards: 1, cores: 1, threads: 1, realMemory: 1, weight: 1, state: "UNKNOWN"}
}

// nodeStates are the State values a NodeName line may carry.
var nodeStates = map[string]bool{"UNKNOWN": true, "IDLE": true, "DOWN": true, "DRAIN": true, "FUTURE": true, "CLOUD": true}

// maxCount bounds per-node hardware counts; Slurm stores them in 16 bits.
const maxCount = 65535

func (p *parser) nodeLine(pos Pos, pairs []pair) error {
	nameExpr := pairs[0].value
	if nameExpr == "" {
		return perr(pos.File, pos.Line, "NodeName without a name")
	}
	isDefault := strings.EqualFold(nameExpr, "DEFAULT")
	spec := p.nodeDef
	for _, kv := range pairs[1:] {
		if err := p.nodeKey(pos, &spec, kv); err != nil {
			return err
		}
	}
	if isDefault {
		p.nodeDef = spec
		return nil
	}
	names, err := hostlist.Expand(nameExpr)
	if err != nil {
		return perr(pos.File, pos.Line, fmt.Sprintf("NodeName: %v", err))
	}
	if len(names) == 0 {
		return perr(pos.File, pos.Line, "NodeName without a name")
	}
	if len(p.cfg.Nodes)+len(names) > maxTotalNodes {
		return perr(pos.File, pos.Line, fmt.Sprintf("more than %d nodes configured", maxTotalNodes))
	}
	perNode := func(key, expr string) ([]string, error) {
		if expr == "" {
			return nil, nil
		}
		vals, err := hostlist.Expand(expr)
		if err != nil {
			return nil, perr(pos.File, pos.Line, fmt.Sprintf("%s: %v", key, err))
		}
		if len(vals) != 1 && len(vals) != len(names) {
			return nil, perr(pos.File, pos.Line, fmt.Sprintf("%s lists %d values for %d nodes", key, len(vals), len(names)))
		}
		return vals, nil
	}
	addrs, err := perNode("NodeAddr", spec.addr)
	if err != nil {
		return err
	}
	hosts, err := perNode("NodeHostname", spec.hostname)
	if err != nil {
		return err
	}
	ports, err := perNode("Port", spec.port)
	if err != nil {
		return err
	}
	base, err := spec.derive()
	if err != nil {
		return perr(pos.File, pos.Line, err.Error())
	}
	base.Pos = pos
	for i, name := range names {
		if prev, dup := p.nodeIndex[name]; dup {
			return perr(pos.File, pos.Line, fmt.Sprintf("duplicate node name %q (first defined at %s)", name, p.cfg.Nodes[prev].Pos))
		}
		n := base
		n.Name = name
		n.Features = append([]string(nil), base.Features...)
		n.Hostname = pick(hosts, i, name)
		n.Addr = pick(addrs, i, n.Hostname)
		if len(ports) > 0 {
			port, err := parsePort(pick(ports, i, ""))
			if err != nil {
				return perr(pos.File, pos.Line, fmt.Sprintf("invalid Port %q", spec.port))
			}
			n.Port = port
		}
		p.nodeIndex[name] = len(p.cfg.Nodes)
		p.cfg.Nodes = append(p.cfg.Nodes, n)
	}
	return nil
}

// pick returns the i-th value, the only value, or def when there is none.
func pick(vals []string, i int, def string) string {
	switch len(vals) {
	case 0:
		return def
	case 1:
		return vals[0]
	}
	return vals[i]
}

func (p *parser) nodeKey(pos Pos, s *nodeSpec, kv pair) error {
	lower := strings.ToLower(kv.key)
	v := kv.value
	bad := func(want string) error {
		return perr(pos.File, pos.Line, fmt.Sprintf("invalid %s %q: want %s", kv.key, v, want))
	}
	count := func(dst *int, lo int64) error {
		n, err := parseInt(v, lo, maxCount)
		if err != nil {
			return bad(fmt.Sprintf("an integer from %d to %d", lo, maxCount))
		}
		*dst = n
		return nil
	}
	var err error
	switch lower {
	case "nodename":
		return perr(pos.File, pos.Line, "NodeName given twice on one line")
	case "nodeaddr":
		s.addr = v
	case "nodehostname":
		s.hostname = v
	case "port":
		s.port = v
	case "cpus", "procs":
		s.cpusSet, s.topologySet = true, true
		return count(&s.cpus, 1)
	case "boards":
		s.topologySet = true
		return count(&s.boards, 1)
	case "sockets":
		s.socketsSet, s.topologySet = true, true
		return count(&s.sockets, 1)
	case "socketsperboard":
		s.socketsPerBoardSet, s.topologySet = true, true
		return count(&s.socketsPerBoard, 1)
	case "corespersocket":
		s.topologySet = true
		return count(&s.cores, 1)
	case "threadspercore":
		s.topologySet = true
		return count(&s.threads, 1)
	case "realmemory", "tmpdisk":
		mib, err := units.ParseMemMiB(v)
		if err != nil {
			return bad("a size in MiB")
		}
		if lower == "realmemory" {
			s.realMemory, s.memorySet = mib, true
		} else {
			s.tmpDisk = mib
		}
	case "gres":
		if _, err := model.ParseGres(v); err != nil {
			return bad("a list of name[:type]:count, e.g. gpu:a100:4")
		}
		s.gres = v
	case "feature", "features":
		s.features = splitList(v)
	case "weight":
		if s.weight, err = parseInt(v, 0, 1<<31-1); err != nil {
			return bad("a non-negative integer")
		}
	case "state":
		st := strings.ToUpper(v)
		if !nodeStates[st] {
			return bad("UNKNOWN, IDLE, DOWN, DRAIN, FUTURE or CLOUD")
		}
		s.state = st
	case "reason":
		s.reason = v
	default:
		if !nodeKeys.has(lower) {
			p.unknown(pos, kv.key)
		}
	}
	return nil
}

// derive computes the values Slurm infers from what was given: total
// sockets from boards, sockets from CPUs, and CPUs from the topology.
func (s nodeSpec) derive() (NodeConf, error) {
	n := NodeConf{
		Boards: s.boards, CoresPerSocket: s.cores, ThreadsPerCore: s.threads,
		RealMemory: s.realMemory, TmpDisk: s.tmpDisk, Gres: s.gres, Features: s.features,
		Weight: s.weight, State: s.state, Reason: s.reason,
		DetectCPUs: !s.topologySet, DetectMemory: !s.memorySet,
	}
	perSocket := s.cores * s.threads
	switch {
	case s.socketsSet && s.socketsPerBoardSet:
		return n, fmt.Errorf("Sockets and SocketsPerBoard are mutually exclusive")
	case s.socketsPerBoardSet:
		n.Sockets = s.boards * s.socketsPerBoard
	case s.socketsSet:
		n.Sockets = s.sockets
	case s.cpusSet:
		// As in Slurm, a bare CPUs=8 reads as eight one-core sockets.
		n.Sockets = max(1, s.cpus/perSocket)
	default:
		n.Sockets = s.boards
	}
	n.CPUs = s.cpus
	if !s.cpusSet {
		n.CPUs = n.Sockets * perSocket
	}
	if n.CPUs > maxCount*16 {
		return n, fmt.Errorf("node topology gives %d CPUs, more than %d", n.CPUs, maxCount*16)
	}
	return n, nil
}

// splitList splits a comma list, dropping empty items; nil when empty.
func splitList(v string) []string {
	var out []string
	for _, f := range strings.Split(v, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// downLine is a DownNodes line, applied once every node is known.
type downLine struct {
	pos                 Pos
	expr, state, reason string
}

var downStates = map[string]bool{"DOWN": true, "DRAIN": true, "FUTURE": true, "UNKNOWN": true}

func (p *parser) downNodesLine(pos Pos, pairs []pair) error {
	d := downLine{pos: pos, expr: pairs[0].value, state: "DOWN"}
	for _, kv := range pairs[1:] {
		switch lower := strings.ToLower(kv.key); lower {
		case "state":
			d.state = strings.ToUpper(kv.value)
			if !downStates[d.state] {
				return perr(pos.File, pos.Line, fmt.Sprintf("invalid DownNodes State %q: want DOWN, DRAIN, FUTURE or UNKNOWN", kv.value))
			}
		case "reason":
			d.reason = kv.value
		default:
			if !downNodesKeys.has(lower) {
				p.unknown(pos, kv.key)
			}
		}
	}
	p.downLines = append(p.downLines, d)
	return nil
}

func (p *parser) applyDownNodes() error {
	for _, d := range p.downLines {
		names, err := hostlist.Expand(d.expr)
		if err != nil {
			return perr(d.pos.File, d.pos.Line, fmt.Sprintf("DownNodes: %v", err))
		}
		for _, name := range names {
			i, ok := p.nodeIndex[name]
			if !ok {
				return perr(d.pos.File, d.pos.Line, fmt.Sprintf("DownNodes: unknown node %q", name))
			}
			p.cfg.Nodes[i].State = d.state
			if d.reason != "" {
				p.cfg.Nodes[i].Reason = d.reason
			}
		}
	}
	return nil
}

// nodeSetLine is a NodeSet line: a name for a group of nodes that
// partitions can use in Nodes=.
type nodeSetLine struct {
	pos            Pos
	nodes, feature string
	resolved       []string
}

func (p *parser) nodeSetLine(pos Pos, pairs []pair) error {
	ns := &nodeSetLine{pos: pos}
	name := pairs[0].value
	if name == "" || strings.ContainsAny(name, "[],") {
		return perr(pos.File, pos.Line, fmt.Sprintf("invalid NodeSet name %q", name))
	}
	if prev, dup := p.nodeSets[name]; dup {
		return perr(pos.File, pos.Line, fmt.Sprintf("duplicate NodeSet %q (first defined at %s)", name, prev.pos))
	}
	for _, kv := range pairs[1:] {
		switch lower := strings.ToLower(kv.key); lower {
		case "nodes":
			ns.nodes = kv.value
		case "feature":
			ns.feature = kv.value
		default:
			if !nodeSetKeys.has(lower) {
				p.unknown(pos, kv.key)
			}
		}
	}
	if ns.nodes == "" && ns.feature == "" {
		return perr(pos.File, pos.Line, "NodeSet needs Nodes= or Feature=")
	}
	p.nodeSets[name] = ns
	return nil
}

func (p *parser) resolveNodeSets() error {
	for _, ns := range p.nodeSets {
		seen := map[string]bool{}
		if ns.nodes != "" {
			names, err := p.expandNodes(ns.pos, ns.nodes, false)
			if err != nil {
				return err
			}
			for _, n := range names {
				seen[n] = true
			}
		}
		for _, n := range p.cfg.Nodes {
			if ns.feature != "" && hasString(n.Features, ns.feature) {
				seen[n.Name] = true
			}
		}
		for _, n := range p.cfg.Nodes { // config order, not map order
			if seen[n.Name] {
				ns.resolved = append(ns.resolved, n.Name)
			}
		}
	}
	return nil
}

// expandNodes expands a Nodes= value: ALL, node set names (when allowed)
// and hostlists, checking that every node exists. The result keeps config
// order of first mention and has no duplicates.
func (p *parser) expandNodes(pos Pos, expr string, sets bool) ([]string, error) {
	if strings.EqualFold(expr, "ALL") {
		out := make([]string, len(p.cfg.Nodes))
		for i, n := range p.cfg.Nodes {
			out[i] = n.Name
		}
		return out, nil
	}
	var out []string
	seen := map[string]bool{}
	add := func(n string) {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	for _, term := range splitTerms(expr) {
		if ns, ok := p.nodeSets[term]; ok && sets {
			for _, n := range ns.resolved {
				add(n)
			}
			continue
		}
		names, err := hostlist.Expand(term)
		if err != nil {
			return nil, perr(pos.File, pos.Line, fmt.Sprintf("Nodes: %v", err))
		}
		for _, n := range names {
			if _, ok := p.nodeIndex[n]; !ok {
				return nil, perr(pos.File, pos.Line, fmt.Sprintf("Nodes: unknown node %q", n))
			}
			add(n)
		}
	}
	return out, nil
}

// splitTerms splits a hostlist at commas outside brackets, so that node set
// names can be told apart from host terms.
func splitTerms(expr string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i <= len(expr); i++ {
		if i == len(expr) || expr[i] == ',' && depth == 0 {
			if t := strings.TrimSpace(expr[start:i]); t != "" {
				out = append(out, t)
			}
			start = i + 1
			continue
		}
		switch expr[i] {
		case '[':
			depth++
		case ']':
			depth--
		}
	}
	return out
}

func hasString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
