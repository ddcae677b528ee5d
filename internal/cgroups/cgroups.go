package cgroups

import (
	"bufio"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Layout is how the machine's cgroups are organised.
type Layout int

const (
	LayoutNone Layout = iota // no usable cgroups: groups do nothing
	LayoutV1                 // v1 controllers (legacy or hybrid)
	LayoutV2                 // unified hierarchy with controllers
)

func (l Layout) String() string {
	switch l {
	case LayoutV1:
		return "v1"
	case LayoutV2:
		return "v2"
	}
	return "none"
}

// Device is a device node a group may be refused; Major or Minor -1
// stands for any.
type Device struct {
	Type         byte // 'c' or 'b'
	Major, Minor int64
}

func (d Device) rule() string {
	num := func(n int64) string {
		if n < 0 {
			return "*"
		}
		return itoa(n)
	}
	return string(d.Type) + " " + num(d.Major) + ":" + num(d.Minor) + " rwm"
}

// Limits of a group; a zero field sets nothing.
type Limits struct {
	CPUs         string // cpuset, "0-3,8"
	Mems         string // memory nodes; the parent's when empty
	MemoryBytes  int64  // hard memory limit
	MemSwapBytes int64  // memory plus swap (v2: swap = MemSwap - Memory)
	PidsMax      int64
	DenyDevices  []Device // refused; every other device stays allowed
	// InParentFreezer (v1, a sub-group; creation only): the group's
	// processes stay in its parent's freezer group, one directory fewer
	// to make and remove. It is then frozen only with its parent
	// (Freeze: ErrNoFreezer), and listed and killed through its own
	// memory group (Kill cannot stop it forking meanwhile: meant for a
	// group whose parent's Kill follows, a batch step's). v2 has one
	// directory for every controller: ignored there.
	InParentFreezer bool
}

// Stats is what a group used.
type Stats struct {
	MemoryCurrent, MemoryPeak int64 // bytes
	UserCPU, SystemCPU        time.Duration
	Pids                      int64
	OOMKills                  uint64
}

// Manager owns one node's subtree.
type Manager interface {
	Layout() Layout
	// Create makes the group rel ("job_5", "job_5/step_0") and its parents
	// if missing, and applies l.
	Create(rel string, l Limits) (Group, error)
	// Open returns an existing group (on v1: one with a directory in any
	// hierarchy, a half-made or half-removed one included).
	Open(rel string) (Group, error)
	// List names the existing direct children of the node's subtree.
	List() ([]string, error)
}

// ChildMaker is a Manager that makes a sub-group of one of its groups
// from what it knows of that group (v1: where the group's processes live
// in each hierarchy), without looking the parent's directories up again.
// The result is Create(parent.Rel()+"/"+name, l)'s.
type ChildMaker interface {
	CreateChild(parent Group, name string, l Limits) (Group, error)
}

// Group is one control group.
type Group interface {
	Rel() string
	Update(l Limits) error
	// Targets is where a launcher puts a process before it runs: v1
	// directories (one per hierarchy; a thread joins them through their
	// tasks file, see EnterThread) or the v2 directory (CLONE_INTO_CGROUP).
	Targets() (v1Dirs []string, v2Dir string)
	AddProc(pid int) error
	// Procs lists the processes in the group and its descendants.
	Procs() ([]int, error)
	// Stats reads the group's use, its descendants' included (v1 counts
	// an OOM kill only where the victim was: Stats sums the subtree's).
	// It reads about eight small files.
	Stats() (Stats, error)
	// Kill kills every process in the group and its descendants, and
	// waits until none is left or ctx ends (a process stuck in the
	// kernel may never go: then ctx's error). A group Kill emptied is
	// for Delete, not for new processes (on v2 some kernels kill any
	// process later started into it).
	Kill(ctx context.Context) error
	// Freeze stops (true) or resumes (false) every process of the group
	// and its descendants at once (scontrol suspend/resume); a frozen
	// process cannot run, fork or act on signals until thawed.
	// ErrNoFreezer when the machine has no freezer for the group.
	Freeze(frozen bool) error
	// Delete kills what is left (5 s at most) and removes the group and
	// its descendants.
	Delete() error
}

// ErrNotFound: Open found no such group.
var ErrNotFound = errors.New("cgroup not found")

// DefaultBase is where cgroup filesystems are mounted.
const DefaultBase = "/sys/fs/cgroup"

// mount is one cgroup filesystem.
type mount struct {
	dir         string
	v2          bool
	controllers []string // v1: the controllers of this hierarchy, sorted
}

// mounts reads the cgroup mounts of this process's mount namespace.
func mounts() ([]mount, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []mount
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// id parent maj:min root mountpoint opts [optional...] - fstype source superopts
		left, right, ok := strings.Cut(sc.Text(), " - ")
		if !ok {
			continue
		}
		lf, rf := strings.Fields(left), strings.Fields(right)
		if len(lf) < 5 || len(rf) < 3 {
			continue
		}
		switch rf[0] {
		case "cgroup2":
			out = append(out, mount{dir: unescape(lf[4]), v2: true})
		case "cgroup":
			var ctrls []string
			for _, o := range strings.Split(rf[2], ",") {
				if knownV1[o] {
					ctrls = append(ctrls, o)
				}
			}
			if len(ctrls) > 0 {
				slices.Sort(ctrls)
				out = append(out, mount{dir: unescape(lf[4]), controllers: ctrls})
			}
		}
	}
	return out, sc.Err()
}

