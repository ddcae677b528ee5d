package sched

import (
	"slices"

	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/sched/features"
)

// cluster is the scheduler's private, mutable picture of the nodes for one
// Schedule call. Input nodes are never written: placing a job only changes
// the free counts here, so several jobs can share a node within one plan
// while the caller's snapshot stays intact.
type cluster struct {
	nodes  []*model.Node
	index  map[string]int32 // node name → position in nodes
	cpu    []int32          // free CPUs; -1 when the node takes no new work
	mem    []int64          // free memory, MiB
	member [][]membership   // per node: the partitions holding it
	parts  map[string]*partState
	free   int64  // free CPUs over usable nodes that are not held
	held   []bool // nodes held back for a higher-ordered waiting job
	// CPU ids and GPU indices given to jobs earlier in this plan, on top
	// of the nodes' AllocCores/AllocGPUs.
	cores []model.Bitmap
	gpus  []model.Bitmap
	// bf is the backfill profile (nil under sched/builtin); viewWindow
	// looks at what nodes offer over [winA, winB).
	bf         *profile
	winA, winB int64
	// The last node's offer over [winA, winB): placement asks for it
	// twice per node, once to find the node and once to take from it
	// (setWindow clears it).
	winNode int32
	winCPU  int
	winMem  int64
	// mask, while masked, is each node's entry in the job's mask
	// (bfsearch.go); touched the positions of the nodes it holds.
	mask     []maskEntry
	touched  []int32
	curEpoch uint32
	masked   bool
	// seen marks nodes already in the partition addPartition builds
	// (cleared after each); names are the nodes' names index was built
	// from, for the next pass's cluster (buildCluster), when it has one.
	seen  []bool
	names []string
	// featExc memoises, per --constraint expression, the sorted indices of
	// nodes that lack the features (nil entry: the expression is invalid).
	featExc  map[string][]int32
	bounds   map[boundKey]*boundSet // bfbounds.go
	levelIDs int32                  // the levels made so far in the pass (seenBound)
	job      bfJob                  // the job earliestBound masked for
	need     needMemo               // holdsFirst's last thresholds (bfsearch.go)
	tbuf     []int64                // scratch for nodeEarliest
	abuf     []avail                // scratch for earliestBound
	hbuf     []avail
	kbuf     []int32 // scratch for earliestBound: the nodes found within the cap
	wbuf     []pick  // scratch for viewWindow placements (newPicks)
	lbuf     []pick  // scratch for the other views' placements (newPicks)
	// resvBlk: per node, the reservation windows the backfill search
	// plans around; resvUse: the reservation the job being placed may
	// use, -1 none (resvplan.go).
	resvBlk    [][]resvBlock
	resvUse    int32
	resvShadow []bool // per reservation: the job may use its nodes all the same
}

type membership struct {
	part *partState
	pos  int32 // the node's position in part.order
}

// partState is one partition's placement order and running totals.
type partState struct {
	p     *model.Partition
	order []int32  // node indices, Weight ascending, then partition order
	tree  *segTree // over order; nil when built only for Feasible
	free  int64    // free CPUs on the partition's usable, unheld nodes
	// blocked: a job here could not start, so every lower-ordered job of
	// this partition waits behind it (reason Priority) and the partition's
	// nodes are held. heldNodes/heldFree count this partition's nodes held
	// by any blocked partition and their free CPUs: jobs of overlapping
	// partitions may still start, but only on nodes nobody waits for.
	blocked   bool
	heldNodes int
	heldFree  int64
}

// view selects which free counts placement sees: live ones (for starts,
// and, ignoring holds, to tell Priority from Resources) or every node
// empty (feasibility: could the job ever run, could it on usable nodes).
type view uint8

const (
	viewLive        view = iota // free now, held nodes excluded
	viewIgnoreHolds             // free now, as if no job waited
	viewEmptyUsable             // all idle, unusable nodes excluded
	viewEmptyAll                // all idle and usable
	viewWindow                  // free over [winA, winB), reservations counted
	// viewAvoid: free now, and on a node holding reservations only what
	// it offers over all of [winA, winB) (placeAvoiding).
	viewAvoid
)

// pick is one node of a placement; commit fills in the ids.
type pick struct {
	node   int32
	cpus   int
	mem    int64
	gpus   int
	cpuIDs model.Bitmap
	gpuIDs model.Bitmap
	// avoid: GPU indices commit must not choose (reserved by backfill
	// for a higher-ordered job during this job's time limit).
	avoid model.Bitmap
}

