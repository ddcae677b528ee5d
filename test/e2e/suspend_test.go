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

// TestSuspendResume: scontrol suspend freezes every process of a job
// (cgroup freezer), the job shows SUSPENDED and its run time and time
// limit stop; resume thaws it and it finishes; users may do neither.
func TestSuspendResume(t *testing.T) {
	t.Parallel()
	u := testUser(t, "drovere2e")
	c := startUp(t, 1)
	out := filepath.Join(c.dir, "ticks")
	// A job that ticks into a file; its time limit (8 s) is shorter than
	// its run plus the suspension, so it finishes only if suspended time
	// does not count.
	pidFile := filepath.Join(c.dir, "pid")
	id := c.sbatch("-t", "0:08", "-o", os.DevNull, "--wrap",
		"echo $$ > "+pidFile+"; for i in $(seq 1 12); do echo $i >> "+out+"; sleep 0.5; done; srun true; echo done >> "+out)
	c.waitState(id, "RUNNING", 30*time.Second)
	c.waitFor("the job to tick", 10*time.Second, func() bool { b, _ := os.ReadFile(out); return len(b) > 0 })
	pid := pidIn(t, pidFile)

	if _, errOut, code := c.runAs(u, "", "scontrol", "suspend", id); code != 1 || !strings.Contains(errOut, "Access/permission denied for job "+id) {
		t.Errorf("suspend as a user: %d %q", code, errOut)
	}
	c.must("scontrol", "suspend", id)
	if st := c.jobField(id, "JobState"); st != "SUSPENDED" {
		t.Fatalf("JobState=%s after suspend", st)
	}
	if got := strings.TrimSpace(c.must("squeue", "-h", "-j", id, "-o", "%t")); got != "S" {
		t.Errorf("squeue %%t = %q, want S", got)
	}
	// Frozen: nothing more is written while suspended. scontrol returns
	// once the controller recorded the suspension; the node freezes the
	// job when its message arrives (as slurmd does), so the samples start
	// once the freezer holds the job.
	c.waitFor("the job's cgroup to be frozen", 30*time.Second, func() bool { return frozen(pid) })
	b1, _ := os.ReadFile(out)
	deadline := time.Now().Add(4 * time.Second)
	for time.Now().Before(deadline) {
		time.Sleep(500 * time.Millisecond) // the suspension itself is what is measured
		if b2, _ := os.ReadFile(out); len(b2) != len(b1) {
			t.Fatalf("the job kept writing while suspended: %q -> %q", b1, b2)
		}
	}
	run1 := c.jobField(id, "RunTime")
	if pre := c.jobField(id, "SecsPreSuspend"); pre == "" || pre == "0" && len(b1) > 6 {
		t.Errorf("SecsPreSuspend=%s", pre)
	}
	if _, errOut, code := c.run("scontrol", "suspend", "99999"); code == 0 {
		t.Errorf("suspend of an unknown job: %q", errOut)
	}
	c.must("scontrol", "resume", id)
	if _, errOut, code := c.run("scontrol", "resume", id); code != 1 || !strings.Contains(errOut, "Job is not suspended for job "+id) {
		t.Errorf("second resume: %d %q", code, errOut)
	}
	c.waitState(id, "COMPLETED", 30*time.Second)
	if got := readFile(t, out); !strings.HasSuffix(got, "12\ndone\n") {
		t.Errorf("job output %q", got)
	}
	// Run time left the suspension out: it is below wall time.
	secs := func(s string) int {
		p := strings.Split(s, ":")
		n := 0
		for _, x := range p {
			v, _ := strconv.Atoi(x)
			n = n*60 + v
		}
		return n
	}
	if rt := secs(c.jobField(id, "RunTime")); rt > 8 || secs(run1) > 4 {
		t.Errorf("RunTime=%s (at suspension %s): suspended time was counted", c.jobField(id, "RunTime"), run1)
	}
}