var knownV1 = map[string]bool{"cpuset": true, "cpu": true, "cpuacct": true, "memory": true, "devices": true,
	"freezer": true, "pids": true, "blkio": true, "net_cls": true, "net_prio": true, "perf_event": true, "hugetlb": true, "rdma": true, "misc": true}

func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	r := strings.NewReplacer(`\040`, " ", `\011`, "\t", `\012`, "\n", `\134`, `\`)
	return r.Replace(s)
}

// Detect says which layout this machine offers: v1 when a v1 memory
// hierarchy is mounted, v2 when the unified hierarchy has the memory
// controller, none otherwise.
func Detect() Layout {
	ms, err := mounts()
	if err != nil {
		return LayoutNone
	}
	for _, m := range ms {
		if !m.v2 && slices.Contains(m.controllers, "memory") {
			return LayoutV1
		}
	}
	for _, m := range ms {
		if m.v2 {
			if b, err := os.ReadFile(filepath.Join(m.dir, "cgroup.controllers")); err == nil &&
				slices.Contains(strings.Fields(string(b)), "memory") {
				return LayoutV2
			}
		}
	}
	return LayoutNone
}

// New returns the manager of the subtree root ("drover/node1") on the
// machine's cgroup mounts for layout.
func New(layout Layout, root string) (Manager, error) {
	switch layout {
	case LayoutV1:
		ms, err := mounts()
		if err != nil {
			return nil, err
		}
		return newV1(ms, root)
	case LayoutV2:
		ms, err := mounts()
		if err != nil {
			return nil, err
		}
		for _, m := range ms {
			if m.v2 {
				return newV2(m.dir, root)
			}
		}
		return nil, errors.New("no cgroup2 mount")
	}
	return noneManager{}, nil
}

// NewAt is New on the cgroup filesystems under base instead of wherever
// the machine mounts them. For v2, base is the unified mount (a test may
// give a directory that mimics one). For v1, the hierarchies are the v1
// mounts at or under base; where none is mounted there (a test's
// directory), each sub-directory of base named after controllers
// ("memory", "cpu,cpuacct") stands for one hierarchy.
func NewAt(layout Layout, base, root string) (Manager, error) {
	switch layout {
	case LayoutV1:
		ms, err := mounts()
		if err != nil {
			return nil, err
		}
		var under []mount
		for _, m := range ms {
			if !m.v2 && (m.dir == base || strings.HasPrefix(m.dir, base+"/")) {
				under = append(under, m)
			}
		}
		if len(under) == 0 {
			if under, err = fakeV1Mounts(base); err != nil {
				return nil, err
			}
		}
		return newV1(under, root)
	case LayoutV2:
		return newV2(base, root)
	}
	return noneManager{}, nil
}

// fakeV1Mounts reads the hierarchies of a directory laid out like
// /sys/fs/cgroup on v1 (symbolic links, such as cpu -> cpu,cpuacct, are
// not followed).
func fakeV1Mounts(base string) ([]mount, error) {
	ents, err := os.ReadDir(base)
	if err != nil {
		return nil, err
	}
	var out []mount
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		var ctrls []string
		for _, c := range strings.Split(e.Name(), ",") {
			if knownV1[c] {
				ctrls = append(ctrls, c)
			}
		}
		if len(ctrls) > 0 {
			slices.Sort(ctrls)
			out = append(out, mount{dir: filepath.Join(base, e.Name()), controllers: ctrls})
		}
	}
	return out, nil
}

// noneManager is used where cgroups are off: groups exist only in name.
type noneManager struct{}

func (noneManager) Layout() Layout                             { return LayoutNone }
func (noneManager) Create(rel string, _ Limits) (Group, error) { return noneGroup(rel), nil }
func (noneManager) Open(rel string) (Group, error)             { return nil, ErrNotFound }
func (noneManager) List() ([]string, error)                    { return nil, nil }

type noneGroup string

func (g noneGroup) Rel() string               { return string(g) }
func (noneGroup) Update(Limits) error         { return nil }
func (noneGroup) Targets() ([]string, string) { return nil, "" }
func (noneGroup) Freeze(bool) error           { return ErrNoFreezer }
func (noneGroup) AddProc(int) error           { return nil }
func (noneGroup) Procs() ([]int, error)       { return nil, nil }
func (noneGroup) Stats() (Stats, error)       { return Stats{}, errors.New("no cgroups") }
func (noneGroup) Kill(context.Context) error  { return nil }
func (noneGroup) Delete() error               { return nil }

func itoa(n int64) string {
	var b [20]byte
	i := len(b)
	neg := n < 0
	if neg {
		n = -n
	}
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			break
		}
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}

// cleanRel refuses group names that would leave the subtree.
func cleanRel(rel string) (string, error) {
	c := filepath.Clean("/" + rel)[1:]
	if c == "" || c != rel || strings.Contains(rel, "..") {
		return "", errors.New("cgroups: bad group name " + rel)
	}
	return c, nil
}

// ErrNoFreezer: the group cannot be frozen (no v1 freezer hierarchy, or a
// v2 kernel before 5.2).
var ErrNoFreezer = errors.New("cgroups: no freezer for this group")