func newCluster(nodes []*model.Node, parts map[string]*model.Partition, trees bool) *cluster {
	return buildCluster(nil, nodes, parts, trees, nil)
}

// buildCluster is newCluster in the arrays of old, an earlier pass's
// cluster (nil: none; see Scratch): every field is set as a new
// cluster's would be. Where keep says a partition and the nodes are as
// they were for old, old's placement order for it is taken as is.
func buildCluster(old *cluster, nodes []*model.Node, parts map[string]*model.Partition, trees bool, keep func(string, *model.Partition) bool) *cluster {
	n := len(nodes)
	c := &cluster{nodes: nodes, parts: make(map[string]*partState, len(parts))}
	var oldParts map[string]*partState
	if old == nil {
		c.index = make(map[string]int32, n)
		c.cpu, c.mem, c.member = make([]int32, n), make([]int64, n), make([][]membership, n)
		c.held, c.cores, c.gpus, c.seen = make([]bool, n), make([]model.Bitmap, n), make([]model.Bitmap, n), make([]bool, n)
	} else {
		c.index = old.index
		c.cpu, c.mem = reuse(old.cpu, n), reuse(old.mem, n)
		c.held, c.cores, c.gpus, c.seen = reuse(old.held, n), reuse(old.cores, n), reuse(old.gpus, n), reuse(old.seen, n)
		// Each node's membership list keeps its room.
		c.member = slices.Grow(old.member[:0], n)[:n]
		for i := range c.member {
			c.member[i] = c.member[i][:0]
		}
		if old.mask != nil {
			c.mask = reuse(old.mask, n)
		}
		c.touched, c.abuf, c.hbuf, c.wbuf, c.lbuf = old.touched[:0], old.abuf[:0], old.hbuf[:0], old.wbuf[:0], old.lbuf[:0]
		oldParts = old.parts
	}
	if old == nil || !sameNames(old.names, nodes) {
		clear(c.index)
		for i, nd := range nodes {
			c.index[nd.Name] = int32(i)
		}
	}
	if old != nil {
		c.names = old.names[:0]
		for _, nd := range nodes {
			c.names = append(c.names, nd.Name)
		}
	}
	for i, nd := range nodes {
		c.cpu[i], c.mem[i] = -1, max(0, nd.Memory-nd.AllocMem)
		if nd.Usable() {
			c.cpu[i] = int32(max(0, nd.CPUs-nd.AllocCPUs))
			c.free += int64(c.cpu[i])
		}
	}
	// Visit partitions in name order so membership lists, and with them
	// everything derived, do not depend on map iteration order.
	names := make([]string, 0, len(parts))
	for name := range parts {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		p, prev := parts[name], oldParts[name]
		if keep != nil && keep(name, p) && prev != nil && prev.p == p {
			c.parts[name] = c.addPartitionOrder(p, trees, prev, prev.order)
			continue
		}
		c.parts[name] = c.addPartition(p, trees, prev)
	}
	return c
}

// sameNames reports whether nodes are named names, in order.
func sameNames(names []string, nodes []*model.Node) bool {
	if len(names) != len(nodes) {
		return false
	}
	for i, nd := range nodes {
		if nd.Name != names[i] {
			return false
		}
	}
	return true
}

// addPartition adds p's state, in the arrays of old (p's state in an
// earlier pass; nil: none) where they fit.
func (c *cluster) addPartition(p *model.Partition, trees bool, old *partState) *partState {
	var order []int32
	if old != nil {
		order = old.order[:0]
	}
	for _, name := range p.Nodes {
		if i, ok := c.index[name]; ok && !c.seen[i] {
			c.seen[i] = true
			order = append(order, i)
		}
	}
	for _, i := range order {
		c.seen[i] = false
	}
	// Lower Weight is preferred (slurm.conf); ties keep the partition's order.
	slices.SortStableFunc(order, func(a, b int32) int { return c.nodes[a].Weight - c.nodes[b].Weight })
	return c.addPartitionOrder(p, trees, old, order)
}

