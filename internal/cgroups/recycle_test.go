package cgroups

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"testing"

	"golang.org/x/sys/unix"
)

// recycleTest is a v1 manager with every hierarchy Recycle needs.
func recycleTest(t *testing.T) *v1Manager {
	t.Helper()
	m, ok := testV1(t).(*v1Manager)
	if !ok {
		t.Skip("v1 only (v2 groups cannot be renamed)")
	}
	if m.ctl["freezer"] == "" || m.ctl["cpuacct"] == "" {
		t.Skip("needs the freezer and cpuacct hierarchies")
	}
	return m
}

// batchJob makes a job's group and its batch step's as the agent does.
func batchJob(t *testing.T, m *v1Manager, rel string, l Limits) (job, step Group) {
	t.Helper()
	job, err := m.Create(rel, l)
	if err != nil {
		t.Fatal(err)
	}
	step, err = m.Create(rel+"/step_batch", Limits{InParentFreezer: true})
	if err != nil {
		t.Fatal(err)
	}
	return job, step
}

func (m *v1Manager) keptTrees() int {
	m.pool.mu.Lock()
	defer m.pool.mu.Unlock()
	return m.pool.n
}

// TestV1Recycle: an emptied job's tree is kept and becomes the next job's
// (same limits set) with that job's limits, its use counted from zero
// and its freezer thawed; the kept descriptors of a launch never reach a
// kept tree through the old job's path (a requeued job made again there
// gets its own group).
func TestV1Recycle(t *testing.T) {
	m := recycleTest(t)
	lim := func(cpus string, mem int64) Limits { return Limits{CPUs: cpus, MemoryBytes: mem} }
	job, step := batchJob(t, m, "job_21", lim("0", 256<<20))
	busy := exec.Command("/bin/sh", "-c", "i=0; while [ $i -lt 30000 ]; do i=$((i+1)); done")
	startIn(t, step, busy)
	if err := busy.Wait(); err != nil {
		t.Fatal(err)
	}
	if st, _ := step.Stats(); st.UserCPU+st.SystemCPU == 0 || st.MemoryPeak == 0 {
		t.Fatalf("the first job's use was not counted: %+v", st)
	}
	if err := job.(Recycler).Recycle(); !err {
		t.Fatal("an emptied job's tree was not kept")
	}
	if m.keptTrees() != 1 {
		t.Fatalf("%d trees kept, want 1", m.keptTrees())
	}

	allCPUs := "0"
	if m.cpuMt != "" {
		allCPUs, _ = readString(filepath.Join(m.cpuMt, m.root), "cpuset.cpus") // the node's
	}
	job2, step2 := batchJob(t, m, "job_22", lim(allCPUs, 128<<20))
	defer job2.Delete()
	if m.keptTrees() != 0 {
		t.Fatal("the kept tree was not taken")
	}
	assertGone(t, m, "job_21") // renamed job_22
	if v, _ := readInt(job2.(*v1Group).dir("memory"), "memory.limit_in_bytes"); v != 128<<20 {
		t.Errorf("memory limit %d, want the new job's %d", v, 128<<20)
	}
	if d := job2.(*v1Group).dir("cpuset"); d != "" {
		if v, _ := readString(d, "cpuset.cpus"); v != allCPUs {
			t.Errorf("cpuset.cpus %q, want the new job's %q", v, allCPUs)
		}
	}
	st, err := step2.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if st.UserCPU+st.SystemCPU != 0 || st.OOMKills != 0 || st.MemoryPeak > recycleMaxBytes {
		t.Errorf("the new job starts with the old one's use: %+v", st)
	}
	if v, _ := readString(job2.(*v1Group).dir("freezer"), "freezer.state"); v != "THAWED" {
		t.Errorf("freezer %s", v)
	}
	// Its processes land in the new job's groups, counted from zero.
	sleeper := exec.Command("/bin/sleep", "300")
	startIn(t, step2, sleeper)
	defer sleeper.Process.Kill()
	if p, _ := step2.Procs(); !slices.Contains(p, sleeper.Process.Pid) {
		t.Errorf("its process is not in it: %v", p)
	}
	// Not kept while a process is in it; nothing changed.
	if job2.(Recycler).Recycle() {
		t.Fatal("a tree kept with a process inside")
	}
	if p, _ := job2.Procs(); !slices.Contains(p, sleeper.Process.Pid) {
		t.Errorf("the refused Recycle moved the process's group: %v", p)
	}
	sleeper.Process.Kill()
	_ = sleeper.Wait()

	// A requeued job made again at job_21's path, whose tasks files a
	// launch still holds open: its process must be in the new group.
	job3, step3 := batchJob(t, m, "job_21", lim("0", 256<<20))
	defer job3.Delete()
	again := exec.Command("/bin/sleep", "300")
	startIn(t, step3, again)
	defer again.Process.Kill()
	if p, _ := step3.Procs(); !slices.Contains(p, again.Process.Pid) {
		t.Errorf("the requeued job's process is not in its group: %v", p)
	}
	if p, _ := job2.Procs(); slices.Contains(p, again.Process.Pid) {
		t.Errorf("the requeued job's process went into another job's (kept) group")
	}
}

