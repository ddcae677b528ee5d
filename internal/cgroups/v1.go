package cgroups

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// v1Controllers are the hierarchies a group lives in.
// (cpu is left out: Drover sets no CPU share or quota, and cpuacct
// accounts the time.)
var v1Controllers = []string{"cpuset", "cpuacct", "memory", "devices", "freezer", "pids"}

type v1Manager struct {
	root  string
	dirs  []string          // mount directories used, each once
	ctl   map[string]string // controller → mount directory
	cpuMt string            // the cpuset mount ("" if none)
	// ctls: mount directory → the controllers used there. Where every
	// one of them can be left to a group's parent (see shareable), the
	// group may keep its processes in its parent's directory.
	ctls map[string][]string
	// pool: emptied job groups kept for later jobs (recycle_v1.go).
	pool recyclePool

	once      sync.Once
	memswOnce sync.Once
	memsw     bool // memory.memsw.* exists (swap accounting on), seen in the first group limited
}

func newV1(ms []mount, root string) (*v1Manager, error) {
	root, err := cleanRel(root)
	if err != nil {
		return nil, err
	}
	m := &v1Manager{root: root, ctl: map[string]string{}}
	for _, c := range v1Controllers {
		for _, mt := range ms {
			if !mt.v2 && slices.Contains(mt.controllers, c) {
				m.ctl[c] = mt.dir
				if !slices.Contains(m.dirs, mt.dir) {
					m.dirs = append(m.dirs, mt.dir)
				}
				break
			}
		}
	}
	if m.ctl["memory"] == "" {
		return nil, errors.New("cgroups: no v1 memory hierarchy")
	}
	m.cpuMt = m.ctl["cpuset"]
	m.ctls = map[string][]string{}
	for c, d := range m.ctl {
		m.ctls[d] = append(m.ctls[d], c)
	}
	return m, nil
}

// setsIn: l sets a limit of controller c.
func (l Limits) setsIn(c string) bool {
	switch c {
	case "cpuset":
		return l.CPUs != "" || l.Mems != ""
	case "devices":
		return len(l.DenyDevices) > 0
	case "pids":
		return l.PidsMax > 0
	case "memory":
		return l.MemoryBytes > 0 || l.MemSwapBytes > 0
	}
	return false
}

// shareable: a group with limits l may keep its processes in its
// parent's directory of mount mt. cpuset and devices only confine
// (nothing is read or listed there): a group that sets none of their
// limits has its parent's. pids without pids.max confines nothing and
// only counts, which the group's own tracking directory does as well
// (Stats). The freezer is what a group is frozen and killed by: left to
// the parent only where the caller asked (Limits.InParentFreezer). Every
// other controller is read per group.
func (m *v1Manager) shareable(mt string, l Limits) bool {
	for _, c := range m.ctls[mt] {
		switch {
		case l.setsIn(c):
			return false
		case c == "cpuset" || c == "devices" || c == "pids":
		case c == "freezer" && l.InParentFreezer:
		default:
			return false
		}
	}
	return true
}

func (m *v1Manager) Layout() Layout { return LayoutV1 }

// Create makes the group's directory in each hierarchy, except where
// the group would only confine (cpuset, devices, pids) and l sets
// nothing there, or where l.InParentFreezer leaves the freezer to the
// parent (see shareable): its processes then go into its nearest
// ancestor's directory (a batch step has its job's CPUs and devices, and
// is frozen and killed with its job), which holds the same limits and
// saves a directory made, filled and removed per job. Such a group's
// Targets name the parent there; Delete still removes rel everywhere (a
// sub-group with limits of its own may have made it).
func (m *v1Manager) Create(rel string, l Limits) (Group, error) {
	return m.create(rel, l, nil)
}

// CreateChild is Create of parent's sub-group name (ChildMaker). Where the
// child lives in an ancestor's directory it takes parent's from what
// parent's Create found (parent's own directory, or the node's, which that
// Create made sure of) instead of looking for them again: a batch step's
// group made this way costs its own directories' mkdirs and nothing more.
// A parent not made by this manager's Create (one opened after a restart)
// is looked up as Create does.
func (m *v1Manager) CreateChild(parent Group, name string, l Limits) (Group, error) {
	pg, ok := parent.(*v1Group)
	if !ok || pg.m != m || len(pg.targets) != len(m.dirs) || strings.Contains(name, "/") {
		return m.Create(parent.Rel()+"/"+name, l)
	}
	return m.create(pg.rel+"/"+name, l, pg)
}

