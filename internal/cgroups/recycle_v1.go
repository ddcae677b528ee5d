package cgroups

import (
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
)

// On v1 a job's groups are kept for a later job instead of being removed,
// when nothing of the job is left in them. Making and removing a v1 group
// is the kernel's dearest part of a short job: each directory's interface
// files are created and removed, per-CPU counters allocated and freed,
// and the group's end runs later in kernel workers (a 2,000-task array of
// `true` drained at ~2x the rate with cgroups off here, bench/README.md).
// A v1 group directory can be renamed within its parent, which costs a
// few microseconds: an emptied job tree stays where it is, in a pool, and
// the next job whose limits set the same things renames it to its own
// name and writes its own values over those limits. (A job made again
// under the same name, a requeued one, takes its own tree back.)
//
// What must not carry over from one job to the next, and how it does not:
//   - processes: kept only when the job's freezer group (where the batch
//     step's processes and every step's group are) holds no thread and
//     has no sub-group but the batch step's (Recycle);
//   - counters read as the job's or its batch step's use: CPU time is set
//     to zero, the memory high-water mark to the current use, which must
//     be small (recycleMaxBytes: what the kernel still counts for freed
//     kernel objects and cached pages); a group that counted an OOM kill
//     (a counter that cannot be reset) is removed instead;
//   - limits: the pool is keyed by what the job's limits set
//     (recycleKey), so every limit a kept tree has is written again by
//     the next Create; devices and pids groups, whose rules cannot be
//     written back, are never kept;
//   - a frozen state: the freezer group is thawed before it is kept.
// A kept tree keeps its job's name: an agent that starts removes it with
// the other groups of jobs it does not run; one that stops drops its pool
// (DropRecycled). v2 groups cannot be renamed: removed as before.

const (
	// recyclePoolSize bounds the kept trees of one node.
	recyclePoolSize = 64
	// recycleMaxBytes: a tree whose job group still counts more memory
	// (cached pages the job's files left) is removed: the next job would
	// see it in its use and its limit.
	recycleMaxBytes = 1 << 20
	// batchStepName is the one sub-group a kept tree may hold.
	batchStepName = "step_batch"
)

// Recycler is a group that can be kept for a later job instead of being
// removed: Recycle reports whether it was (its Group must not be used
// afterwards); false leaves it as it was, for Delete.
type Recycler interface {
	Recycle() bool
}

type recycled struct {
	name string
	own  []bool // per mount: the tree has a directory there
	lim  Limits // the limits its directories have
}

type recyclePool struct {
	mu    sync.Mutex
	trees map[string][]recycled // recycleKey → kept trees
	n     int
}

// recycleKey is what a group's limits set, with where it has its own
// directories: two groups with the same key have the same files written
// by Create.
func recycleKey(own []bool, l Limits) string {
	var b strings.Builder
	for _, o := range own {
		if o {
			b.WriteByte('1')
		} else {
			b.WriteByte('0')
		}
	}
	for _, set := range []bool{l.CPUs != "", l.Mems != "", l.MemoryBytes > 0, l.MemSwapBytes > 0, len(l.DenyDevices) > 0, l.PidsMax > 0} {
		if set {
			b.WriteByte('+')
		} else {
			b.WriteByte('-')
		}
	}
	return b.String()
}

// takeRecycled puts a kept tree at rel (a top-level group with limits l)
// when one of the same key is kept, and returns the key of rel's group
// and the limits the tree has (nil: none taken). Create's mkdirs then
// find rel's directories (or make them when none was kept); renamed: the
// tree was just renamed to rel, so rel's own directories are known to be
// there (Create makes none). The pool's lock is held through the renames: a group made
// meanwhile under the name of the tree being renamed (a requeued job)
// finds it either still kept under that name or gone.
func (m *v1Manager) takeRecycled(rel string, l Limits) (key string, kept *Limits, renamed bool) {
	// A top-level group has its own directory wherever it cannot be
	// left to the node's (Create).
	own := make([]bool, len(m.dirs))
	for i, mt := range m.dirs {
		own[i] = !m.shareable(mt, l)
	}
	key = recycleKey(own, l)
	p := &m.pool
	p.mu.Lock()
	defer p.mu.Unlock()
	for k, ts := range p.trees {
		if i := slices.IndexFunc(ts, func(t recycled) bool { return t.name == rel }); i >= 0 {
			// Its own tree (made again under its name): taken back as it
			// is when its limits set the same things, else removed.
			t := ts[i]
			p.trees[k] = slices.Delete(ts, i, i+1)
			p.n--
			if k != key {
				m.removeKept(rel)
				return key, nil, false
			}
			return key, &t.lim, false
		}
	}
	ts := p.trees[key]
	if len(ts) == 0 {
		return key, nil, false
	}
	t := ts[len(ts)-1]
	p.trees[key] = ts[:len(ts)-1]
	p.n--
	if !m.renameTree(t.name, rel, own) {
		m.removeKept(t.name)
		return key, nil, false
	}
	return key, &t.lim, true
}

