package sched

// A new level's bounds from other shapes (bfbounds.go).
//
// Levels are made as jobs ask for them, and a queue reaches each shape's
// long limits first (short jobs backfill now, long ones wait), so most
// levels are made below every level of their shape: they start at 0 on
// every node, and the first job reading one searches every node of the
// partition (174 k of the 665 k node searches of the unbounded 10k x 50k
// pass). A shape that needs no more of a node than another, in every
// resource, cannot start on it later than the other at a limit no longer:
// every instant the more demanding shape fits at, the lesser one fits at
// too. So a new level starts from the bounds of the less demanding
// shapes' levels at or below its limit, where they are higher than its
// own.

// nodeNeed is what a shape needs of one node to hold its smallest share
// (nodeEarliest's test), when that does not depend on the node: cpus,
// memory (MiB) and GPUs of type gpuType ("" any).
type nodeNeed struct {
	cpus, gpus int
	mem        int64
	gpuType    string
}

// need is k's nodeNeed; ok is false for the shapes whose need depends on
// the node (whole-node memory, --exclusive), which take no part.
func (k *boundKey) need() (n nodeNeed, ok bool) {
	r := &k.r
	if r.exclusive || r.mem == memWholeNode {
		return n, false
	}
	t := k.unit
	if r.pack {
		t = 1
	}
	n.cpus, n.gpus, n.gpuType = r.cpusOn(t, 0), r.gpusOn(t), r.gpuType
	if !r.hasGPU() {
		n.gpus = 0
	}
	switch {
	case r.pack && r.mem == memPerCPU:
		n.mem = r.memVal * int64(r.cpt) // capTasks' test for one task
	case r.pack && r.mem == memPerGPU:
		n.mem = r.memVal * int64(n.gpus)
	default:
		n.mem = r.memOnG(n.cpus, n.gpus, 0)
	}
	return n, true
}

// within reports whether a shape needing n fits wherever one needing m
// does.
func (n nodeNeed) within(m nodeNeed) bool {
	return n.cpus <= m.cpus && n.mem <= m.mem && n.gpus <= m.gpus &&
		(n.gpus == 0 || n.gpuType == "" || n.gpuType == m.gpuType)
}

// seedBounds raises the leaves of t, a new level of shape k at limit lv,
// to the bounds of every less demanding shape of the same partition (and
// reservation) at its highest level at or below lv, and reports whether
// it raised any (the tree above them is then to be rebuilt).
func (c *cluster) seedBounds(k *boundKey, lv int64, t []boundVal) bool {
	m, ok := k.need()
	if !ok || plainSearch {
		return false
	}
	raised := false
	for k2, bs := range c.bounds {
		if k2 == *k || k2.ps != k.ps || k2.r.resv != k.r.resv {
			continue
		}
		if n, ok := k2.need(); !ok || !n.within(m) {
			continue
		}
		var src *boundLevel
		for _, l := range bs.levels {
			if l.limit <= lv {
				src = l
			}
		}
		if src == nil {
			continue
		}
		for pos, b := range src.t[:len(k.ps.order)] {
			if b > t[pos] {
				t[pos], raised = b, true
			}
		}
	}
	return raised
}