// create is Create; parent, when set, is rel's parent group (CreateChild).
func (m *v1Manager) create(rel string, l Limits, parent *v1Group) (Group, error) {
	rel, err := cleanRel(rel)
	if err != nil {
		return nil, err
	}
	if l.InParentFreezer && !strings.Contains(rel, "/") {
		// The node's freezer would be frozen and killed with it.
		return nil, errors.New("cgroups: " + rel + " has no parent group to share a freezer with")
	}
	key, kept, renamed := "", (*Limits)(nil), false
	if !strings.Contains(rel, "/") {
		// A job's group: one kept from an earlier job whose limits set the
		// same things, if there is one (recycle_v1.go). Renamed into place
		// just now, its own directories need no mkdir (each one that finds
		// its directory there is a failed mkdir, a path lookup in cgroupfs:
		// ~5% of the agent's CPU per short job). One taken back under its
		// own name is not known to be whole: the mkdirs below find or make.
		key, kept, renamed = m.takeRecycled(rel, l)
	}
	m.once.Do(m.init)
	g := &v1Group{m: m, rel: rel, targets: make([]string, 0, len(m.dirs)), own: make([]bool, 0, len(m.dirs))}
	// made: the directories this call made (each the topmost new one of
	// its hierarchy), removed again when it fails: a refused group must
	// leave nothing behind, nor bring back a parent torn down meanwhile
	// (nobody would remove that one: the node would keep it for months).
	var made []string
	fail := func(err error) (Group, error) {
		for i := len(made) - 1; i >= 0; i-- {
			_ = removeTree(made[i])
		}
		return nil, err
	}
	for i, mt := range m.dirs {
		top := filepath.Join(mt, m.root)
		dir := filepath.Join(top, rel)
		own := true
		if m.shareable(mt, l) {
			own = false
			// The nearest group above that has a directory here (a
			// step's job may share the node's too).
			if parent != nil {
				dir = parent.targets[i]
			} else {
				dir = filepath.Dir(dir)
				for strings.HasPrefix(dir, top+"/") && !exists(dir, "") {
					dir = filepath.Dir(dir)
				}
			}
			if l.InParentFreezer && slices.Contains(m.ctls[mt], "freezer") && dir != filepath.Dir(filepath.Join(top, rel)) {
				// The parent's freezer directory is gone (its job torn
				// down meanwhile): an ancestor's would leave these
				// processes out of the job's kill, which lists the job's
				// freezer group.
				return fail(errors.New("cgroups: the freezer group " + filepath.Dir(rel) + " to share is gone"))
			}
		}
		// An ancestor's directory just seen to exist (or made sure of by
		// parent's Create) needs no mkdir.
		if (own && !renamed) || (!own && dir == top && parent == nil) {
			nd, err := m.mkdir(mt, dir)
			if nd != "" {
				made = append(made, nd)
			}
			if err != nil {
				return fail(err)
			}
			if mt == m.ctl["memory"] && nd != "" && nd != dir && strings.HasPrefix(nd, top+"/") {
				// Every group has a memory directory of its own: this
				// one's parent is gone (its job torn down meanwhile).
				return fail(errors.New("cgroups: the group " + filepath.Dir(rel) + " is gone"))
			}
		}
		g.targets = append(g.targets, dir)
		g.own = append(g.own, own)
	}
	g.key = key
	if kept != nil {
		g.lim = *kept // the limits a kept tree has: those that differ are written
	}
	if err := g.Update(changedLimits(kept, l)); err != nil {
		_ = g.Delete()
		return nil, err
	}
	return g, nil
}

// init runs before the first group is made: it asks the kernel to give
// new cpusets below the node's their parent's CPUs and memory nodes
// (cgroup.clone_children, inherited by the groups made below), which
// saves mkdir two reads and two writes per cpuset; where that cannot be
// set, mkdir copies them.
func (m *v1Manager) init() {
	if m.cpuMt != "" {
		top := filepath.Join(m.cpuMt, m.root)
		if _, err := m.mkdir(m.cpuMt, top); err == nil {
			_ = writeFile(top, "cgroup.clone_children", "1")
		}
	}
}