// changedLimits is what Create writes over a kept tree that has kept's
// limits to give it l's: the limits that differ (all of l when nothing
// was kept). The key says both set the same things.
func changedLimits(kept *Limits, l Limits) Limits {
	if kept == nil {
		return l
	}
	d := l
	if d.CPUs == kept.CPUs {
		d.CPUs = ""
	}
	if d.Mems == kept.Mems {
		d.Mems = ""
	}
	if d.MemoryBytes == kept.MemoryBytes && d.MemSwapBytes == kept.MemSwapBytes {
		d.MemoryBytes, d.MemSwapBytes = 0, 0
	}
	return d
}

// mergeLimits is what a group has after l was written over had.
func mergeLimits(had, l Limits) Limits {
	if l.CPUs != "" {
		had.CPUs = l.CPUs
	}
	if l.Mems != "" {
		had.Mems = l.Mems
	}
	if l.MemoryBytes > 0 {
		had.MemoryBytes, had.MemSwapBytes = l.MemoryBytes, l.MemSwapBytes
	}
	if l.PidsMax > 0 {
		had.PidsMax = l.PidsMax
	}
	had.DenyDevices = append(had.DenyDevices, l.DenyDevices...)
	return had
}

// renameTree renames the top-level group from to to in every hierarchy
// where own says it has a directory, all or none (a rename that fails is
// undone, so that a half-moved tree is never used). rename(2) itself, not
// os.Rename: that one first looks the new name up (to refuse a directory
// there), a lookup of a missing name in cgroupfs that cost as much as the
// rename; cgroupfs refuses an existing name itself (EEXIST).
func (m *v1Manager) renameTree(from, to string, own []bool) bool {
	for i, mt := range m.dirs {
		if !own[i] {
			continue
		}
		top := filepath.Join(mt, m.root)
		if err := rename(filepath.Join(top, from), filepath.Join(top, to)); err != nil {
			for j := range i {
				if own[j] {
					t := filepath.Join(m.dirs[j], m.root)
					_ = rename(filepath.Join(t, to), filepath.Join(t, from))
				}
			}
			return false
		}
	}
	return true
}

// rename is rename(2), retried on EINTR.
func rename(from, to string) error {
	for {
		err := syscall.Rename(from, to)
		if err != syscall.EINTR {
			return err
		}
	}
}

// removeKept removes a kept tree's directories (empty: nothing to kill).
func (m *v1Manager) removeKept(name string) {
	for _, mt := range m.dirs {
		d := filepath.Join(mt, m.root, name)
		_ = syscall.Rmdir(filepath.Join(d, batchStepName))
		_ = syscall.Rmdir(d)
	}
}

// RecycleDropper is a manager that keeps emptied groups (v1): DropRecycled
// removes them, for an agent that stops (a later one would remove them
// as groups of jobs it does not run, but a node may see none).
type RecycleDropper interface {
	DropRecycled()
}

// DropRecycled removes every kept tree; trees kept after it are kept as
// before.
func (m *v1Manager) DropRecycled() {
	m.pool.mu.Lock()
	var names []string
	for _, ts := range m.pool.trees {
		for _, t := range ts {
			names = append(names, t.name)
		}
	}
	clear(m.pool.trees)
	m.pool.n = 0
	m.pool.mu.Unlock()
	for _, n := range names {
		m.removeKept(n)
	}
}

