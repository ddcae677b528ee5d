package sched

import (
	"slices"

	"github.com/drover-hpc/drover/internal/model"
)

// Scratch is memory a caller that runs pass after pass lends to them: each
// pass takes over the arrays of the one before (per-node free counts,
// partition trees, the backfill profile's per-node lists and steps, the
// plan's maps and node lists) instead of allocating its own. The
// simulator runs tens of thousands of passes over the same nodes, and
// building those afresh was two thirds of the bytes a replay allocated
// (with the page clearing and collections that come with them, a fifth
// of its CPU time).
//
// Memory is carried over, and of what a pass found out only the shape
// verdicts, which depend on configuration alone and are dropped when it
// changes: every field of the pass's structures starts from its zero
// value or is set as a fresh pass sets it, and the arrays taken over are
// cleared or fully written before they are read. So a pass with a
// Scratch returns what Schedule returns (TestScratchPlans compares them,
// configuration changing between passes). The Plan it returns,
// though, shares memory with the Scratch: it is valid until the next
// pass run with the same Scratch, and a caller that keeps any of it
// longer (a start's Alloc, a StartNodes list) copies it. A Scratch is
// for one goroutine at a time; the zero value is ready to use.
type Scratch struct {
	c  *cluster // the last pass's, whose arrays the next one takes
	bf *profile
	// shapes are the empty-cluster verdicts (feasible.go), kept from
	// pass to pass while the nodes and partitions they were found on
	// stay as nodeCfg and partCfg recorded them (cfgSame: the partitions'
	// placement orders were kept too); dirty: a pass planned around
	// reservations, whose narrowed partitions are its own.
	shapes  map[shapeKey]string
	nodeCfg []nodeConfig
	partCfg map[string]partConfig
	cfgSame bool
	dirty   bool
	// The last plan's Starts, Reasons, StartTimes, StartNodes and
	// PlannedNodes, emptied for the next plan.
	starts       []Start
	reasons      map[model.JobID]string
	startTimes   map[model.JobID]int64
	startNodes   map[model.JobID][]string
	plannedNodes map[string]bool
	// order's arrays: the jobs with their keys, and in order.
	entries []orderEntry
	order   []*model.Job
	sorted  []orderEntry // radixOrder's second array
	// allocs and names are the first slabs of a pass's Starts' Alloc
	// lists and StartNodes' names (cutSlab), handed to every pass again.
	allocs []model.NodeAlloc
	names  []string
}

// reuse returns old[:n] cleared when it has room for n, else a new slice.
func reuse[E any](old []E, n int) []E {
	if cap(old) < n {
		return make([]E, n)
	}
	old = old[:n]
	clear(old)
	return old
}

// newPlan is the pass's empty Plan, its Reasons map hinted for n jobs;
// with a Scratch, Starts and Reasons are the last plan's, emptied.
func (sc *Scratch) newPlan(n int) *Plan {
	if sc == nil {
		return &Plan{Reasons: make(map[model.JobID]string, n)}
	}
	if sc.reasons == nil {
		sc.reasons = make(map[model.JobID]string, n)
	}
	clear(sc.reasons)
	clear(sc.starts)
	return &Plan{Starts: sc.starts[:0], Reasons: sc.reasons}
}

// plannedMaps gives the plan its StartTimes and StartNodes maps (sized
// for hint reservations) at its first reservation, and with planned its
// PlannedNodes: a plan that makes none keeps nil maps there, with or
// without a Scratch. With one they are the last plan's, emptied.
func (s *scheduler) plannedMaps(hint, nodes int, planned bool) {
	p, sc := s.plan, s.sc
	if p.StartTimes == nil {
		if sc == nil || sc.startTimes == nil {
			p.StartTimes = make(map[model.JobID]int64, hint)
			p.StartNodes = make(map[model.JobID][]string, hint)
		} else {
			p.StartTimes, p.StartNodes = sc.startTimes, sc.startNodes
			clear(p.StartTimes)
			clear(p.StartNodes)
		}
		if sc != nil {
			sc.startTimes, sc.startNodes = p.StartTimes, p.StartNodes
		}
	}
	if planned && p.PlannedNodes == nil {
		if sc == nil || sc.plannedNodes == nil {
			p.PlannedNodes = make(map[string]bool, min(hint, nodes))
		} else {
			p.PlannedNodes = sc.plannedNodes
			clear(p.PlannedNodes)
		}
		if sc != nil {
			sc.plannedNodes = p.PlannedNodes
		}
	}
}

// begin hands the pass s its slabs and shapes map from sc (nil: none).
func (sc *Scratch) begin(s *scheduler) {
	if sc == nil {
		s.shapes = make(map[shapeKey]string)
		return
	}
	if sc.shapes == nil {
		sc.shapes = make(map[shapeKey]string)
		sc.allocs = make([]model.NodeAlloc, 1024)
		sc.names = make([]string, 1024)
	}
	if sc.dirty || !sc.cfgSame {
		clear(sc.shapes)
	}
	sc.dirty = len(s.in.Reservations) > 0
	s.shapes, s.allocSlab, s.nameSlab = sc.shapes, sc.allocs, sc.names
}

// nodeConfig is a node as the empty-cluster verdicts see it: every field
// of model.Node but those that change as jobs come and go (allocations)
// and the ones only shown to users (TestNodeConfigFields keeps the list
// whole as Node grows).
type nodeConfig struct {
	name, addr, hostname, gres    string
	cpus, sockets, cores, threads int
	weight                        int
	mem                           int64
	detectCPUs, detectMem         bool
	state                         model.NodeState
	drain, invalidReg, responding bool
	features                      []string
	gpus                          []model.GPU
}