// addPartitionOrder is addPartition with the placement order given.
func (c *cluster) addPartitionOrder(p *model.Partition, trees bool, old *partState, order []int32) *partState {
	ps := &partState{p: p, order: order}
	for pos, i := range ps.order {
		c.member[i] = append(c.member[i], membership{ps, int32(pos)})
		if c.cpu[i] > 0 {
			ps.free += int64(c.cpu[i])
		}
	}
	if trees {
		if old != nil && old.tree != nil {
			ps.tree = old.tree.reset(len(ps.order))
		} else {
			ps.tree = newSegTree(len(ps.order))
		}
		for pos, i := range ps.order {
			ps.tree.setLeaf(pos, c.leaf(i))
		}
		ps.tree.build()
	}
	return ps
}

// leaf is a node's entry in the partition trees: what it offers now
// (viewLive), GPUs of any type counted.
func (c *cluster) leaf(i int32) leafVal {
	cpu := c.cpu[i]
	if cpu < 0 || c.held[i] {
		return leafVal{cpu: -1}
	}
	v := leafVal{cpu: cpu, mem: treeMem(c.mem[i])}
	if int(cpu) >= c.nodes[i].CPUs {
		v.idle = int32(c.nodes[i].CPUs)
	}
	if len(c.nodes[i].GPUs) > 0 {
		v.gpu = int32(c.freeGPU(viewLive, i, ""))
	}
	return v
}

// freeOn is what node i offers under view v; cpu < 0 means unusable.
func (c *cluster) freeOn(v view, i int32) (cpu int, mem int64) {
	n := c.nodes[i]
	switch v {
	case viewLive:
		if c.held[i] {
			return -1, 0
		}
		return int(c.cpu[i]), c.mem[i]
	case viewIgnoreHolds:
		return int(c.cpu[i]), c.mem[i]
	case viewAvoid:
		if c.held[i] {
			return -1, 0
		}
		if len(c.bf.res[i]) == 0 {
			return int(c.cpu[i]), c.mem[i]
		}
		cpu, mem := c.windowOnce(i)
		return max(cpu, 0), mem
	case viewWindow:
		if c.skipped(i) {
			return -1, 0
		}
		return c.windowOnce(i)
	case viewEmptyUsable:
		if !n.Usable() {
			return -1, 0
		}
	}
	return n.CPUs, n.Memory
}

// freeGPU is how many GPUs of type typ ("" = any) node i offers under
// view v; only asked for jobs that want GPUs.
func (c *cluster) freeGPU(v view, i int32, typ string) int {
	n := c.nodes[i]
	if len(n.GPUs) == 0 {
		return 0
	}
	if v == viewWindow {
		if c.skipped(i) {
			return 0
		}
		return c.windowGPUFree(i, c.winA, c.winB, typ)
	}
	if v == viewAvoid {
		if len(c.bf.res[i]) > 0 {
			return c.windowGPUFree(i, c.winA, c.winB, typ)
		}
		v = viewLive
	}
	live := v == viewLive || v == viewIgnoreHolds
	used := c.gpus[i]
	free := 0
	for k, g := range n.GPUs {
		if typ != "" && g.Type != typ {
			continue
		}
		if live && (n.AllocGPUs.Has(k) || used.Has(k)) {
			continue
		}
		free++
	}
	return free
}

// gpuFree is freeGPU when r wants GPUs, else 0 without looking.
func (c *cluster) gpuFree(v view, i int32, r *request) int {
	if !r.hasGPU() {
		return 0
	}
	return c.freeGPU(v, i, r.gpuType)
}

// next finds the first position >= from in ps.order that may satisfy the
// thresholds (minIdle > 0 asks for a node nobody uses; minGPU counts GPUs
// of any type, a bound for typed requests).
func (c *cluster) next(v view, ps *partState, from, minCPU, minIdle, minGPU int, minMem int64) int {
	if v == viewLive && ps.tree != nil {
		return ps.tree.first(from, leafVal{cpu: int32(minCPU), idle: int32(minIdle), gpu: int32(minGPU), mem: treeMem(minMem)})
	}
	if v == viewAvoid && ps.tree != nil {
		return c.nextAvoid(ps, from, minCPU, minIdle, minGPU, minMem) // backfill.go
	}
	if v == viewWindow && c.masked && ps == c.job.ps {
		return c.nextMasked(ps, from, minCPU, minIdle, minMem) // bfsearch.go
	}
	// Empty views are evaluated once per job shape (memoised), so a plain
	// scan is cheap enough and keeps the tree for the hot path only.
	for pos := from; pos < len(ps.order); pos++ {
		i := ps.order[pos]
		cpu, mem := c.freeOn(v, i)
		if cpu >= minCPU && mem >= minMem && (minIdle == 0 || cpu >= c.nodes[i].CPUs) {
			return pos
		}
	}
	return -1
}