// TestV1RecycleRefused: trees that must not be kept are not: one with a
// step's group left, one whose batch step counted an OOM kill; a frozen
// empty one is thawed first; one whose limits set other things is not
// given to a job; an agent that stops drops the pool.
func TestV1RecycleRefused(t *testing.T) {
	m := recycleTest(t)
	job, _ := batchJob(t, m, "job_31", Limits{MemoryBytes: 64 << 20})
	st, err := m.Create("job_31/step_0", Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if job.(Recycler).Recycle() {
		t.Fatal("a tree kept with a step's group in it")
	}
	if err := st.Delete(); err != nil {
		t.Fatal(err)
	}
	if err := job.Freeze(true); err != nil {
		t.Fatal(err)
	}
	if !job.(Recycler).Recycle() {
		t.Fatal("an emptied tree (its step removed) was not kept")
	}
	// Another job whose limits set no memory limit: not that tree.
	other, _ := batchJob(t, m, "job_32", Limits{})
	if m.keptTrees() != 1 {
		t.Fatal("a kept tree given to a job whose limits set other things")
	}
	if err := other.Delete(); err != nil {
		t.Fatal(err)
	}
	job4, _ := batchJob(t, m, "job_33", Limits{MemoryBytes: 64 << 20})
	if v, _ := readString(job4.(*v1Group).dir("freezer"), "freezer.state"); v != "THAWED" {
		t.Errorf("a kept tree came back %s", v)
	}

	// An OOM kill counted in the batch step: removed, not kept.
	oomJob, oomStep := batchJob(t, m, "job_34", Limits{MemoryBytes: 8 << 20, MemSwapBytes: 8 << 20})
	// Bounded (2^26 bytes at most): where swap is not limited with the
	// memory, the hog swaps instead of being killed, and must still end.
	hog := exec.Command("/bin/sh", "-c", "x=a; i=0; while [ $i -lt 26 ]; do x=$x$x; i=$((i+1)); done")
	startIn(t, oomStep, hog)
	_ = hog.Wait()
	if s, _ := oomStep.Stats(); s.OOMKills == 0 {
		t.Skip("the memory hog was not OOM-killed here")
	}
	if oomJob.(Recycler).Recycle() {
		t.Error("a tree that counted an OOM kill was kept")
	}
	if err := oomJob.Delete(); err != nil {
		t.Fatal(err)
	}

	// An agent that stops drops what it kept.
	if !job4.(Recycler).Recycle() {
		t.Fatal("not kept")
	}
	m.DropRecycled()
	if m.keptTrees() != 0 {
		t.Error("DropRecycled left trees in the pool")
	}
	assertGone(t, m, "job_33")
}

// TestV1RecycleSameName: a job made again under its name (requeued) takes
// its own kept tree back when its limits set the same things, with its
// use counted from zero; with other limits set, it gets a new tree.
func TestV1RecycleSameName(t *testing.T) {
	m := recycleTest(t)
	job, step := batchJob(t, m, "job_41", Limits{MemoryBytes: 64 << 20})
	busy := exec.Command("/bin/sh", "-c", "i=0; while [ $i -lt 30000 ]; do i=$((i+1)); done")
	startIn(t, step, busy)
	_ = busy.Wait()
	if !job.(Recycler).Recycle() {
		t.Fatal("not kept")
	}
	job, step = batchJob(t, m, "job_41", Limits{MemoryBytes: 32 << 20})
	if m.keptTrees() != 0 {
		t.Fatal("its own tree was not taken back")
	}
	if st, _ := step.Stats(); st.UserCPU+st.SystemCPU != 0 {
		t.Errorf("the new run starts with the old one's CPU time: %+v", st)
	}
	if v, _ := readInt(job.(*v1Group).dir("memory"), "memory.limit_in_bytes"); v != 32<<20 {
		t.Errorf("memory limit %d, want %d", v, 32<<20)
	}
	if !job.(Recycler).Recycle() {
		t.Fatal("not kept")
	}
	// Made again with no memory limit: not that tree (its limit would
	// stay), a new one.
	job, _ = batchJob(t, m, "job_41", Limits{})
	defer job.Delete()
	if m.keptTrees() != 0 {
		t.Fatal("the kept tree stayed in the pool")
	}
	if v, _ := readInt(job.(*v1Group).dir("memory"), "memory.limit_in_bytes"); v < 1<<40 {
		t.Errorf("memory limit %d carried over to a job that sets none", v)
	}
}

// TestV1RecycleWritesWhatDiffers: a kept tree is given the next job's
// limits, whichever of them differ from those it has, over several jobs.
func TestV1RecycleWritesWhatDiffers(t *testing.T) {
	m := recycleTest(t)
	if m.cpuMt == "" {
		t.Skip("needs the cpuset hierarchy")
	}
	all, _ := readString(m.cpuMt, "cpuset.cpus") // the machine's
	for i, l := range []Limits{
		{CPUs: "0", MemoryBytes: 64 << 20},
		{CPUs: all, MemoryBytes: 64 << 20},
		{CPUs: all, MemoryBytes: 96 << 20},
		{CPUs: "0", MemoryBytes: 96 << 20},
		{CPUs: "0", MemoryBytes: 64 << 20},
	} {
		job, _ := batchJob(t, m, "job_5"+string(rune('0'+i)), l)
		if i > 0 && m.keptTrees() != 0 {
			t.Fatalf("job %d: the kept tree was not taken", i)
		}
		g := job.(*v1Group)
		if v, _ := readString(g.dir("cpuset"), "cpuset.cpus"); v != l.CPUs {
			t.Errorf("job %d: cpuset.cpus %q, want %q", i, v, l.CPUs)
		}
		if v, _ := readInt(g.dir("memory"), "memory.limit_in_bytes"); v != l.MemoryBytes {
			t.Errorf("job %d: memory limit %d, want %d", i, v, l.MemoryBytes)
		}
		if !job.(Recycler).Recycle() {
			t.Fatalf("job %d: not kept", i)
		}
	}
	m.DropRecycled()
}

// TestV1RecycleRefusesThread: v1 lets one thread sit in a group its
// process is not in (EnterThread puts a launch's thread there), and a
// tree holding only such a thread must not be kept: the thread would be
// in the next job's group.
func TestV1RecycleRefusesThread(t *testing.T) {
	m := recycleTest(t)
	job, _ := batchJob(t, m, "job_41", Limits{MemoryBytes: 64 << 20})
	defer job.Delete()
	fz := job.(*v1Group).ownDir("freezer")
	type result struct {
		kept bool
		err  error
	}
	done := make(chan result, 1)
	var run func()
	run = func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		if unix.Gettid() == os.Getpid() {
			// The process's leader would be listed in cgroup.procs:
			// another thread (this one stays locked) does the check.
			go run()
			return
		}
		restore, err := EnterThread([]string{fz})
		if err != nil {
			done <- result{err: err}
			return
		}
		kept := job.(Recycler).Recycle()
		done <- result{kept: kept, err: restore()}
	}
	go run()
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.kept {
		t.Fatal("a tree kept with another process's thread in it")
	}
}

