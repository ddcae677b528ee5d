package cgroups

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// testV1 is a manager on this machine's real cgroups, whichever layout
// they have (the name is historical: v2 machines run the same tests).
func testV1(t testing.TB) Manager {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	layout := Detect()
	if layout == LayoutNone {
		t.Skip("no usable cgroups")
	}
	root := fmt.Sprintf("drover-test-%d/node1", os.Getpid())
	m, err := New(layout, root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		switch m := m.(type) {
		case *v1Manager:
			for _, d := range m.dirs {
				_ = removeTree(filepath.Join(d, strings.Split(root, "/")[0]))
			}
		case *v2Manager:
			_ = removeTree(filepath.Join(m.base, strings.Split(root, "/")[0]))
		}
	})
	return m
}

// startIn forks cmd from a thread that joined g, as the executor does.
func startIn(t *testing.T, g Group, cmd *exec.Cmd) {
	t.Helper()
	dirs, v2 := g.Targets()
	if v2 != "" {
		fd, err := syscall.Open(v2, unix.O_PATH|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer syscall.Close(fd)
		cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: fd}
	}
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		before, err := os.ReadFile("/proc/thread-self/cgroup")
		if err != nil {
			errc <- err
			return
		}
		restore, err := EnterThread(dirs)
		if err != nil {
			errc <- err
			return
		}
		err = cmd.Start()
		if rerr := restore(); rerr != nil {
			errc <- rerr
			return
		}
		// The thread is back where it came from, in every hierarchy.
		if after, _ := os.ReadFile("/proc/thread-self/cgroup"); string(after) != string(before) {
			err = fmt.Errorf("thread not back after restore: before\n%s\nafter\n%s", before, after)
		}
		runtime.UnlockOSThread()
		errc <- err
	}()
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
}

func mknod(t *testing.T, dir string, minor int) string {
	p := filepath.Join(dir, fmt.Sprintf("dev%d", minor))
	if err := syscall.Mknod(p, syscall.S_IFCHR|0o666, 240<<8|minor); err != nil {
		t.Skipf("mknod: %v", err)
	}
	return p
}

func TestV1LimitsAndPlacement(t *testing.T) {
	m := testV1(t)
	dir := t.TempDir()
	denied, allowed := mknod(t, dir, 7), mknod(t, dir, 8)
	if _, err := m.Create("job_1", Limits{CPUs: "0", MemoryBytes: 64 << 20, MemSwapBytes: 64 << 20, PidsMax: 64,
		DenyDevices: []Device{{'c', 240, 7}}}); err != nil {
		t.Fatal(err)
	}
	g, err := m.Create("job_1/step_0", Limits{})
	if err != nil {
		t.Fatal(err)
	}
	// A step given the job's refusals again (as the agent does) is fine.
	if _, err := m.Create("job_1/step_1", Limits{CPUs: "0", DenyDevices: []Device{{'c', 240, 7}}}); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("/bin/sh", "-c", `grep Cpus_allowed_list /proc/self/status; cat /proc/self/cgroup
(exec 3<`+denied+`) || echo DENIED-REFUSED; (exec 4<`+allowed+`) || echo ALLOWED-REFUSED`)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	startIn(t, g, cmd)
	_ = cmd.Wait()
	s := out.String()
	if !regexpMatch(`Cpus_allowed_list:\s+0\n`, s) {
		t.Errorf("not bound to CPU 0:\n%s", s)
	}
	ctrls := []string{"memory", "freezer", "cpuacct"}
	if m.Layout() == LayoutV2 {
		ctrls = []string{"0:"}
	}
	for _, c := range ctrls {
		if !regexpMatch(c+`[^\n]*:/drover-test-\d+/node1/job_1/step_0\n`, s) {
			t.Errorf("not in the %s group:\n%s", c, s)
		}
	}
	if m.Layout() == LayoutV1 {
		// A step that sets no CPUs, devices or pids limit of its own
		// stays in its job's cpuset, devices and pids groups (none made
		// for it).
		for _, c := range []string{"cpuset", "devices", "pids"} {
			if !regexpMatch(c+`[^\n]*:/drover-test-\d+/node1/job_1\n`, s) {
				t.Errorf("not in the job's %s group:\n%s", c, s)
			}
		}
		m1 := m.(*v1Manager)
		for _, c := range []string{"cpuset", "devices", "pids"} {
			if _, err := os.Stat(filepath.Join(m1.ctl[c], m1.root, "job_1/step_0")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s group made for a step without limits there (%v)", c, err)
			}
			if _, err := os.Stat(filepath.Join(m1.ctl[c], m1.root, "job_1/step_1")); err != nil && c != "pids" {
				t.Errorf("%s group of a step with limits there: %v", c, err)
			}
		}
	}
	// The step inherits the job's device refusal; an unknown major gives
	// ENXIO when the open is allowed, EPERM when refused.
	if !strings.Contains(s, "Operation not permitted") || !strings.Contains(s, "DENIED-REFUSED") {
		t.Errorf("denied device opened:\n%s", s)
	}
	if !strings.Contains(s, "No such device") {
		t.Errorf("allowed device not reached:\n%s", s)
	}
	names, err := m.List()
	if err != nil || len(names) != 1 || names[0] != "job_1" {
		t.Errorf("List = %v %v", names, err)
	}
	job, err := m.Open("job_1")
	if err != nil {
		t.Fatal(err)
	}
	if err := job.Delete(); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Open("job_1"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Open after Delete: %v", err)
	}
	assertGone(t, m, "job_1")
}

