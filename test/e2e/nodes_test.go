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

// TestMultiNodeAndNodeLoss runs a three-node cluster: jobs spread over the
// nodes, a multi-node job gets a compressed node list, and killing an agent
// ends its job NODE_FAIL and marks the node down.
func TestMultiNodeAndNodeLoss(t *testing.T) {
	t.Parallel()
	c := startUp(t, 3, "--cpus", "2")
	node2 := c.node(2)
	out := c.must("sinfo", "-h", "-o", "%P %D %N")
	if strings.TrimSpace(out) != c.named("debug* 3 node[1-3]") {
		t.Errorf("sinfo: %q", out)
	}
	id := c.sbatch("-N", "3", "-o", "multi-%j.out", "--wrap", "echo $SLURM_JOB_NODELIST $SLURM_NNODES $SLURMD_NODENAME")
	c.waitState(id, "COMPLETED", 30*time.Second)
	if got := strings.TrimSpace(readFile(t, filepath.Join(c.dir, "multi-"+id+".out"))); got != c.named("node[1-3] 3 node1") {
		t.Errorf("multi-node env: %q", got)
	}

	pidFile := filepath.Join(c.dir, "orphan.pid")
	long := c.sbatch("-w", node2, "--no-requeue", "-o", "/dev/null", "--wrap", "sleep 300 & echo $! > "+pidFile+"; wait")
	// A lost node's job processes are left behind (as a hung slurmd's
	// slurmstepds are); clean them up after the test.
	pidFile2 := filepath.Join(c.dir, "orphan2.pid")
	var again string
	t.Cleanup(func() {
		for f, job := range map[string]string{pidFile: long, pidFile2: again} {
			if b, err := os.ReadFile(f); err == nil {
				if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
					killJobProcess(pid, job, node2, false)
				}
			}
		}
	})
	again = c.sbatch("-w", node2, "--requeue", "-o", "/dev/null", "--wrap", "sleep 300 & echo $! > "+pidFile2+"; wait")
	c.waitState(long, "RUNNING", 30*time.Second)
	c.waitState(again, "RUNNING", 30*time.Second)
	if n := c.jobField(long, "NodeList"); n != node2 {
		t.Fatalf("job on %q, want %s", n, node2)
	}
	// A node that stops answering: its agent frozen (`drover up` would
	// start a killed one again at once, which is no node loss).
	pid := c.agentPID(t, node2)
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { // only while pid is still that agent (pids are reused)
		if cmd, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline")); strings.Contains(string(cmd), "--name\x00"+node2+"\x00") {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	c.waitState(long, "NODE_FAIL", 30*time.Second)
	// A requeueable job (the default, or --requeue) goes back to the queue
	// instead (-w node2 keeps it waiting for the node), a restart counted.
	c.waitState(again, "PENDING", 30*time.Second)
	if r := c.jobField(again, "Restarts"); r != "1" {
		t.Errorf("requeued job Restarts=%s", r)
	}
	c.must("scancel", again)
	c.waitFor(node2+" down", 10*time.Second, func() bool {
		out, _, _ := c.run("sinfo", "-h", "-N", "-n", node2, "-o", "%t")
		return strings.HasPrefix(strings.TrimSpace(out), "down")
	})
	// The other nodes keep working.
	ok := c.sbatch("-N", "2", "-o", "/dev/null", "--wrap", "true")
	c.waitState(ok, "COMPLETED", 30*time.Second)

	// The hung agent killed, `drover up` starts another: the node comes
	// back and ends what the lost jobs left running, cgroups included (a
	// node that runs for months must not keep a group per lost job).
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// In every hierarchy (v1; the one group on v2): the agent may have
	// been frozen inside the Create of job 3's group, which then has a
	// cpuset directory only (cpuset is made first), for the new agent to
	// remove as a group of a job it does not run.
	c.waitFor("the lost jobs' cgroups on "+node2+" removed", 60*time.Second, func() bool {
		v1, _ := filepath.Glob("/sys/fs/cgroup/*/drover/" + node2 + "/job_*")
		v2, _ := filepath.Glob("/sys/fs/cgroup/drover/" + node2 + "/job_*")
		return len(v1)+len(v2) == 0
	})
}

// agentPID finds the agent process of a node of this cluster (other
// clusters on the machine have nodes of the same names).
func (c *cluster) agentPID(t *testing.T, node string) int {
	t.Helper()
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmd, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		args := strings.Split(string(cmd), "\x00")
		if len(args) > 4 && args[1] == "agent" && strings.Contains(string(cmd), "\x00"+c.conf+"\x00") &&
			strings.Contains(string(cmd), "--name\x00"+node+"\x00") {
			return pid
		}
	}
	t.Fatalf("no agent for %s", node)
	return 0
}