// TestV1RecycleStepDirElsewhere: a step whose limits need a hierarchy
// where its job has no directory (a step given some of a job's GPUs when
// the job holds all of the node's: its devices group) makes the job's
// directory there. Its job's tree is then not kept: renamed for the next
// job without it, that directory stayed under the old job's name for as
// long as the agent ran, after its `drover up` stopped too.
func TestV1RecycleStepDirElsewhere(t *testing.T) {
	m := recycleTest(t)
	if m.ctl["devices"] == "" {
		t.Skip("needs the devices hierarchy")
	}
	job, _ := batchJob(t, m, "job_61", Limits{MemoryBytes: 64 << 20})
	step, err := m.Create("job_61/step_0", Limits{DenyDevices: []Device{{'c', 195, 1}}})
	if err != nil {
		t.Fatal(err)
	}
	if !exists(filepath.Join(m.ctl["devices"], m.root, "job_61"), "") {
		t.Fatal("the step made no devices directory of its job")
	}
	if err := step.Delete(); err != nil {
		t.Fatal(err)
	}
	// As the agent ends a job: kept, else removed.
	if !job.(Recycler).Recycle() {
		if err := job.Delete(); err != nil {
			t.Fatal(err)
		}
	}
	next, _ := batchJob(t, m, "job_62", Limits{MemoryBytes: 64 << 20})
	defer next.Delete()
	assertGone(t, m, "job_61")
}