// assertGone: no hierarchy has the group any more.
func assertGone(t *testing.T, m Manager, rel string) {
	t.Helper()
	var dirs []string
	switch m := m.(type) {
	case *v1Manager:
		for _, mt := range m.dirs {
			dirs = append(dirs, filepath.Join(mt, m.root, rel))
		}
	case *v2Manager:
		dirs = append(dirs, filepath.Join(m.base, m.root, rel))
	}
	for _, d := range dirs {
		if _, err := os.Stat(d); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s left behind (%v)", d, err)
		}
	}
}

// TestV1LimitOnlyGroupsShared: a job setting no CPUs or devices keeps its
// processes in the node's cpuset and devices groups; a step that does
// set them gets its own there (its job's directory made on the way), and
// the job's Delete removes all of it. New cpusets get their CPUs from
// their parent.
func TestV1LimitOnlyGroupsShared(t *testing.T) {
	m := testV1(t)
	m1, ok := m.(*v1Manager)
	if !ok {
		t.Skip("v1 only")
	}
	job, err := m.Create("job_7", Limits{MemoryBytes: 64 << 20})
	if err != nil {
		t.Fatal(err)
	}
	targets, _ := job.Targets()
	for i, mt := range m1.dirs {
		want := filepath.Join(mt, m1.root, "job_7")
		if m1.shareable(mt, Limits{MemoryBytes: 64 << 20}) {
			want = filepath.Join(mt, m1.root)
		}
		if targets[i] != want {
			t.Errorf("target %d = %s, want %s", i, targets[i], want)
		}
	}
	bare, err := m.Create("job_7/step_1", Limits{})
	if err != nil {
		t.Fatal(err)
	}
	bareDirs, _ := bare.Targets()
	for i, mt := range m1.dirs {
		want := filepath.Join(mt, m1.root, "job_7/step_1")
		if m1.shareable(mt, Limits{}) {
			want = filepath.Join(mt, m1.root) // past the job, which has no directory there
		}
		if bareDirs[i] != want {
			t.Errorf("bare step target %d = %s, want %s", i, bareDirs[i], want)
		}
	}
	step, err := m.Create("job_7/step_0", Limits{CPUs: "0", DenyDevices: []Device{{'c', 240, 7}}, PidsMax: 100})
	if err != nil {
		t.Fatal(err)
	}
	stepDirs, _ := step.Targets()
	for i, mt := range m1.dirs {
		if want := filepath.Join(mt, m1.root, "job_7/step_0"); stepDirs[i] != want {
			t.Errorf("step target %d = %s, want %s", i, stepDirs[i], want)
		}
	}
	if cs := m1.ctl["cpuset"]; cs != "" {
		for _, rel := range []string{"job_7", "job_7/step_0"} {
			if v, err := readString(filepath.Join(cs, m1.root, rel), "cpuset.mems"); err != nil || v == "" {
				t.Errorf("%s: cpuset.mems %q %v", rel, v, err)
			}
		}
	}
	if err := job.Update(Limits{CPUs: "0"}); err == nil {
		t.Error("a limit set in a hierarchy the group shares with its parent")
	}
	if err := job.Delete(); err != nil {
		t.Fatal(err)
	}
	assertGone(t, m, "job_7")
}