// mkdir creates dir (and missing parents down from the mount mt). Only
// new directories cost more than one system call: a new cpuset has no
// CPUs and no memory nodes, so nothing could run in it until they are
// copied from its parent. made is the topmost directory it made ("" for
// none), for the caller to remove should it give up.
func (m *v1Manager) mkdir(mt, dir string) (made string, err error) {
	err = os.Mkdir(dir, 0o755)
	made = dir
	switch {
	case errors.Is(err, os.ErrExist):
		return "", nil
	case errors.Is(err, os.ErrNotExist) && dir != mt:
		up, err := m.mkdir(mt, filepath.Dir(dir))
		if err != nil {
			return up, err
		}
		if up != "" {
			made = up
		}
		if err := os.Mkdir(dir, 0o755); err != nil {
			if !errors.Is(err, os.ErrExist) {
				return up, err
			}
			made = up // made meanwhile by another
		}
	case err != nil:
		return "", err
	}
	if mt == m.ctl["memory"] && !strings.HasPrefix(dir, filepath.Join(mt, m.root)+"/") {
		// The node's own groups (drover, drover/<node>): on older
		// kernels a memory group may be non-hierarchical (its limit
		// then ignores its children), and new groups inherit the
		// setting. Current kernels are always hierarchical (the file
		// reads 1 and takes no 0).
		if v, _ := readString(dir, "memory.use_hierarchy"); v == "0" {
			if err := writeFile(dir, "memory.use_hierarchy", "1"); err != nil {
				return made, err
			}
		}
	}
	if mt == m.cpuMt {
		// With clone_children the kernel copied both (or neither).
		if v, _ := readString(dir, "cpuset.cpus"); v != "" {
			return made, nil
		}
		parent := filepath.Dir(dir)
		for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
			pv, err := readString(parent, f)
			if err != nil {
				return made, err
			}
			if err := writeFile(dir, f, pv); err != nil {
				return made, err
			}
		}
	}
	return made, nil
}

func (m *v1Manager) Open(rel string) (Group, error) {
	rel, err := cleanRel(rel)
	if err != nil {
		return nil, err
	}
	g := &v1Group{m: m, rel: rel, own: make([]bool, len(m.dirs))}
	// Where it has no directory of its own it lives in its parent's
	// (Create): a previous agent's group is known by what exists. Every
	// group has a memory directory, except one whose Create or Delete was
	// cut short (its agent killed between two mkdirs or rmdirs: cpuset is
	// made first): found all the same, so that the next agent removes it
	// as a group of a job it does not run (else the directory stays for
	// good). No process is in such a group (they are placed after Create,
	// and killed before Delete's rmdirs): its Delete removes what is left.
	found := false
	for i, mt := range m.dirs {
		e := exists(filepath.Join(mt, m.root, rel), "")
		found = found || e
		g.own[i] = mt == m.ctl["memory"] || e
	}
	if !found {
		return nil, ErrNotFound
	}
	return g, nil
}

func (m *v1Manager) List() ([]string, error) {
	var out []string
	for _, mt := range m.dirs {
		ents, err := os.ReadDir(filepath.Join(mt, m.root))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		for _, e := range ents {
			if e.IsDir() && !slices.Contains(out, e.Name()) {
				out = append(out, e.Name())
			}
		}
	}
	slices.Sort(out)
	return out, nil
}

type v1Group struct {
	m       *v1Manager
	rel     string
	targets []string // from Create: where its processes go, per mount (nil: its own directories)
	// own, per mount: the group has its own directory there (else its
	// processes are in an ancestor's, see Create).
	own []bool
	// key: a job's group made by Create, which Recycle may keep
	// (recycleKey); "" for any other.
	key string
	// lim: the limits written (by Create and Update), which a kept tree
	// still has.
	lim Limits
}

func (g *v1Group) Rel() string { return g.rel }

// dir is the group's directory in the hierarchy of controller c; "" when
// that controller is not mounted. It may not exist: see ownDir.
func (g *v1Group) dir(c string) string {
	mt := g.m.ctl[c]
	if mt == "" {
		return ""
	}
	return filepath.Join(mt, g.m.root, g.rel)
}

// ownDir is dir(c) where the group has a directory of its own in c's
// hierarchy, "" where it lives in its parent's (what is in the parent's
// directory is not only this group's: it must not be frozen, listed or
// counted as this group) or c is not mounted.
func (g *v1Group) ownDir(c string) string {
	mt := g.m.ctl[c]
	if mt == "" {
		return ""
	}
	if i := slices.Index(g.m.dirs, mt); i >= 0 && g.own != nil && !g.own[i] {
		return ""
	}
	return filepath.Join(mt, g.m.root, g.rel)
}

func (g *v1Group) Update(l Limits) error {
	if err := g.update(l); err != nil {
		g.key = "" // its limits are not known for sure: never kept
		return err
	}
	g.lim = mergeLimits(g.lim, l)
	return nil
}

