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
		// The thread is back where it came from.
		self, _ := os.ReadFile("/proc/thread-self/cgroup")
		if strings.Contains(string(self), g.Rel()) {
			err = fmt.Errorf("thread still in %s:\n%s", g.Rel(), self)
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
	ctrls := []string{"memory", "cpuset", "devices", "freezer", "pids"}
	if m.Layout() == LayoutV2 {
		ctrls = []string{"0:"}
	}
	for _, c := range ctrls {
		if !regexpMatch(c+`[^\n]*:/drover-test-\d+/node1/job_1/step_0\n`, s) {
			t.Errorf("not in the %s group:\n%s", c, s)
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
}

func TestV1OOMAndStats(t *testing.T) {
	m := testV1(t)
	g, err := m.Create("job_2", Limits{MemoryBytes: 32 << 20, MemSwapBytes: 32 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Delete()
	cmd := exec.Command("/bin/sh", "-c", `x=$(head -c 100000000 /dev/zero | tr '\0' a); echo survived`)
	var out strings.Builder
	cmd.Stdout = &out
	startIn(t, g, cmd)
	err = cmd.Wait()
	st, serr := g.Stats()
	if serr != nil {
		t.Fatal(serr)
	}
	if st.OOMKills < 1 || strings.Contains(out.String(), "survived") {
		t.Errorf("no OOM kill: err=%v stats=%+v out=%q", err, st, out.String())
	}
	if st.MemoryPeak < 16<<20 || st.UserCPU+st.SystemCPU <= 0 {
		t.Errorf("stats %+v", st)
	}
}

func TestV1KillEscapees(t *testing.T) {
	m := testV1(t)
	g, err := m.Create("job_3", Limits{})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("/bin/sh", "-c", "setsid sleep 300 & setsid sh -c 'sleep 300' & echo started")
	startIn(t, g, cmd)
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
}

// TestDeviceProgram attaches the v2 device program to a group on the
// unified hierarchy (hybrid machines have one, without controllers: BPF
// device programs work there all the same) and checks a process in it.
func TestDeviceProgram(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	var unified string
	ms, _ := mounts()
	for _, m := range ms {
		if m.v2 {
			unified = m.dir
		}
	}
	if unified == "" {
		t.Skip("no cgroup2 mount")
	}
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

func TestV2FakeTree(t *testing.T) {
	base := t.TempDir()
	write := func(dir, name, val string) {
		t.Helper()
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(val), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(base, "cgroup.controllers", "cpuset cpu io memory pids\n")
	write(base, "cgroup.subtree_control", "")
	// A fake tree has no kernel to create files in new groups: lay them out.
	for _, d := range []string{"drover", "drover/n1", "drover/n1/job_4"} {
		dir := filepath.Join(base, d)
		write(dir, "cgroup.controllers", "cpuset cpu memory pids\n")
		write(dir, "cgroup.subtree_control", "")
		write(dir, "cgroup.procs", "")
	}
	job := filepath.Join(base, "drover/n1/job_4")
	for _, f := range []string{"cpuset.cpus", "memory.max", "memory.swap.max", "pids.max"} {
		write(job, f, "")
	}
	write(job, "memory.current", "1048576\n")
	write(job, "memory.peak", "2097152\n")
	write(job, "memory.events", "low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n")
	write(job, "cpu.stat", "usage_usec 3000\nuser_usec 2000\nsystem_usec 1000\n")
	write(job, "pids.current", "2\n")

	m, err := NewV2At(base, "drover/n1")
	if err != nil {
		t.Fatal(err)
	}
	g, err := m.Create("job_4", Limits{CPUs: "2-3", MemoryBytes: 100 << 20, MemSwapBytes: 150 << 20, PidsMax: 10})
	if err != nil {
		t.Fatal(err)
	}
	for f, want := range map[string]string{"cpuset.cpus": "2-3", "memory.max": "104857600", "memory.swap.max": "52428800", "pids.max": "10"} {
		if got, _ := readString(job, f); got != want {
			t.Errorf("%s = %q, want %q", f, got, want)
		}
	}
	for _, d := range []string{"", "drover", "drover/n1"} {
		if got, _ := readString(filepath.Join(base, d), "cgroup.subtree_control"); got != "+cpuset +cpu +memory +pids" {
			t.Errorf("%q subtree_control = %q", d, got)
		}
	}
	if v1, v2 := g.Targets(); len(v1) != 0 || v2 != job {
		t.Errorf("Targets = %v %q", v1, v2)
	}
	st, err := g.Stats()
	if err != nil || st.MemoryCurrent != 1<<20 || st.MemoryPeak != 2<<20 || st.OOMKills != 1 ||
		st.UserCPU != 2*time.Millisecond || st.SystemCPU != time.Millisecond || st.Pids != 2 {
		t.Errorf("Stats = %+v, %v", st, err)
	}
	if names, _ := m.List(); len(names) != 1 || names[0] != "job_4" {
		t.Errorf("List = %v", names)
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

func regexpMatch(re, s string) bool { return regexp.MustCompile(re).MatchString(s) }