// TestV1OOMAndStats: a step outgrowing its job's memory is OOM-killed
// inside the job's group; the kill is counted in the step's and the
// job's statistics (v1 counts it only where the victim was: Stats sums the
// subtree, as v2 does).
func TestV1OOMAndStats(t *testing.T) {
	m := testV1(t)
	job, err := m.Create("job_2", Limits{MemoryBytes: 32 << 20, MemSwapBytes: 32 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer job.Delete()
	g, err := m.Create("job_2/step_0", Limits{})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("/bin/sh", "-c", `x=$(head -c 100000000 /dev/zero | tr '\0' a); echo survived`)
	var out strings.Builder
	cmd.Stdout = &out
	startIn(t, g, cmd)
	err = cmd.Wait()
	for _, grp := range []Group{g, job} {
		st, serr := grp.Stats()
		if serr != nil {
			t.Fatal(serr)
		}
		if st.OOMKills < 1 || strings.Contains(out.String(), "survived") {
			t.Errorf("%s: no OOM kill: err=%v stats=%+v out=%q", grp.Rel(), err, st, out.String())
		}
		if st.MemoryPeak < 16<<20 || st.MemoryPeak > 32<<20 || st.UserCPU+st.SystemCPU <= 0 {
			t.Errorf("%s: stats %+v", grp.Rel(), st)
		}
	}
	// This process is not in the group and lives on.
	if self, _ := os.ReadFile("/proc/self/cgroup"); strings.Contains(string(self), "job_2") {
		t.Errorf("test process in the job's group:\n%s", self)
	}
}

func TestV1KillEscapees(t *testing.T) {
	m := testV1(t)
	g, err := m.Create("job_3", Limits{PidsMax: 64})
	if err != nil {
		t.Fatal(err)
	}
	step, err := m.Create("job_3/step_0", Limits{})
	if err != nil {
		t.Fatal(err)
	}
	// Processes that left the session and process group, in the step.
	cmd := exec.Command("/bin/sh", "-c", "setsid sleep 300 & setsid sh -c 'sleep 300; :' & echo started")
	startIn(t, step, cmd)
	_ = cmd.Wait()
	deadline := time.Now().Add(5 * time.Second)
	for {
		p, _ := g.Procs()
		if len(p) >= 2 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if p, _ := g.Procs(); len(p) < 2 {
		t.Fatalf("escapees not tracked: %v", p)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := g.Kill(ctx); err != nil {
		t.Fatal(err)
	}
	if p, _ := g.Procs(); len(p) != 0 {
		t.Errorf("left after Kill: %v", p)
	}
	if err := g.Delete(); err != nil {
		t.Fatal(err)
	}
	assertGone(t, m, "job_3")
}

// TestV1KillSuspended: a job's Kill also ends the processes of a step
// frozen on its own (suspended), which could otherwise never die.
func TestV1KillSuspended(t *testing.T) {
	m := testV1(t)
	job, err := m.Create("job_5", Limits{})
	if err != nil {
		t.Fatal(err)
	}
	g, err := m.Create("job_5/step_0", Limits{})
	if err != nil {
		t.Fatal(err)
	}
	fz := g.(*v1Group).dir("freezer")
	if fz == "" {
		t.Skip("no freezer hierarchy")
	}
	cmd := exec.Command("/bin/sleep", "300")
	startIn(t, g, cmd)
	defer cmd.Process.Kill()
	if err := writeFile(fz, "freezer.state", "FROZEN"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := job.Kill(ctx); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Errorf("sleep: %v", err)
	}
	if err := job.Delete(); err != nil {
		t.Fatal(err)
	}
	assertGone(t, m, "job_5")
}

// TestKillBounded: a process that never dies (stuck in the kernel) makes
// Kill return ctx's error, not hang.
func TestKillBounded(t *testing.T) {
	never := func() ([]int, error) { return []int{1 << 30}, nil } // no such pid
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	frozen := 0
	err := killLoop(ctx, never, func() error { frozen++; return nil }, func() error { frozen--; return nil })
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 2*time.Second {
		t.Errorf("killLoop = %v after %v", err, time.Since(start))
	}
	if frozen != 0 {
		t.Errorf("left frozen (%d)", frozen)
	}
}

// TestDeviceProgram attaches the v2 device program to a group on the
// unified hierarchy (hybrid machines have one, without controllers: BPF
// device programs work there all the same) and checks a process in it.
func TestDeviceProgram(t *testing.T) {
	unified := unifiedMount(t)
	dir := filepath.Join(unified, fmt.Sprintf("drover-bpf-test-%d", os.Getpid()))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Skip(err)
	}
	defer removeTree(dir)
	if err := denyDevicesV2(dir, []Device{{'c', 240, 7}, {'b', -1, -1}}); err != nil {
		t.Skipf("BPF device programs unavailable: %v", err)
	}
	tmp := t.TempDir()
	denied, allowed := mknod(t, tmp, 7), mknod(t, tmp, 8)
	fd, err := syscall.Open(dir, unix.O_PATH|syscall.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	cmd := exec.Command("/bin/sh", "-c", "(exec 3<"+denied+"); (exec 4<"+allowed+")")
	cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: fd}
	out, _ := cmd.CombinedOutput()
	s := string(out)
	if !strings.Contains(s, "Operation not permitted") || !strings.Contains(s, "No such device") {
		t.Errorf("device program: %s", s)
	}
}

func TestNoneAndNames(t *testing.T) {
	m, err := New(LayoutNone, "drover/x")
	if err != nil {
		t.Fatal(err)
	}
	g, err := m.Create("job_1", Limits{MemoryBytes: 1})
	if err != nil || g.Delete() != nil {
		t.Fatalf("none manager: %v", err)
	}
	if v1, v2 := g.Targets(); v1 != nil || v2 != "" {
		t.Error("none group has targets")
	}
	for _, bad := range []string{"../x", "/abs", "a/../b", ""} {
		if _, err := cleanRel(bad); err == nil {
			t.Errorf("cleanRel(%q) accepted", bad)
		}
	}
}

func BenchmarkCreateDelete(b *testing.B) {
	m := testV1(b)
	for i := 0; b.Loop(); i++ {
		g, err := m.Create(fmt.Sprintf("job_%d", i), Limits{CPUs: "0", MemoryBytes: 64 << 20, MemSwapBytes: 64 << 20,
			DenyDevices: []Device{{'c', 195, 1}}})
		if err != nil {
			b.Fatal(err)
		}
		if err := g.Delete(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCreateDeleteStep is a job's group and one step's.
func BenchmarkCreateDeleteStep(b *testing.B) {
	m := testV1(b)
	for i := 0; b.Loop(); i++ {
		job := fmt.Sprintf("job_%d", i)
		g, err := m.Create(job, Limits{CPUs: "0", MemoryBytes: 64 << 20, MemSwapBytes: 64 << 20, PidsMax: 64,
			DenyDevices: []Device{{'c', 195, 1}}})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := m.Create(job+"/step_0", Limits{CPUs: "0", DenyDevices: []Device{{'c', 195, 1}}}); err != nil {
			b.Fatal(err)
		}
		if err := g.Delete(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStats is one sample of a job's group that has a step.
func BenchmarkStats(b *testing.B) {
	m := testV1(b)
	g, err := m.Create("job_1", Limits{MemoryBytes: 64 << 20})
	if err != nil {
		b.Fatal(err)
	}
	defer g.Delete()
	if _, err := m.Create("job_1/step_0", Limits{}); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := g.Stats(); err != nil {
			b.Fatal(err)
		}
	}
}

func regexpMatch(re, s string) bool { return regexp.MustCompile(re).MatchString(s) }

// TestV1DeleteKillsLiveGroup: Delete tries rmdir before listing processes;
// a group whose step still runs a process must still be killed and
// removed (the kernel refuses the first rmdir).
func TestV1DeleteKillsLiveGroup(t *testing.T) {
	m := testV1(t)
	if _, err := m.Create("job_5", Limits{PidsMax: 64}); err != nil {
		t.Fatal(err)
	}
	step, err := m.Create("job_5/step_0", Limits{MemoryBytes: 64 << 20})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("/bin/sleep", "300")
	startIn(t, step, cmd)
	g, err := m.Open("job_5")
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Delete(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err == nil {
		t.Error("sleep exited cleanly: Delete did not kill it")
	}
	assertGone(t, m, "job_5")
}

// TestV1HalfMadeGroupIsRemoved: an agent killed (or frozen, then killed)
// in the middle of Create leaves a job group in the hierarchies made
// before its memory one (cpuset first). The next agent finds it in List
// and removes it as a group of a job it does not run: Open must give it
// (before, Open looked for the memory directory only and the empty
// cpuset directory stayed for good: seen after TestMultiNodeAndNodeLoss,
// whose node2 agent is frozen just as it starts a job).
func TestV1HalfMadeGroupIsRemoved(t *testing.T) {
	m, ok := testV1(t).(*v1Manager)
	if !ok {
		t.Skip("v1 only: a v2 group is one directory")
	}
	for _, upTo := range []string{"cpuset", "cpuacct", "pids"} {
		if _, err := m.Create("job_1", Limits{CPUs: "0", MemoryBytes: 64 << 20}); err != nil {
			t.Fatal(err) // the node's directories (and the job's, removed again below)
		}
		if g, err := m.Open("job_1"); err != nil || g.Delete() != nil {
			t.Fatal(err)
		}
		// What Create made before the process died: the job's directory in
		// each hierarchy up to upTo, in Create's order, the memory one
		// left out (a Delete cut short leaves the last ones: pids).
		var made []string
		for _, mt := range m.dirs {
			if mt == m.ctl["memory"] {
				if upTo == "pids" {
					continue
				}
				break
			}
			if upTo == "pids" && mt != m.ctl["pids"] {
				continue
			}
			dir := filepath.Join(mt, m.root, "job_1")
			if _, err := m.mkdir(mt, dir); err != nil {
				t.Fatal(err)
			}
			made = append(made, dir)
			if mt == m.ctl[upTo] {
				break
			}
		}
		if len(made) == 0 {
			t.Fatalf("%s: nothing made", upTo)
		}
		names, err := m.List()
		if err != nil || !slices.Contains(names, "job_1") {
			t.Fatalf("%s: List %v %v", upTo, names, err)
		}
		g, err := m.Open("job_1")
		if err != nil {
			t.Errorf("%s: Open of a half-made group (%v): %v", upTo, made, err)
			for _, d := range made {
				_ = removeTree(d)
			}
			continue
		}
		if err := g.Delete(); err != nil {
			t.Errorf("%s: Delete: %v", upTo, err)
		}
		assertGone(t, m, "job_1")
	}
	if _, err := m.Open("job_1"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Open of a group with no directory: %v", err)
	}
}
