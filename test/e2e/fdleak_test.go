package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestJobSeesNoCgroupDescriptors: the node's supervisor (and agent) keep
// the v1 tasks files of the groups they launched into open for the next
// launch (cgroups.EnterThread). None of those descriptors reaches a batch
// script or an srun step: a writable tasks file would let a job move its
// processes (or any it can name) into another group.
func TestJobSeesNoCgroupDescriptors(t *testing.T) {
	t.Parallel()
	cgroupV1(t)
	c := startUp(t, 1)
	// The first job leaves descriptors kept for the second.
	first := c.sbatch("-o", "/dev/null", "--wrap", "true")
	c.waitState(first, "COMPLETED", 30*time.Second)

	script := `#!/bin/sh
ls -l /proc/$$/fd > ` + c.dir + `/fds.batch 2>&1
srun -n1 sh -c 'ls -l /proc/$$/fd' > ` + c.dir + `/fds.step 2>&1
echo $$ > ` + c.dir + `/pid.tmp && mv ` + c.dir + `/pid.tmp ` + c.dir + `/pid
sleep 60
`
	writeScript(t, filepath.Join(c.dir, "fds.sh"), script)
	id := c.sbatch("-o", filepath.Join(c.dir, "fds.out"), filepath.Join(c.dir, "fds.sh"))
	c.waitFor("job "+id+" to list its descriptors", 30*time.Second, func() bool {
		_, err := os.Stat(filepath.Join(c.dir, "pid"))
		return err == nil
	})
	for _, f := range []string{"fds.batch", "fds.step"} {
		out := readFile(t, filepath.Join(c.dir, f))
		if !strings.Contains(out, " 0 -> ") {
			t.Fatalf("%s holds no descriptor list:\n%s", f, out)
		}
		if strings.Contains(out, "/sys/fs/cgroup") || strings.Contains(out, "tasks") {
			t.Errorf("%s: a cgroup file reached the job:\n%s", f, out)
		}
	}
	// What was checked matters only if the launchers do keep such
	// descriptors now.
	if !treeHoldsTasksFile(c.up.Process.Pid) {
		t.Error("no process of drover up holds a cgroup tasks file: nothing was tested")
	}
	c.must("scancel", id)
	c.waitState(id, "CANCELLED", 30*time.Second)
}

// treeHoldsTasksFile reports whether pid or a descendant holds a cgroup
// tasks file open.
func treeHoldsTasksFile(pid int) bool {
	p := strconv.Itoa(pid)
	ents, _ := os.ReadDir("/proc/" + p + "/fd")
	for _, e := range ents {
		if l, err := os.Readlink("/proc/" + p + "/fd/" + e.Name()); err == nil &&
			strings.HasPrefix(l, "/sys/fs/cgroup/") && strings.HasSuffix(l, "/tasks") {
			return true
		}
	}
	tasks, _ := os.ReadDir("/proc/" + p + "/task")
	for _, task := range tasks {
		kids, _ := os.ReadFile("/proc/" + p + "/task/" + task.Name() + "/children")
		for _, k := range strings.Fields(string(kids)) {
			if n, err := strconv.Atoi(k); err == nil && treeHoldsTasksFile(n) {
				return true
			}
		}
	}
	return false
}
