package e2e

import (
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// pidOf is the pid of the cluster's daemon whose command line holds all
// of words (0: none).
func (c *cluster) pidOf(words ...string) int {
	out, _ := exec.Command("pgrep", "-f", "drover "+words[0]+" -f "+c.conf+strings.Join(append([]string{""}, words[1:]...), " ")).Output()
	f := strings.Fields(string(out))
	if len(f) == 0 {
		return 0
	}
	n, _ := strconv.Atoi(f[0])
	return n
}

// TestUpRestartsDaemons: `drover up` notices a controller or an agent
// that died and starts it again; jobs go on.
func TestUpRestartsDaemons(t *testing.T) {
	t.Parallel()
	c := startUp(t, 2)
	id := c.sbatch("-o", "/dev/null", "--wrap", "sleep 20")
	c.waitState(id, "RUNNING", 30*time.Second)

	ctl := c.pidOf("controller")
	if ctl == 0 {
		t.Fatal("no controller process found")
	}
	if err := syscall.Kill(ctl, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	c.waitFor("a new controller", 30*time.Second, func() bool {
		p := c.pidOf("controller")
		if p == 0 || p == ctl {
			return false
		}
		_, _, code := c.run("sinfo", "-h")
		return code == 0
	})
	if st := c.jobField(id, "JobState"); st != "RUNNING" {
		t.Errorf("job %s after the controller's restart: %s", id, st)
	}

	node2 := c.node(2)
	agent := c.pidOf("agent", "--name", node2)
	if agent == 0 {
		t.Fatal("no agent process for " + node2)
	}
	if err := syscall.Kill(agent, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	c.waitFor(node2+"'s agent to come back", 30*time.Second, func() bool {
		p := c.pidOf("agent", "--name", node2)
		return p != 0 && p != agent
	})
	c.waitFor(node2+" to answer again", 30*time.Second, func() bool {
		out, _, _ := c.run("sinfo", "-h", "-N", "-n", node2, "-o", "%t")
		s := strings.TrimSpace(out)
		return s == "idle" || s == "mix" || s == "alloc"
	})
	c.must("scancel", id)
}