// newPicks is an empty placement of capacity n. The reservation search
// tries many starts per job and keeps only the placement it books, which
// reserve copies, so viewWindow placements share one scratch array. The
// other views' placements are read before the next placement is asked
// for (start copies what it keeps into the plan's allocation), so they
// share a second one: a fresh array per placed job was a quarter of the
// bytes the main pass allocated.
func (c *cluster) newPicks(v view, n int) []pick {
	buf := c.picksBuf(v)
	if cap(*buf) < n {
		*buf = make([]pick, 0, n)
	}
	return (*buf)[:0]
}

func (c *cluster) picksBuf(v view) *[]pick {
	if v == viewWindow {
		return &c.wbuf
	}
	return &c.lbuf
}

// growPicks doubles a full placement's array and keeps the larger one as
// the view's scratch: a packed job on partly used nodes outgrows its
// hint, and growing past it was a fresh array per tried placement.
func (c *cluster) growPicks(v view, p []pick) []pick {
	g := make([]pick, len(p), 2*len(p)+1)
	copy(g, p)
	*c.picksBuf(v) = g[:0]
	return g
}

// place runs first-fit for r over ps under view v. req are node indices the
// job must get (placed first, in the order given); exc, sorted, it must
// not get. It changes nothing; commit applies the result.
func (c *cluster) place(v view, ps *partState, r *request, req, exc []int32) ([]pick, bool) {
	if r.pack {
		return c.placePack(v, ps, r, req, exc)
	}
	return c.placeFixed(v, ps, r, req, exc)
}

func (c *cluster) placePack(v view, ps *partState, r *request, req, exc []int32) ([]pick, bool) {
	remaining := r.tasks
	// Capacity for the usual case, nodes the size of the partition's
	// first: a 64-task job on one-CPU nodes would otherwise grow the
	// slice seven times per placement.
	hint := 1
	if len(ps.order) > 0 {
		hint = min(len(ps.order), ceilDiv(r.tasks*r.cpt, max(1, c.nodes[ps.order[0]].CPUs)))
	}
	picks := c.newPicks(v, hint)
	take := func(i int32) bool {
		cpu, mem := c.freeOn(v, i)
		n := c.nodes[i]
		t := r.capTasks(remaining, cpu, mem, c.gpuFree(v, i, r), n)
		if t == 0 {
			return false
		}
		cpus := r.cpusOn(t, n.CPUs)
		g := r.gpusOn(t)
		if len(picks) == cap(picks) {
			picks = c.growPicks(v, picks)
		}
		picks = append(picks, pick{node: i, cpus: cpus, mem: r.memOnG(cpus, g, n.Memory), gpus: g})
		remaining -= t
		return true
	}
	for _, i := range req {
		if remaining == 0 || !take(i) { // every named node must run a task
			return nil, false
		}
	}
	minIdle := 0
	if r.exclusive {
		minIdle = r.cpt
	}
	minMem := r.memThreshold(r.cpt)
	for pos := 0; remaining > 0; pos++ {
		if pos = c.next(v, ps, pos, r.cpt, minIdle, r.gpusOn(1), minMem); pos < 0 {
			return nil, false
		}
		i := ps.order[pos]
		if slices.Contains(req, i) || inSorted(exc, i) {
			continue
		}
		if r.maxNodes > 0 && len(picks) >= r.maxNodes {
			return c.placePackWidest(v, ps, r, req, exc)
		}
		take(i)
	}
	return picks, true
}