// TestStoppedClusterEndsSuspendedJob: stopping `drover up` (its agents
// kill their jobs) ends a suspended job too. Frozen, the job could not act
// on the kill: it and its supervisor stayed, holding whatever the agent
// had inherited (an e2e run's lock) for as long as the job was meant to run.
func TestStoppedClusterEndsSuspendedJob(t *testing.T) {
	t.Parallel()
	c := startUp(t, 1)
	pidFile := filepath.Join(c.dir, "pid")
	id := c.sbatch("-o", os.DevNull, "--wrap", "echo $$ > "+pidFile+"; sleep 300")
	c.waitFor("the job to write its pid", 30*time.Second, func() bool { return strings.HasSuffix(readFileOr(pidFile), "\n") })
	pid, err := strconv.Atoi(strings.TrimSpace(readFileOr(pidFile)))
	if err != nil {
		t.Fatal(err)
	}
	freezer := "/sys/fs/cgroup/freezer/drover/" + c.node(1) + "/job_" + id
	ours := func() bool { // the pid is still this job's (pids are reused)
		b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cgroup")
		return strings.Contains(string(b), "/job_"+id+"/")
	}
	t.Cleanup(func() {
		if ours() { // left frozen: thaw and end it, so it does not outlive the test
			_ = os.WriteFile(filepath.Join(freezer, "freezer.state"), []byte("THAWED"), 0o644)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	c.must("scontrol", "suspend", id)
	c.waitState(id, "SUSPENDED", 30*time.Second)
	c.stop()
	c.waitFor("the suspended job's script to end with its cluster", 30*time.Second, func() bool { return !ours() })
}

// TestAgentRestartKeepsSuspension: an agent restarted while a job is
// suspended takes the job back suspended: its time limit does not run out
// while it stays suspended past it, and scontrol resume thaws it. Before,
// the new agent took the job for running: it counted the limit, and it
// ignored the resume (the job was not suspended as far as it knew), so
// the job stayed frozen.
func TestAgentRestartKeepsSuspension(t *testing.T) {
	t.Parallel()
	c, daemon := manualCluster(t, "susprst", "SlurmdTimeout=30\n")
	dir := c.dir
	daemon("controller")
	c.waitFor("controller", 30*time.Second, func() bool { _, _, code := c.run("scontrol", "ping"); return code == 0 })
	agent := daemon("agent", "--name", "susprst1")
	c.waitFor("node up", 60*time.Second, func() bool {
		o, _, _ := c.run("sinfo", "-h", "-o", "%t")
		return strings.TrimSpace(o) == "idle"
	})
	const limit = 15 * time.Second
	pidFile, gate, out := filepath.Join(dir, "pid"), filepath.Join(dir, "go"), filepath.Join(dir, "out")
	submitted := time.Now()
	id := c.sbatch("-t", "0:15", "-o", out, "--wrap", "echo $$ > "+pidFile+".tmp; mv "+pidFile+".tmp "+pidFile+
		"; while [ ! -e "+gate+" ]; do sleep 0.1; done; echo done")
	var pid int
	c.waitFor("the script to write its pid", 30*time.Second, func() bool {
		pid, _ = strconv.Atoi(strings.TrimSpace(readFileOr(pidFile)))
		return pid > 0
	})
	freezer := "/sys/fs/cgroup/freezer/drover/susprst1/job_" + id
	if _, err := os.Stat(freezer); err != nil {
		t.Skipf("no cgroup v1 freezer for the job (%v)", err)
	}
	t.Cleanup(func() {
		_ = os.WriteFile(filepath.Join(freezer, "freezer.state"), []byte("THAWED"), 0o644)
		killJobProcess(pid, id, "susprst1", false)
	})
	c.must("scontrol", "suspend", id)
	c.waitFor("the job's cgroup to be frozen", 30*time.Second, func() bool {
		return strings.TrimSpace(readFileOr(filepath.Join(freezer, "freezer.state"))) == "FROZEN"
	})
	_ = agent.Process.Signal(syscall.SIGKILL)
	_ = agent.Wait()
	daemon("agent", "--name", "susprst1")
	c.waitFor("the restarted agent to register", 60*time.Second, func() bool {
		o, _, _ := c.run("sinfo", "-h", "-o", "%t")
		return strings.TrimSpace(o) == "mix" || strings.TrimSpace(o) == "alloc"
	})
	// Suspended past its time limit: it must not time out.
	c.waitFor("the job's time limit to pass while it is suspended", 2*limit, func() bool {
		if st := c.jobField(id, "JobState"); st != "SUSPENDED" {
			t.Fatalf("job %s is %s while suspended across an agent restart", id, st)
		}
		return time.Since(submitted) > limit+3*time.Second
	})
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	c.must("scontrol", "resume", id)
	c.waitState(id, "COMPLETED", 30*time.Second)
	if got := readFileOr(out); got != "done\n" {
		t.Errorf("output %q", got)
	}
}

// TestSuspendResumeWhileAgentAway: scontrol suspend and resume reach a
// node whose agent was stopped when they ran: the restarted agent freezes
// the job, then (after another restart) thaws it, as the controller holds
// it. Before, the message reached nobody and the node ran a job the
// controller showed SUSPENDED (or kept frozen one it showed RUNNING).
func TestSuspendResumeWhileAgentAway(t *testing.T) {
	t.Parallel()
	c, daemon := manualCluster(t, "susaway", "SlurmdTimeout=60\n")
	dir := c.dir
	daemon("controller")
	c.waitFor("controller", 30*time.Second, func() bool { _, _, code := c.run("scontrol", "ping"); return code == 0 })
	agent := daemon("agent", "--name", "susaway1")
	c.waitFor("node up", 60*time.Second, func() bool {
		o, _, _ := c.run("sinfo", "-h", "-o", "%t")
		return strings.TrimSpace(o) == "idle"
	})
	pidFile, gate, out := filepath.Join(dir, "pid"), filepath.Join(dir, "go"), filepath.Join(dir, "out")
	id := c.sbatch("-o", out, "--wrap", "echo $$ > "+pidFile+".tmp; mv "+pidFile+".tmp "+pidFile+
		"; while [ ! -e "+gate+" ]; do sleep 0.1; done; echo done")
	var pid int
	c.waitFor("the script to write its pid", 30*time.Second, func() bool {
		pid, _ = strconv.Atoi(strings.TrimSpace(readFileOr(pidFile)))
		return pid > 0
	})
	freezer := "/sys/fs/cgroup/freezer/drover/susaway1/job_" + id
	if _, err := os.Stat(freezer); err != nil {
		t.Skipf("no cgroup v1 freezer for the job (%v)", err)
	}
	t.Cleanup(func() {
		_ = os.WriteFile(filepath.Join(freezer, "freezer.state"), []byte("THAWED"), 0o644)
		killJobProcess(pid, id, "susaway1", false)
	})
	state := func() string { return strings.TrimSpace(readFileOr(filepath.Join(freezer, "freezer.state"))) }
	restartAgentAfter := func(cmd ...string) {
		_ = agent.Process.Signal(syscall.SIGTERM)
		_ = agent.Wait()
		c.must("scontrol", cmd...)
		agent = daemon("agent", "--name", "susaway1")
	}
	restartAgentAfter("suspend", id)
	c.waitFor("the job frozen by the restarted agent", 30*time.Second, func() bool { return state() == "FROZEN" })
	restartAgentAfter("resume", id)
	c.waitFor("the job thawed by the restarted agent", 30*time.Second, func() bool { return state() == "THAWED" })
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	c.waitState(id, "COMPLETED", 30*time.Second)
	if got := readFileOr(out); got != "done\n" {
		t.Errorf("output %q", got)
	}
}

// pidIn reads the pid a job wrote into file.
func pidIn(t *testing.T, file string) int {
	t.Helper()
	pid, err := strconv.Atoi(strings.TrimSpace(readFile(t, file)))
	if err != nil {
		t.Fatalf("pid file %s: %v", file, err)
	}
	return pid
}

// frozen reports whether the freezer holds pid's cgroup: FROZEN in its
// cgroup v1 freezer hierarchy, or "frozen 1" in its cgroup v2 events.
func frozen(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cgroup")
	if err != nil {
		return false
	}
	v2 := ""
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.SplitN(l, ":", 3)
		if len(f) != 3 {
			continue
		}
		if f[1] == "freezer" {
			st, _ := os.ReadFile(filepath.Join("/sys/fs/cgroup/freezer", f[2], "freezer.state"))
			return strings.TrimSpace(string(st)) == "FROZEN"
		}
		if f[0] == "0" && f[1] == "" {
			v2 = f[2]
		}
	}
	ev, _ := os.ReadFile(filepath.Join("/sys/fs/cgroup", v2, "cgroup.events"))
	return v2 != "" && strings.Contains(string(ev), "frozen 1")
}
