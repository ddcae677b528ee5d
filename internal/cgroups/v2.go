package cgroups

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// v2Wanted are the controllers enabled for Drover's groups where the
// machine offers them.
var v2Wanted = []string{"cpuset", "cpu", "memory", "pids"}

type v2Manager struct {
	base, root string
}

func newV2(base, root string) (*v2Manager, error) {
	root, err := cleanRel(root)
	if err != nil {
		return nil, err
	}
	return &v2Manager{base: base, root: root}, nil
}

func (m *v2Manager) Layout() Layout { return LayoutV2 }

func (m *v2Manager) Create(rel string, l Limits) (Group, error) {
	rel, err := cleanRel(rel)
	if err != nil {
		return nil, err
	}
	nodeParts := strings.Split(m.root, "/")
	parts := append(nodeParts, strings.Split(rel, "/")...)
	dir := m.base
	// made: the topmost directory this call made, removed again when it
	// fails: a refused group leaves nothing behind, nor brings back a
	// parent group torn down meanwhile (nobody would remove that one).
	made := ""
	fail := func(err error) (Group, error) {
		if made != "" {
			_ = removeTree(made)
		}
		return nil, err
	}
	for i, p := range parts {
		// A group's controllers are those its parent delegates: enable
		// them in every ancestor on the way down (none of which holds
		// processes, so the no-internal-process rule is kept).
		if err := enableControllers(dir); err != nil {
			return fail(err)
		}
		dir = filepath.Join(dir, p)
		err := os.Mkdir(dir, 0o755)
		switch {
		case err == nil:
			if made == "" {
				made = dir
			}
			if i >= len(nodeParts) && i < len(parts)-1 {
				// A parent group below the node's was gone (its job
				// torn down meanwhile).
				return fail(errors.New("cgroups: the group " + filepath.Dir(rel) + " is gone"))
			}
		case !errors.Is(err, os.ErrExist):
			return fail(err)
		}
	}
	g := &v2Group{m: m, rel: rel, dir: dir}
	if err := g.Update(l); err != nil {
		_ = g.Delete()
		return nil, err
	}
	return g, nil
}

// enableControllers turns on, in dir's subtree_control, the wanted
// controllers dir has and has not enabled yet.
func enableControllers(dir string) error {
	have, err := readString(dir, "cgroup.controllers")
	if err != nil {
		return err
	}
	on, _ := readString(dir, "cgroup.subtree_control")
	var add []string
	for _, c := range v2Wanted {
		if slices.Contains(strings.Fields(have), c) && !slices.Contains(strings.Fields(on), c) {
			add = append(add, "+"+c)
		}
	}
	if len(add) == 0 {
		return nil
	}
	return writeFile(dir, "cgroup.subtree_control", strings.Join(add, " "))
}

func (m *v2Manager) Open(rel string) (Group, error) {
	rel, err := cleanRel(rel)
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(m.base, m.root, rel)
	if _, err := os.Stat(dir); err != nil {
		return nil, ErrNotFound
	}
	return &v2Group{m: m, rel: rel, dir: dir}, nil
}

func (m *v2Manager) List() ([]string, error) {
	ents, err := os.ReadDir(filepath.Join(m.base, m.root))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

type v2Group struct {
	m   *v2Manager
	rel string
	dir string
}

func (g *v2Group) Rel() string { return g.rel }

func (g *v2Group) Update(l Limits) error {
	if l.CPUs != "" {
		if err := writeFile(g.dir, "cpuset.cpus", l.CPUs); err != nil {
			return err
		}
	}
	if l.Mems != "" {
		if err := writeFile(g.dir, "cpuset.mems", l.Mems); err != nil {
			return err
		}
	}
	if l.MemoryBytes > 0 {
		if err := writeFile(g.dir, "memory.max", itoa(l.MemoryBytes)); err != nil {
			return err
		}
		if l.MemSwapBytes > 0 && exists(g.dir, "memory.swap.max") {
			if err := writeFile(g.dir, "memory.swap.max", itoa(max(0, l.MemSwapBytes-l.MemoryBytes))); err != nil {
				return err
			}
		}
	}
	if l.PidsMax > 0 {
		if err := writeFile(g.dir, "pids.max", itoa(l.PidsMax)); err != nil {
			return err
		}
	}
	if len(l.DenyDevices) > 0 {
		return denyDevicesV2(g.dir, l.DenyDevices)
	}
	return nil
}

func (g *v2Group) Targets() ([]string, string) { return nil, g.dir }

func (g *v2Group) AddProc(pid int) error { return writeFile(g.dir, "cgroup.procs", fmt.Sprint(pid)) }

func (g *v2Group) Procs() ([]int, error) { return procsUnder(g.dir) }

func (g *v2Group) Stats() (Stats, error) {
	var st Stats
	var err error
	if st.MemoryCurrent, err = readInt(g.dir, "memory.current"); err != nil {
		return st, err
	}
	st.MemoryPeak, _ = readInt(g.dir, "memory.peak") // Linux 5.19+
	if ev, err := readKeyed(g.dir, "memory.events"); err == nil {
		st.OOMKills = uint64(max(0, ev["oom_kill"]))
	}
	if cs, err := readKeyed(g.dir, "cpu.stat"); err == nil {
		st.UserCPU = time.Duration(cs["user_usec"]) * time.Microsecond
		st.SystemCPU = time.Duration(cs["system_usec"]) * time.Microsecond
	}
	st.Pids, _ = readInt(g.dir, "pids.current")
	return st, nil
}

// useCgroupKill is false in tests of the kernels without cgroup.kill.
var useCgroupKill = true

// Kill kills the group's subtree: through cgroup.kill (Linux 5.14+),
// else by freezing, SIGKILLing, thawing. An empty group is left alone:
// some kernels (seen on 6.18) kill every process later started into a
// group killed once with CLONE_INTO_CGROUP; a group with processes that
// was killed is for deletion, not reuse.
func (g *v2Group) Kill(ctx context.Context) error {
	if pids, err := g.Procs(); err != nil || len(pids) == 0 {
		return err
	}
	if useCgroupKill && exists(g.dir, "cgroup.kill") {
		// The kernel kills the whole subtree, new forks included.
		if err := writeFile(g.dir, "cgroup.kill", "1"); err != nil {
			return err
		}
		return killLoop(ctx, g.Procs, nil, nil)
	}
	freeze := func() error { return writeFile(g.dir, "cgroup.freeze", "1") }
	thaw := func() error { return writeFile(g.dir, "cgroup.freeze", "0") }
	if !exists(g.dir, "cgroup.freeze") {
		freeze, thaw = nil, nil
	}
	return killLoop(ctx, g.Procs, freeze, thaw)
}

func (g *v2Group) Delete() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := g.Kill(ctx); err != nil {
		return fmt.Errorf("cgroups: kill %s: %w", g.rel, err)
	}
	return removeTree(g.dir)
}

func (g *v2Group) Freeze(frozen bool) error {
	if !exists(g.dir, "cgroup.freeze") {
		return ErrNoFreezer
	}
	v := "0"
	if frozen {
		v = "1"
	}
	return writeFile(g.dir, "cgroup.freeze", v)
}
