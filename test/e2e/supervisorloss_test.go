package e2e

import (
	"fmt"
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

// TestAgentReachesSupervisorLater: an agent that cannot reach its node's
// job supervisor at start (here its socket path is blocked) keeps trying;
// once one answers, the jobs started from then on run under it and
// outlive an agent restart. Before, the agent tried once and ran every
// later job unsupervised, to die with the agent.
func TestAgentReachesSupervisorLater(t *testing.T) {
	t.Parallel()
	c, daemon := manualCluster(t, "suplate", "SlurmdTimeout=30\n")
	dir := c.dir
	// A directory that is not empty cannot be removed to bind the socket.
	block := filepath.Join(dir, "spool", "suplate1", "super.sock")
	if err := os.MkdirAll(filepath.Join(block, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	daemon("controller")
	c.waitFor("controller", 30*time.Second, func() bool { _, _, code := c.run("scontrol", "ping"); return code == 0 })
	agent := daemon("agent", "--name", "suplate1")
	agentLog := filepath.Join(dir, "agent-2.log")
	c.waitFor("node up", 60*time.Second, func() bool {
		o, _, _ := c.run("sinfo", "-h", "-o", "%t")
		return strings.TrimSpace(o) == "idle"
	})
	scriptPid := func(file string) int {
		var pid int
		c.waitFor("the script to write "+filepath.Base(file), 30*time.Second, func() bool {
			pid, _ = strconv.Atoi(strings.TrimSpace(readFileOr(file)))
			return pid > 0
		})
		return pid
	}
	early := filepath.Join(dir, "early.pid")
	a := c.sbatch("-o", "/dev/null", "--wrap", "echo $$ > "+early+".tmp; mv "+early+".tmp "+early+"; exec sleep 300")
	pidA := scriptPid(early)
	t.Cleanup(func() { killJobProcess(pidA, a, "suplate1", false) })
	if ancestorNamed(pidA, "__supervise") != 0 {
		t.Fatal("a job ran under a supervisor while its socket path was blocked: this test checks nothing then")
	}
	c.must("scancel", a)
	c.waitState(a, "CANCELLED", 30*time.Second)

	if err := os.RemoveAll(block); err != nil {
		t.Fatal(err)
	}
	c.waitFor("the agent to reach a supervisor (its log)", 120*time.Second, func() bool {
		return strings.Contains(readFileOr(agentLog), "job supervisor reached")
	})
	late, gate, out := filepath.Join(dir, "late.pid"), filepath.Join(dir, "go"), filepath.Join(dir, "late.out")
	b := c.sbatch("-o", out, "--wrap", "echo $$ > "+late+".tmp; mv "+late+".tmp "+late+
		"; while [ ! -e "+gate+" ]; do sleep 0.1; done; echo finished")
	pidB := scriptPid(late)
	t.Cleanup(func() { killJobProcess(pidB, b, "suplate1", false) })
	if ancestorNamed(pidB, "__supervise") == 0 {
		t.Fatal("a job started after the agent reached a supervisor runs without one")
	}
	_ = agent.Process.Signal(syscall.SIGTERM)
	_ = agent.Wait()
	daemon("agent", "--name", "suplate1")
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	c.waitState(b, "COMPLETED", 60*time.Second)
	if got := readFileOr(out); got != "finished\n" {
		t.Errorf("output of the job across the agent restart: %q", got)
	}
}

// TestAgentRestartKeepsBigEnvironmentJob: a batch job with a large
// environment (here 4 variables of 60 KB, as environment modules make)
// runs under the node's supervisor like any other and outlives an agent
// restart. Its start request did not fit one packet of the supervisor's
// socket (about 200 KiB by default): the start failed with "message too
// long", the job ran unsupervised, and killing the agent killed it; the
// controller then ran it a second time (Restarts=1).
func TestAgentRestartKeepsBigEnvironmentJob(t *testing.T) {
	t.Parallel()
	c, daemon := manualCluster(t, "bigenv", "SlurmdTimeout=30\n")
	daemon("controller")
	c.waitFor("controller", 30*time.Second, func() bool { _, _, code := c.run("scontrol", "ping"); return code == 0 })
	agent := daemon("agent", "--name", "bigenv1")
	c.waitFor("node up", 30*time.Second, func() bool {
		o, _, _ := c.run("sinfo", "-h", "-o", "%t")
		return strings.TrimSpace(o) == "idle"
	})
	big := strings.Repeat("<x>&", 15000) // 60 KB, and what JSON escapes
	for i := range 4 {
		c.extraEnv = append(c.extraEnv, fmt.Sprintf("BIGVAR%d=%s", i, big))
	}
	runs := filepath.Join(c.dir, "runs")
	out := filepath.Join(c.dir, "out")
	id := c.sbatch("-o", out, "--wrap", "echo ran >> "+runs+"; sleep 3; echo finished ${#BIGVAR3}")
	c.extraEnv = nil
	c.waitFor("the job to start", 30*time.Second, func() bool { return readFileOr(runs) == "ran\n" })
	_ = agent.Process.Signal(syscall.SIGKILL)
	_ = agent.Wait()
	daemon("agent", "--name", "bigenv1")
	c.waitState(id, "COMPLETED", 60*time.Second)
	if got := readFileOr(out); got != "finished 60000\n" {
		t.Errorf("output after an agent restart: %q", got)
	}
	if got := readFileOr(runs); got != "ran\n" {
		t.Errorf("the job ran %d times", strings.Count(got, "ran"))
	}
	if r := c.jobField(id, "Restarts"); r != "0" {
		t.Errorf("Restarts=%s", r)
	}
}