func (g *v1Group) update(l Limits) error {
	for i, mt := range g.m.dirs {
		if g.own == nil || g.own[i] {
			continue
		}
		for _, c := range g.m.ctls[mt] {
			if l.setsIn(c) {
				return fmt.Errorf("cgroups: %s lives in its parent's %s group: no limit of its own there", g.rel, c)
			}
		}
	}
	if d := g.dir("cpuset"); d != "" {
		if l.CPUs != "" {
			if err := writeFile(d, "cpuset.cpus", l.CPUs); err != nil {
				return err
			}
		}
		if l.Mems != "" {
			if err := writeFile(d, "cpuset.mems", l.Mems); err != nil {
				return err
			}
		}
	}
	if d := g.dir("memory"); l.MemoryBytes > 0 {
		sw := max(l.MemSwapBytes, l.MemoryBytes)
		g.m.memswOnce.Do(func() { g.m.memsw = exists(d, "memory.memsw.limit_in_bytes") })
		hasSwap := l.MemSwapBytes > 0 && g.m.memsw
		// memory+swap may never be below memory: order the writes so
		// that holds whether the limits go up or down.
		if err := writeFile(d, "memory.limit_in_bytes", itoa(l.MemoryBytes)); err != nil {
			if !hasSwap {
				return err
			}
			if err := writeFile(d, "memory.memsw.limit_in_bytes", itoa(sw)); err != nil {
				return err
			}
			if err := writeFile(d, "memory.limit_in_bytes", itoa(l.MemoryBytes)); err != nil {
				return err
			}
		}
		if hasSwap {
			if err := writeFile(d, "memory.memsw.limit_in_bytes", itoa(sw)); err != nil {
				return err
			}
		}
	}
	if d := g.dir("pids"); d != "" && l.PidsMax > 0 {
		if err := writeFile(d, "pids.max", itoa(l.PidsMax)); err != nil {
			return err
		}
	}
	if d := g.dir("devices"); len(l.DenyDevices) > 0 {
		if d == "" {
			return errors.New("cgroups: no devices hierarchy to refuse devices with")
		}
		for _, dev := range l.DenyDevices {
			if err := writeFile(d, "devices.deny", dev.rule()); err != nil {
				return err
			}
		}
	}
	return nil
}

func exists(dir, name string) bool {
	_, err := os.Stat(filepath.Join(dir, name))
	return err == nil
}

func (g *v1Group) Targets() ([]string, string) {
	if g.targets != nil {
		return g.targets, ""
	}
	return g.dirsAll(), ""
}

func (g *v1Group) AddProc(pid int) error {
	ds, _ := g.Targets()
	for _, d := range ds {
		if err := writeFile(d, "cgroup.procs", fmt.Sprint(pid)); err != nil {
			return err
		}
	}
	return nil
}

// dirsAll is the group's own directory in every hierarchy.
func (g *v1Group) dirsAll() []string {
	out := make([]string, 0, len(g.m.dirs))
	for _, mt := range g.m.dirs {
		out = append(out, filepath.Join(mt, g.m.root, g.rel))
	}
	return out
}

// trackDir is the hierarchy used to list processes: freezer, else pids,
// else memory, the first where the group has its own directory (memory
// always: it is never shared).
func (g *v1Group) trackDir() string {
	for _, c := range []string{"freezer", "pids", "memory"} {
		if d := g.ownDir(c); d != "" {
			return d
		}
	}
	return ""
}

func (g *v1Group) Procs() ([]int, error) { return procsUnder(g.trackDir()) }

func (g *v1Group) Stats() (Stats, error) {
	var st Stats
	// Its files opened relative to their directories (see at): a job's
	// end reads ~8 of them in 2 or 3 directories.
	var a at
	defer a.close()
	d := g.dir("memory")
	var err error
	if st.MemoryCurrent, err = a.readInt(d, "memory.usage_in_bytes"); err != nil {
		return st, err
	}
	st.MemoryPeak, _ = a.readInt(d, "memory.max_usage_in_bytes")
	st.OOMKills = oomKillsV1(&a, d)
	if c := g.dir("cpuacct"); c != "" {
		u, errU := a.readInt(c, "cpuacct.usage_user")
		s, errS := a.readInt(c, "cpuacct.usage_sys")
		if errU == nil && errS == nil {
			st.UserCPU, st.SystemCPU = time.Duration(u), time.Duration(s)
		} else if ks, err := a.readKeyed(c, "cpuacct.stat"); err == nil {
			// USER_HZ is 100 on Linux.
			st.UserCPU, st.SystemCPU = time.Duration(ks["user"])*10*time.Millisecond, time.Duration(ks["system"])*10*time.Millisecond
		}
	}
	if p := g.ownDir("pids"); p != "" {
		st.Pids, _ = a.readInt(p, "pids.current")
	} else if g.m.ctl["pids"] != "" {
		// In its parent's pids group: counted as the pids controller
		// does (threads), through its own directory.
		st.Pids = tasksUnder(&a, g.trackDir())
	}
	return st, nil
}