// placePackWidest is placePack for a request bounded in nodes whose
// first-fit ran out of nodes (it took nodes with room for a task or two
// ahead of ones that hold more): besides the named nodes, it takes those
// that hold the most tasks, as many as the bound leaves (ties in the
// partition's order), which hold the job if any allowed set does, and
// places the tasks on them in the partition's order.
func (c *cluster) placePackWidest(v view, ps *partState, r *request, req, exc []int32) ([]pick, bool) {
	remaining := r.tasks
	for _, i := range req {
		cpu, mem := c.freeOn(v, i)
		remaining -= r.capTasks(remaining, cpu, mem, c.gpuFree(v, i, r), c.nodes[i])
	}
	type cand struct {
		pos, tasks int
	}
	var cands []cand
	minIdle := 0
	if r.exclusive {
		minIdle = r.cpt
	}
	minMem := r.memThreshold(r.cpt)
	for pos := 0; remaining > 0; pos++ {
		if pos = c.next(v, ps, pos, r.cpt, minIdle, r.gpusOn(1), minMem); pos < 0 {
			break
		}
		i := ps.order[pos]
		if slices.Contains(req, i) || inSorted(exc, i) {
			continue
		}
		cpu, mem := c.freeOn(v, i)
		if t := r.capTasks(remaining, cpu, mem, c.gpuFree(v, i, r), c.nodes[i]); t > 0 {
			cands = append(cands, cand{pos, t})
		}
	}
	slices.SortStableFunc(cands, func(a, b cand) int { return b.tasks - a.tasks })
	cands = cands[:max(0, min(len(cands), r.maxNodes-len(req)))]
	sum := 0
	for _, x := range cands {
		sum += x.tasks
	}
	if remaining <= 0 || sum < remaining {
		return nil, false
	}
	slices.SortFunc(cands, func(a, b cand) int { return a.pos - b.pos })
	picks := c.newPicks(v, len(req)+len(cands))
	remaining = r.tasks
	for k := range len(req) + len(cands) {
		var i int32
		if k < len(req) {
			i = req[k]
		} else {
			i = ps.order[cands[k-len(req)].pos]
		}
		if remaining == 0 {
			break
		}
		cpu, mem := c.freeOn(v, i)
		n := c.nodes[i]
		t := r.capTasks(remaining, cpu, mem, c.gpuFree(v, i, r), n)
		cpus, g := r.cpusOn(t, n.CPUs), r.gpusOn(t)
		if len(picks) == cap(picks) {
			picks = c.growPicks(v, picks)
		}
		picks = append(picks, pick{node: i, cpus: cpus, mem: r.memOnG(cpus, g, n.Memory), gpus: g})
		remaining -= t
	}
	return picks, remaining == 0
}

func (c *cluster) placeFixed(v view, ps *partState, r *request, req, exc []int32) ([]pick, bool) {
	nBig, nSmall := r.nBig, r.nodes-r.nBig
	picks := c.newPicks(v, r.nodes)
	take := func(i int32) bool {
		cpu, mem := c.freeOn(v, i)
		n := c.nodes[i]
		gpu := c.gpuFree(v, i, r)
		if nBig > 0 {
			if cpus, m, ok := r.fits(r.big, cpu, mem, gpu, n.CPUs, n.Memory); ok {
				nBig--
				picks = append(picks, pick{node: i, cpus: cpus, mem: m, gpus: r.gpusOn(r.big)})
				return true
			}
		}
		if nSmall > 0 {
			if cpus, m, ok := r.fits(r.big-1, cpu, mem, gpu, n.CPUs, n.Memory); ok {
				nSmall--
				picks = append(picks, pick{node: i, cpus: cpus, mem: m, gpus: r.gpusOn(r.big - 1)})
				return true
			}
		}
		return false
	}
	for _, i := range req {
		if !take(i) {
			return nil, false
		}
	}
	for pos := 0; nBig+nSmall > 0; pos++ {
		t := r.big
		if nSmall > 0 {
			t = r.big - 1 // the smaller slot is the weaker filter
		}
		minIdle := 0
		if r.exclusive {
			minIdle = t * r.cpt
		}
		minGPU := 0
		if r.hasGPU() {
			minGPU = r.gpusOn(t)
		}
		if pos = c.next(v, ps, pos, t*r.cpt, minIdle, minGPU, r.memThreshold(t*r.cpt)); pos < 0 {
			return nil, false
		}
		i := ps.order[pos]
		if slices.Contains(req, i) || inSorted(exc, i) {
			continue
		}
		take(i)
	}
	return picks, true
}

// memThreshold is a lower bound on the free memory a node needs to take
// cpus CPUs of the job; whole-node requests are left to the exact check.
func (r *request) memThreshold(cpus int) int64 {
	if r.mem == memWholeNode {
		return 0
	}
	return r.memOn(cpus, 0)
}

