package e2e

import (
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestAgentStartedBeforeController: an agent started before the
// controller's very first start (no cluster CA yet) waits, saying so, and
// registers once the controller is up (issue 12 B4).
func TestAgentStartedBeforeController(t *testing.T) {
	t.Parallel()
	c, daemon := manualCluster(t, "agentfirst", "SlurmdTimeout=30\n")
	var log syncBuffer
	agent := exec.Command(filepath.Join(binDir, "drover"), "agent", "--name", "agentfirst1", "-f", c.conf)
	agent.Stdout, agent.Stderr = &log, &log
	if err := agent.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- agent.Wait() }()
	t.Cleanup(func() {
		_ = agent.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			_ = agent.Process.Kill()
		}
	})
	c.waitFor("the agent to say what it waits for", 30*time.Second, func() bool {
		select {
		case err := <-exited:
			t.Fatalf("the agent exited before the controller started: %v\n%s", err, log.String())
		default:
		}
		return strings.Contains(log.String(), "waiting for the cluster's credentials")
	})
	daemon("controller")
	c.waitFor("agentfirst1 to register", 60*time.Second, func() bool { s, _ := c.nodeReason("agentfirst1"); return s == "idle" })
	id := c.sbatch("-o", "/dev/null", "--wrap", "true")
	c.waitState(id, "COMPLETED", 30*time.Second)
}