// Recycle keeps the job's tree (g, a top-level group, with its batch
// step's group) for a later Create, as the comment above says, or
// reports false having changed nothing that matters (it may have reset
// the counters and thawed the freezer of an empty tree).
func (g *v1Group) Recycle() bool {
	m := g.m
	if strings.Contains(g.rel, "/") || g.own == nil || g.key == "" {
		return false
	}
	m.pool.mu.Lock()
	full := m.pool.n >= recyclePoolSize
	m.pool.mu.Unlock()
	if full {
		return false
	}
	// The checks and resets below read and write ~17 files in the job's
	// few directories: each opened relative to its directory's descriptor.
	var a at
	defer a.close()
	fz := g.ownDir("freezer")
	mem := g.ownDir("memory")
	if fz == "" || mem == "" {
		return false
	}
	fzStep := false // the batch step has a freezer directory of its own
	for i, mt := range m.dirs {
		if !g.own[i] {
			// A step with limits of its own there (some of the job's
			// GPUs: devices) made the job's directory: a renamed tree
			// would leave it under this job's name for good.
			if exists(filepath.Join(mt, m.root, g.rel), "") {
				return false
			}
			continue
		}
		for _, c := range m.ctls[mt] {
			if c == "devices" || c == "pids" {
				return false
			}
		}
		// Nothing below but the batch step's group, a leaf, and only
		// where a batch step has a directory of its own.
		dir := filepath.Join(mt, m.root, g.rel)
		var st syscall.Stat_t
		if a.stat(dir, &st) != nil {
			return false
		}
		subs := st.Nlink - 2
		if subs > 1 {
			return false
		}
		if subs == 1 {
			if m.shareable(mt, Limits{InParentFreezer: true}) {
				return false
			}
			if a.stat(filepath.Join(dir, batchStepName), &st) != nil || st.Nlink != 2 {
				return false
			}
			fzStep = fzStep || mt == m.ctl["freezer"]
		}
	}
	// Every process of the job is in its freezer group or below it: in
	// the batch step's group where the freezer shares its hierarchy with
	// memory (then the step cannot keep its processes in the job's
	// directory); no other sub-group (checked above). None is left if
	// these list no thread: tasks, not cgroup.procs, which kernels before
	// 5.3 leave a process out of once its leader thread exited while
	// other threads of it still run.
	for _, d := range []string{fz, filepath.Join(fz, batchStepName)} {
		if d != fz && !fzStep {
			continue
		}
		if b, err := a.readFile(d, "tasks"); err != nil || len(b) != 0 {
			return false
		}
	}
	step := filepath.Join(mem, batchStepName)
	hasStep := a.exists(step)
	if use, err := a.readInt(mem, "memory.usage_in_bytes"); err != nil || use > recycleMaxBytes {
		return false
	}
	for _, d := range []string{mem, step} {
		if d == step && !hasStep {
			continue
		}
		if oc, err := a.readKeyed(d, "memory.oom_control"); err != nil || oc["oom_kill"] != 0 {
			return false
		}
	}
	// From here on the tree is reset for its next job.
	if a.writeFile(fz, "freezer.state", "THAWED") != nil {
		return false
	}
	for _, d := range []string{mem, step} {
		if d == step && !hasStep {
			continue
		}
		if a.writeFile(d, "memory.max_usage_in_bytes", "0") != nil {
			return false
		}
	}
	if c := g.ownDir("cpuacct"); c != "" {
		for _, d := range []string{c, filepath.Join(c, batchStepName)} {
			if d != c && !a.exists(d) {
				continue
			}
			if a.writeFile(d, "cpuacct.usage", "0") != nil {
				return false
			}
		}
	}
	m.pool.mu.Lock()
	defer m.pool.mu.Unlock()
	if m.pool.n >= recyclePoolSize { // filled meanwhile: for Delete
		return false
	}
	if m.pool.trees == nil {
		m.pool.trees = map[string][]recycled{}
	}
	m.pool.trees[g.key] = append(m.pool.trees[g.key], recycled{name: g.rel, own: g.own, lim: g.lim})
	m.pool.n++
	return true
}