// tasksUnder counts the threads of the group dir and its descendants.
// a: the caller's at, or nil.
func tasksUnder(a *at, dir string) int64 {
	b, err := a.readFile(dir, "tasks")
	if err != nil {
		return 0
	}
	n := int64(strings.Count(string(b), "\n"))
	var st syscall.Stat_t
	if a.stat(dir, &st) == nil && st.Nlink == 2 { // a leaf (see oomKillsV1)
		return n
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if e.IsDir() {
			n += tasksUnder(nil, filepath.Join(dir, e.Name()))
		}
	}
	return n
}

// oomKillsV1 counts the OOM kills of the memory group dir and its
// descendants. v1 counts a kill only in the group the victim was in (a
// step's), v2 in that group and its ancestors: summing the subtree gives
// a job's group the v2 meaning. Only a group with sub-groups costs more
// than the one read.
// a: the caller's at, or nil.
func oomKillsV1(a *at, dir string) uint64 {
	var n int64
	if oc, err := a.readKeyed(dir, "memory.oom_control"); err == nil {
		n = max(0, oc["oom_kill"])
	}
	// A directory's link count is 2 plus its sub-directories (kernfs keeps
	// it): a leaf (a batch step's group, every time a job ends) is not
	// listed.
	var st syscall.Stat_t
	if a.stat(dir, &st) == nil && st.Nlink == 2 {
		return uint64(n)
	}
	ents, _ := os.ReadDir(dir)
	var sub uint64
	for _, e := range ents {
		if e.IsDir() {
			sub += oomKillsV1(nil, filepath.Join(dir, e.Name()))
		}
	}
	return uint64(n) + sub
}

// Kill freezes the group (so nothing in it forks meanwhile), SIGKILLs
// every process of its subtree and thaws it (a frozen process dies only
// once thawed), until none is left. Sub-groups frozen on their own (a
// suspended step) are thawed too: their processes could never die. A
// group in its parent's freezer is not frozen (that would stop its
// parent's other processes): killed round after round, as on a machine
// without a freezer; its parent's Kill, which follows, freezes.
func (g *v1Group) Kill(ctx context.Context) error {
	var freeze, thaw func() error
	if fz := g.ownDir("freezer"); fz != "" {
		freeze = func() error { return writeFile(fz, "freezer.state", "FROZEN") }
		thaw = func() error {
			// Pre-order: each group after its parent.
			return filepath.WalkDir(fz, func(p string, d os.DirEntry, err error) error {
				if err == nil && d.IsDir() {
					_ = writeFile(p, "freezer.state", "THAWED")
				}
				return nil
			})
		}
	}
	return killLoop(ctx, g.Procs, freeze, thaw)
}

func (g *v1Group) Delete() error {
	// The kernel refuses to remove a group that holds a process or a
	// sub-group. When the hierarchy Kill lists goes at the first try,
	// Kill would have found nobody: this saves its walk (a directory
	// read and a cgroup.procs read per group), the usual end of a job
	// whose processes have all exited. That hierarchy is one where the
	// group has its own directory (trackDir): in an ancestor's, ENOENT
	// would read as gone and skip the kill.
	td := g.trackDir()
	gone := td != "" && rmdirGone(td)
	if !gone {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := g.Kill(ctx); err != nil {
			return fmt.Errorf("cgroups: kill %s: %w", g.rel, err)
		}
	}
	var errs []error
	for _, d := range g.dirsAll() {
		if !gone || d != td {
			errs = append(errs, removeTree(d))
		}
	}
	return errors.Join(errs...)
}

func (g *v1Group) Freeze(frozen bool) error {
	fz := g.ownDir("freezer")
	if fz == "" {
		return ErrNoFreezer
	}
	state := "THAWED"
	if frozen {
		state = "FROZEN"
	}
	return writeFile(fz, "freezer.state", state)
}
