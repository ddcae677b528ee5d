package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestHealthDrainLiftedByNextAgent: a node drained by its health check is
// undrained when the check passes again, even if the agent that saw the
// failure is gone (the verdict is resent on every registration); an
// administrator's drain stays whatever its reason (issue 12 B3).
func TestHealthDrainLiftedByNextAgent(t *testing.T) {
	t.Parallel()
	c, daemon := manualCluster(t, "healthre", "SlurmdTimeout=30\n")
	sick := filepath.Join(c.dir, "sick")
	writeScript(t, filepath.Join(c.dir, "health.sh"), "#!/bin/sh\nif [ -e "+sick+" ]; then echo 'fan 2 failed'; exit 1; fi\n")
	f, err := os.OpenFile(c.conf, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = f.WriteString("HealthCheckProgram=" + filepath.Join(c.dir, "health.sh") + "\nHealthCheckInterval=1\n")
	f.Close()
	daemon("controller")
	c.waitFor("controller", 30*time.Second, func() bool { _, _, code := c.run("scontrol", "ping"); return code == 0 })
	agent := func() (*exec.Cmd, *syncBuffer) {
		var log syncBuffer
		cmd := exec.Command(filepath.Join(binDir, "drover"), "agent", "--name", "healthre1", "-f", c.conf)
		cmd.Stdout, cmd.Stderr = &log, &log
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Signal(syscall.SIGTERM); _ = cmd.Wait() })
		return cmd, &log
	}
	a, _ := agent()
	idle := func() bool { s, _ := c.nodeReason("healthre1"); return s == "idle" }
	c.waitFor("healthre1 idle", 30*time.Second, idle)

	writeScript(t, sick, "")
	c.waitFor("health drain", 30*time.Second, func() bool {
		s, r := c.nodeReason("healthre1")
		return strings.HasPrefix(s, "drain") && r == "fan 2 failed"
	})
	// The agent that saw the failure dies; the problem is fixed; the next
	// agent's passing check lifts the drain.
	_ = a.Process.Signal(syscall.SIGKILL)
	_ = a.Wait()
	os.Remove(sick)
	a, log := agent()
	c.waitFor("the health drain lifted by the next agent", 30*time.Second, idle)

	// An administrator's drain, even with the health check's reason, stays
	// through a failure and recovery of the check and a new agent.
	c.must("scontrol", "update", "nodename=healthre1", "state=drain", "reason=fan 2 failed")
	writeScript(t, sick, "")
	c.waitFor("the check to fail", 30*time.Second, func() bool { return strings.Contains(log.String(), "node unhealthy") })
	os.Remove(sick)
	c.waitFor("the check to pass", 30*time.Second, func() bool { return strings.Contains(log.String(), "node healthy again") })
	_ = a.Process.Signal(syscall.SIGKILL)
	_ = a.Wait()
	_, log = agent()
	c.waitFor("the next agent's first verdict", 30*time.Second, func() bool { return strings.Contains(log.String(), "node healthy") })
	c.waitFor("the node to answer", 30*time.Second, func() bool {
		out, _, _ := c.run("sinfo", "-h", "-N", "-n", "healthre1", "-o", "%t")
		return !strings.HasSuffix(strings.TrimSpace(out), "*")
	})
	if s, r := c.nodeReason("healthre1"); !strings.HasPrefix(s, "drain") || r != "fan 2 failed" {
		t.Fatalf("an administrator's drain was lifted by the health check: %s %q", s, r)
	}
	c.must("scontrol", "update", "nodename=healthre1", "state=resume")
	c.waitFor("healthre1 idle after resume", 30*time.Second, idle)
}