// partConfig is a partition as the last pass saw it: the same Partition,
// with these nodes.
type partConfig struct {
	p     *model.Partition
	nodes []string
}

func (nc *nodeConfig) equal(n *model.Node) bool {
	return nc.name == n.Name && nc.addr == n.Addr && nc.hostname == n.Hostname && nc.gres == n.Gres &&
		nc.cpus == n.CPUs && nc.sockets == n.Sockets && nc.cores == n.Cores && nc.threads == n.Threads &&
		nc.weight == n.Weight && nc.mem == n.Memory && nc.detectCPUs == n.DetectCPUs && nc.detectMem == n.DetectMemory &&
		nc.state == n.State && nc.drain == n.Drain && nc.invalidReg == n.InvalidReg && nc.responding == n.Responding &&
		slices.Equal(nc.features, n.Features) && slices.Equal(nc.gpus, n.GPUs)
}

func configOf(n *model.Node) nodeConfig {
	return nodeConfig{name: n.Name, addr: n.Addr, hostname: n.Hostname, gres: n.Gres,
		cpus: n.CPUs, sockets: n.Sockets, cores: n.Cores, threads: n.Threads, weight: n.Weight, mem: n.Memory,
		detectCPUs: n.DetectCPUs, detectMem: n.DetectMemory, state: n.State, drain: n.Drain,
		invalidReg: n.InvalidReg, responding: n.Responding,
		features: slices.Clone(n.Features), gpus: slices.Clone(n.GPUs)}
}

// sameNodes reports whether nodes are configured as nodeCfg recorded,
// and records them when they are not. The verdicts read nodes'
// configuration and partitions' placement orders only, never what is
// allocated: a replay's passes share them all.
func (sc *Scratch) sameNodes(nodes []*model.Node) bool {
	same := len(sc.nodeCfg) == len(nodes)
	for i := 0; same && i < len(nodes); i++ {
		same = sc.nodeCfg[i].equal(nodes[i])
	}
	if !same {
		sc.nodeCfg = sc.nodeCfg[:0]
		for _, n := range nodes {
			sc.nodeCfg = append(sc.nodeCfg, configOf(n))
		}
	}
	return same
}

// end keeps what the pass s grew for the next one. A plan that starts
// nothing has nil Starts, as Schedule's has.
func (sc *Scratch) end(s *scheduler) {
	if sc == nil {
		return
	}
	sc.starts = s.plan.Starts
	if len(s.plan.Starts) == 0 {
		s.plan.Starts = nil
	}
}

// newCluster is newCluster with trees, in the arrays of the last pass's
// cluster.
func (sc *Scratch) newCluster(nodes []*model.Node, parts map[string]*model.Partition) *cluster {
	if sc == nil {
		return newCluster(nodes, parts, true)
	}
	nodesSame := sc.sameNodes(nodes)
	partsSame := nodesSame && len(sc.partCfg) == len(parts)
	// A partition keeps its placement order while it is the same
	// Partition with the same node list, over nodes of the same names
	// and weights.
	keep := func(name string, p *model.Partition) bool {
		pc, ok := sc.partCfg[name]
		k := nodesSame && ok && pc.p == p && slices.Equal(pc.nodes, p.Nodes)
		partsSame = partsSame && k
		return k
	}
	sc.c = buildCluster(sc.c, nodes, parts, true, keep)
	if !partsSame {
		sc.partCfg = make(map[string]partConfig, len(parts))
		for name, p := range parts {
			sc.partCfg[name] = partConfig{p, slices.Clone(p.Nodes)}
		}
	}
	sc.cfgSame = partsSame
	return sc.c
}

// newProfile is newProfile in the last pass's arrays: each node's
// releases, reservations and steps emptied, keeping their room.
func (sc *Scratch) newProfile(n int) *profile {
	if sc == nil || sc.bf == nil || len(sc.bf.rel) != n {
		p := newProfile(n)
		if sc != nil {
			sc.bf = p
		}
		return p
	}
	old := sc.bf
	p := &profile{rel: old.rel, res: old.res, steps: old.steps, planned: old.planned, perUser: old.perUser,
		newDeltas: old.newDeltas[:0], pack: packSearch{heap: old.pack.heap[:0], pos: old.pack.pos[:0]}}
	for i := range p.rel {
		p.rel[i], p.res[i] = p.rel[i][:0], p.res[i][:0]
		p.steps[i].unbuild()
	}
	clear(p.planned)
	clear(p.perUser)
	sc.bf = p
	return p
}

// orderBufs returns empty arrays for order's n entries and its result,
// the last pass's where sc has them.
func (sc *Scratch) orderBufs(n int) ([]orderEntry, []*model.Job) {
	if sc == nil || cap(sc.entries) < n {
		return make([]orderEntry, 0, n), make([]*model.Job, 0, n)
	}
	return sc.entries[:0], sc.order[:0]
}

// sortBuf returns an array of n entries for radixOrder, the last pass's
// where sc has one (its contents are overwritten before they are read).
func (sc *Scratch) sortBuf(n int) []orderEntry {
	if sc == nil || cap(sc.sorted) < n {
		buf := make([]orderEntry, n)
		if sc != nil {
			sc.sorted = buf
		}
		return buf
	}
	return sc.sorted[:n]
}

// keepSortBuf makes buf radixOrder's second array for the next pass.
func (sc *Scratch) keepSortBuf(buf []orderEntry) {
	if sc != nil {
		sc.sorted = buf
	}
}

// keepOrder keeps order's arrays for the next pass.
func (sc *Scratch) keepOrder(entries []orderEntry, order []*model.Job) {
	if sc != nil {
		sc.entries, sc.order = entries, order
	}
}
