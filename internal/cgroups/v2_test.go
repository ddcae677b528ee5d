package cgroups

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeWrite writes name in dir (created if missing) for a fake tree.
func fakeWrite(t *testing.T, dir, name, val string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte(val), 0o644); err != nil {
		t.Fatal(err)
	}
}

// fakeV2Group lays out the files the kernel would give a new v2 group (a
// fake tree has no kernel to do it).
func fakeV2Group(t *testing.T, dir string, files ...string) {
	fakeWrite(t, dir, "cgroup.controllers", "cpuset cpu memory pids\n")
	fakeWrite(t, dir, "cgroup.subtree_control", "")
	fakeWrite(t, dir, "cgroup.procs", "")
	for _, f := range files {
		fakeWrite(t, dir, f, "")
	}
}

func TestV2FakeTree(t *testing.T) {
	base := t.TempDir()
	fakeWrite(t, base, "cgroup.controllers", "cpuset cpu io memory pids hugetlb\n")
	fakeWrite(t, base, "cgroup.subtree_control", "io\n")
	for _, d := range []string{"drover", "drover/n1"} {
		fakeV2Group(t, filepath.Join(base, d))
	}
	job := filepath.Join(base, "drover/n1/job_4")
	fakeV2Group(t, job, "cpuset.cpus", "cpuset.mems", "memory.max", "memory.swap.max", "pids.max", "cgroup.kill")
	fakeWrite(t, job, "memory.current", "1048576\n")
	fakeWrite(t, job, "memory.peak", "2097152\n")
	fakeWrite(t, job, "memory.events", "low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n")
	fakeWrite(t, job, "cpu.stat", "usage_usec 3000\nuser_usec 2000\nsystem_usec 1000\n")
	fakeWrite(t, job, "pids.current", "2\n")
	step := filepath.Join(job, "step_0")
	fakeV2Group(t, step, "cpuset.cpus", "memory.max", "pids.max") // no swap: memory.swap.max absent

	m, err := NewAt(LayoutV2, base, "drover/n1")
	if err != nil {
		t.Fatal(err)
	}
	if m.Layout() != LayoutV2 || m.Layout().String() != "v2" {
		t.Errorf("Layout = %v", m.Layout())
	}
	g, err := m.Create("job_4", Limits{CPUs: "2-3", Mems: "0", MemoryBytes: 100 << 20, MemSwapBytes: 150 << 20, PidsMax: 10})
	if err != nil {
		t.Fatal(err)
	}
	for f, want := range map[string]string{"cpuset.cpus": "2-3", "cpuset.mems": "0", "memory.max": "104857600",
		"memory.swap.max": "52428800", "pids.max": "10"} {
		if got, _ := readString(job, f); got != want {
			t.Errorf("%s = %q, want %q", f, got, want)
		}
	}
	// Every ancestor delegates the wanted controllers it has; io, which
	// was on already, is not written again, hugetlb is not wanted.
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

	// A step: its job now delegates too; no memory.swap.max, no write.
	s, err := m.Create("job_4/step_0", Limits{CPUs: "3", MemoryBytes: 50 << 20, MemSwapBytes: 80 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := readString(job, "cgroup.subtree_control"); got != "+cpuset +cpu +memory +pids" {
		t.Errorf("job subtree_control = %q", got)
	}
	if got, _ := readString(step, "cpuset.cpus"); got != "3" {
		t.Errorf("step cpuset.cpus = %q", got)
	}
	if _, err := os.Stat(filepath.Join(step, "memory.swap.max")); err == nil {
		t.Error("memory.swap.max written where the kernel has none")
	}
	if _, v2 := s.Targets(); v2 != step {
		t.Errorf("step Targets = %q", v2)
	}
	if err := s.Update(Limits{PidsMax: 5}); err != nil {
		t.Fatal(err)
	}
	if got, _ := readString(step, "pids.max"); got != "5" {
		t.Errorf("pids.max after Update = %q", got)
	}

	// Procs walks the subtree.
	fakeWrite(t, job, "cgroup.procs", "")
	fakeWrite(t, step, "cgroup.procs", "12\n13\n")
	if p, err := g.Procs(); err != nil || fmt.Sprint(p) != "[12 13]" {
		t.Errorf("Procs = %v %v", p, err)
	}
	// Kill writes cgroup.kill, then waits (bounded) for the processes,
	// which a fake tree never loses.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := g.Kill(ctx); err != context.DeadlineExceeded {
		t.Errorf("Kill = %v", err)
	}
	if got, _ := readString(job, "cgroup.kill"); got != "1" {
		t.Errorf("cgroup.kill = %q", got)
	}
	// An empty group is not killed (some kernels would refuse it new
	// processes afterwards).
	fakeWrite(t, step, "cgroup.procs", "")
	fakeWrite(t, job, "cgroup.kill", "")
	if err := g.Kill(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got, _ := readString(job, "cgroup.kill"); got != "" {
		t.Errorf("cgroup.kill of an empty group = %q", got)
	}

	if names, _ := m.List(); len(names) != 1 || names[0] != "job_4" {
		t.Errorf("List = %v", names)
	}
	if _, err := m.Open("job_4/step_0"); err != nil {
		t.Errorf("Open: %v", err)
	}
	if _, err := m.Open("job_99"); err != ErrNotFound {
		t.Errorf("Open absent: %v", err)
	}
	// A limit the kernel lacks (no pids controller): Create says so.
	if _, err := m.Create("job_4/step_1", Limits{PidsMax: 3}); err == nil {
		t.Error("pids.max written in a group without the file")
	}
}

// TestV2Unified runs the v2 path on a real kernel: the unified mount of
// this machine's hybrid layout, which has no controllers (so no limits or
// statistics), but has groups, CLONE_INTO_CGROUP, cgroup.kill,
// cgroup.freeze and device programs.
func TestV2Unified(t *testing.T) {
	unified := unifiedMount(t)
	top := fmt.Sprintf("drover-test2-%d", os.Getpid())
	m, err := NewAt(LayoutV2, unified, top+"/node1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = removeTree(filepath.Join(unified, top)) })
	if _, err := m.Create("job_1", Limits{DenyDevices: []Device{{'c', 240, 7}}}); err != nil {
		t.Skipf("cannot create groups or attach device programs on %s: %v", unified, err)
	}
	g, err := m.Create("job_1/step_0", Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if _, v2 := g.Targets(); v2 != filepath.Join(unified, top, "node1/job_1/step_0") {
		t.Fatalf("Targets v2 = %q", v2)
	}
	tmp := t.TempDir()
	denied, allowed := mknod(t, tmp, 7), mknod(t, tmp, 8)
	cmd := exec.Command("/bin/sh", "-c", `cat /proc/self/cgroup; (exec 3<`+denied+`) || echo DENIED-REFUSED
(exec 4<`+allowed+`)
exec >/dev/null 2>&1; setsid sleep 300 & setsid sh -c 'sleep 300; :' &`)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	startIn(t, g, cmd)
	_ = cmd.Wait()
	s := out.String()
	if !regexpMatch(`0::/`+top+`/node1/job_1/step_0\n`, s) {
		t.Errorf("not born in the step's group:\n%s", s)
	}
	// The job's device program holds for the step (programs stack).
	if !strings.Contains(s, "Operation not permitted") || !strings.Contains(s, "DENIED-REFUSED") ||
		!strings.Contains(s, "No such device") {
		t.Errorf("device program:\n%s", s)
	}
	waitProcs(t, g, 2)
	job, err := m.Open("job_1")
	if err != nil {
		t.Fatal(err)
	}
	if p, _ := job.Procs(); len(p) < 2 {
		t.Errorf("job Procs = %v", p)
	}
	// Kernels before 5.14 have no cgroup.kill: freeze, kill, thaw.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	useCgroupKill = false
	err = job.Kill(ctx)
	useCgroupKill = true
	if err != nil {
		t.Fatal(err)
	}
	if p, _ := job.Procs(); len(p) != 0 {
		t.Errorf("left after the freezing Kill: %v", p)
	}
	if got, _ := readString(filepath.Join(unified, top, "node1/job_1"), "cgroup.freeze"); got != "0" {
		t.Errorf("left frozen: cgroup.freeze = %q", got)
	}

	// cgroup.kill.
	spawnSleepers := func() error {
		cmd := exec.Command("/bin/sh", "-c", "setsid sleep 300 & setsid sleep 300 &")
		startIn(t, g, cmd)
		return cmd.Wait()
	}
	if err := spawnSleepers(); err != nil {
		t.Fatal(err)
	}
	waitProcs(t, g, 2)
	if err := job.Kill(ctx); err != nil {
		t.Fatal(err)
	}
	if p, _ := job.Procs(); len(p) != 0 {
		t.Errorf("left after Kill: %v", p)
	}
	// What the kernel does with a process started into a killed group.
	t.Logf("process started into a group after cgroup.kill: %v", spawnSleepers())
	_ = job.Kill(ctx)

	if names, _ := m.List(); len(names) != 1 || names[0] != "job_1" {
		t.Errorf("List = %v", names)
	}
	if err := job.Delete(); err != nil {
		t.Fatal(err)
	}
	assertGone(t, m, "job_1")
}

// waitProcs waits until g holds at least n processes, and lists them.
func waitProcs(t *testing.T, g Group, n int) []int {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		p, _ := g.Procs()
		if len(p) >= n {
			return p
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s holds %v, want %d processes", g.Rel(), p, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestV1FakeTree checks the v1 writes and reads the real machine may not
// reach: the memory+swap order, cpuacct.stat ticks (kernels without
// cpuacct.usage_user), a combined cpu,cpuacct hierarchy.
func TestV1FakeTree(t *testing.T) {
	base := t.TempDir()
	root := "drover/n1"
	for _, h := range []string{"cpuset", "cpu,cpuacct", "memory", "devices", "freezer", "pids"} {
		for _, d := range []string{"", "drover", root, root + "/job_1"} {
			fakeWrite(t, filepath.Join(base, h, d), "cgroup.procs", "")
		}
	}
	for _, d := range []string{"", "drover", root, root + "/job_1"} {
		fakeWrite(t, filepath.Join(base, "cpuset", d), "cpuset.cpus", "0-7\n")
		fakeWrite(t, filepath.Join(base, "cpuset", d), "cpuset.mems", "0\n")
	}
	mem := filepath.Join(base, "memory", root, "job_1")
	for _, f := range []string{"memory.limit_in_bytes", "memory.memsw.limit_in_bytes"} {
		fakeWrite(t, mem, f, "")
	}
	fakeWrite(t, mem, "memory.usage_in_bytes", "4096\n")
	fakeWrite(t, mem, "memory.max_usage_in_bytes", "8192\n")
	fakeWrite(t, mem, "memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n")
	fakeWrite(t, filepath.Join(mem, "step_0"), "memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 3\n")
	fakeWrite(t, filepath.Join(base, "cpu,cpuacct", root, "job_1"), "cpuacct.stat", "user 150\nsystem 20\n")
	fakeWrite(t, filepath.Join(base, "pids", root, "job_1"), "pids.current", "4\n")
	fakeWrite(t, filepath.Join(base, "pids", root, "job_1"), "pids.max", "")
	fakeWrite(t, filepath.Join(base, "devices", root, "job_1"), "devices.deny", "")

	m, err := NewAt(LayoutV1, base, root)
	if err != nil {
		t.Fatal(err)
	}
	g, err := m.Create("job_1", Limits{CPUs: "1-2", MemoryBytes: 64 << 20, MemSwapBytes: 96 << 20, PidsMax: 9,
		DenyDevices: []Device{{'c', 195, -1}}})
	if err != nil {
		t.Fatal(err)
	}
	for f, want := range map[string]string{
		"cpuset/" + root + "/job_1/cpuset.cpus":                 "1-2",
		"memory/" + root + "/job_1/memory.limit_in_bytes":       "67108864",
		"memory/" + root + "/job_1/memory.memsw.limit_in_bytes": "100663296",
		"pids/" + root + "/job_1/pids.max":                      "9",
		"devices/" + root + "/job_1/devices.deny":               "c 195:* rwm",
	} {
		if got, _ := readString(base, f); got != want {
			t.Errorf("%s = %q, want %q", f, got, want)
		}
	}
	v1, v2 := g.Targets()
	if len(v1) != 6 || v2 != "" || !strings.HasSuffix(v1[1], "cpu,cpuacct/"+root+"/job_1") {
		t.Errorf("Targets = %v %q", v1, v2)
	}
	st, err := g.Stats()
	want := Stats{MemoryCurrent: 4096, MemoryPeak: 8192, UserCPU: 1500 * time.Millisecond,
		SystemCPU: 200 * time.Millisecond, Pids: 4, OOMKills: 5}
	if err != nil || st != want {
		t.Errorf("Stats = %+v, %v; want %+v", st, err, want)
	}
}

// unifiedMount is this machine's cgroup2 mount, for the tests that need a
// real one (as root); the test is skipped without.
func unifiedMount(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	ms, _ := mounts()
	for _, m := range ms {
		if m.v2 {
			return m.dir
		}
	}
	t.Skip("no cgroup2 mount")
	return ""
}