// commit takes a placement's resources out of the free counts and
// chooses the CPU ids and GPU indices of each pick: the lowest free ones
// (of the requested GPU type).
func (c *cluster) commit(picks []pick, gpuType string) {
	for k := range picks {
		p := &picks[k]
		n := c.nodes[p.node]
		ids, ok := n.AllocCores.FirstFreeBesides(c.cores[p.node], p.cpus, n.CPUs, nil)
		if !ok {
			// The node's id map disagrees with its counts (state written
			// before ids were tracked): overlap rather than fail.
			ids, _ = c.cores[p.node].FirstFree(p.cpus, n.CPUs, nil)
		}
		p.cpuIDs = ids
		c.cores[p.node] = c.cores[p.node].AddTo(ids)
		if p.gpus > 0 {
			p.gpuIDs, _ = n.AllocGPUs.FirstFreeBesides(c.gpus[p.node].Or(p.avoid), p.gpus, len(n.GPUs), func(id int) bool {
				return gpuType == "" || n.GPUs[id].Type == gpuType
			})
			c.gpus[p.node] = c.gpus[p.node].AddTo(p.gpuIDs)
		}
	}
	for _, p := range picks {
		c.cpu[p.node] -= int32(p.cpus)
		c.mem[p.node] -= p.mem
		c.free -= int64(p.cpus)
		leaf := c.leaf(p.node)
		for _, m := range c.member[p.node] {
			m.part.free -= int64(p.cpus)
			if m.part.tree != nil {
				m.part.tree.update(int(m.pos), leaf)
			}
		}
	}
}

// block records that a job in ps could not start: lower-ordered jobs of
// ps wait behind it, and its candidate nodes (the partition's, less the
// job's exclusions) are held back from every lower-ordered job of any
// partition, as Slurm does, so nothing overtakes it. Backfill will refine
// this with reservations in time, letting jobs that end soon enough use
// held nodes.
func (c *cluster) block(ps *partState, exc []int32) {
	ps.blocked = true
	for _, i := range ps.order {
		if c.held[i] || inSorted(exc, i) {
			continue
		}
		c.held[i] = true
		free := int64(max(0, c.cpu[i]))
		c.free -= free
		for _, m := range c.member[i] {
			m.part.heldNodes++
			m.part.free -= free
			m.part.heldFree += free
			if m.part.tree != nil {
				m.part.tree.update(int(m.pos), leafVal{cpu: -1})
			}
		}
	}
}

func (c *cluster) inPart(i int32, ps *partState) bool {
	for _, m := range c.member[i] {
		if m.part == ps {
			return true
		}
	}
	return false
}

// resolve turns node names into indices: req in the order given, exc
// sorted and unique. ok is false when a required name is unknown or also
// excluded: no placement can satisfy such a job.
// Entries are literal names; hostlist expressions ("n[1-4]") are expected
// to be expanded by jobspec before they reach the scheduler.
func (c *cluster) resolve(reqNames, excNames []string) (req, exc []int32, ok bool) {
	ok = true
	for _, name := range reqNames {
		i, found := c.index[name]
		if !found {
			ok = false
			continue
		}
		if !slices.Contains(req, i) {
			req = append(req, i)
		}
	}
	for _, name := range excNames {
		if i, found := c.index[name]; found {
			exc = append(exc, i)
		}
	}
	slices.Sort(exc)
	exc = slices.Compact(exc)
	for _, i := range req {
		ok = ok && !inSorted(exc, i)
	}
	return req, exc, ok
}

// resolveSpec is resolve for a job's -w/-x plus its --constraint: nodes
// without the features join the excluded ones.
func (c *cluster) resolveSpec(spec *model.JobSpec) (req, exc []int32, ok bool) {
	req, exc, ok = c.resolve(spec.ReqNodes, spec.ExcNodes)
	if spec.Features == "" {
		return req, exc, ok
	}
	fx, known := c.featExc[spec.Features]
	if !known {
		if e, err := features.Parse(spec.Features); err == nil {
			fx = []int32{}
			for i, n := range c.nodes {
				if !e.Match(n.Features) {
					fx = append(fx, int32(i))
				}
			}
		}
		if c.featExc == nil {
			c.featExc = make(map[string][]int32)
		}
		c.featExc[spec.Features] = fx
	}
	if fx == nil {
		return req, exc, false
	}
	if len(fx) > 0 {
		exc = append(slices.Clone(fx), exc...)
		slices.Sort(exc)
		exc = slices.Compact(exc)
		for _, i := range req {
			ok = ok && !inSorted(fx, i)
		}
	}
	return req, exc, ok
}

func inSorted(s []int32, v int32) bool {
	if len(s) == 0 {
		return false
	}
	_, found := slices.BinarySearch(s, v)
	return found
}
