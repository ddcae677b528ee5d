package cgroups

import (
	"os/exec"
	"slices"
	"strconv"
	"testing"
)

// TestJoinKeptDescriptors: the tasks files a launch joins are kept open
// for the next (joinCacheSize at most). A group removed and made again at
// the same path (a requeued job) still gets its process: the kept
// descriptor of the removed group fails and the file is opened afresh.
func TestJoinKeptDescriptors(t *testing.T) {
	m := testV1(t)
	if m.Layout() != LayoutV1 {
		t.Skip("v1 only (v2 places a child with CLONE_INTO_CGROUP)")
	}
	run := func(rel string) {
		t.Helper()
		g, err := m.Create(rel, Limits{MemoryBytes: 64 << 20})
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("/bin/sh", "-c", "read x")
		in, _ := cmd.StdinPipe()
		startIn(t, g, cmd)
		if p, _ := g.Procs(); !slices.Contains(p, cmd.Process.Pid) {
			t.Errorf("%s: its process %d not in it (%v)", rel, cmd.Process.Pid, p)
		}
		in.Close()
		_ = cmd.Wait()
		if err := g.Delete(); err != nil {
			t.Fatal(err)
		}
	}
	run("job_15")
	run("job_15") // made again: the kept descriptors are the removed group's
	for i := range joinCacheSize + 4 {
		run("job_" + strconv.Itoa(100+i))
	}
	joinMu.Lock()
	n, order := len(joinTasks), len(joinOrder)
	joinMu.Unlock()
	if n > joinCacheSize || n != order {
		t.Errorf("%d descriptors kept (%d in order), at most %d", n, order, joinCacheSize)
	}
	assertGone(t, m, "job_15")
}
