package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSupervisorLossKeepsBatchJob: the node's job supervisor (`drover
// __supervise`, the parent of batch scripts) is killed while a job runs.
// The script runs on (reparented), so the job stays RUNNING and scancel
// still ends it. Before, the agent reported the job FAILED at once while
// its script ran on, out of reach of scancel.
func TestSupervisorLossKeepsBatchJob(t *testing.T) {
	t.Parallel()
	c := startUp(t, 1)
	pidFile := filepath.Join(c.dir, "script.pid")
	id := c.sbatch("-o", "/dev/null", "--wrap", "echo $$ > "+pidFile+".tmp; mv "+pidFile+".tmp "+pidFile+"; exec sleep 300")
	var pid int
	c.waitFor("the script to write its pid", 30*time.Second, func() bool {
		pid, _ = strconv.Atoi(strings.TrimSpace(readFileOr(pidFile)))
		return pid > 0
	})
	// Whatever happens to the test, but only while pid is still this job's
	// script: by cleanup time it may be another parallel test's task.
	t.Cleanup(func() { killJobProcess(pid, id, c.node(1), false) })
	sup := ancestorNamed(pid, "__supervise")
	if sup == 0 {
		t.Fatalf("no __supervise process above the script (pid %d)", pid)
	}
	if err := syscall.Kill(sup, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// A negative check needs a bound: before, the job ended within a second.
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		if st := c.jobField(id, "JobState"); st != "RUNNING" {
			t.Fatalf("job %s is %s (exit %s) after its supervisor died, its script still running",
				id, st, c.jobField(id, "ExitCode"))
		}
		time.Sleep(200 * time.Millisecond)
	}
	if syscall.Kill(pid, 0) != nil {
		t.Fatal("the script died with its supervisor: this test checks nothing then")
	}
	c.must("scancel", id)
	c.waitState(id, "CANCELLED", 30*time.Second)
	c.waitFor("the script to be killed by scancel", 10*time.Second, func() bool {
		return syscall.Kill(pid, 0) != nil
	})
}

// ancestorNamed returns the nearest ancestor of pid whose command line
// holds word, or 0.
func ancestorNamed(pid int, word string) int {
	for p := pid; p > 1; {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(p) + "/stat")
		if err != nil {
			return 0
		}
		// pid (comm) state ppid ...: comm may hold spaces, so after ')'.
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(f) < 2 {
			return 0
		}
		p, _ = strconv.Atoi(f[1])
		cmd, _ := os.ReadFile("/proc/" + strconv.Itoa(p) + "/cmdline")
		if strings.Contains(string(cmd), word) {
			return p
		}
	}
	return 0
}
