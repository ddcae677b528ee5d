package e2e

import (
	"strings"
	"testing"
	"time"
)

// TestSrunOutsideAllocation runs commands through srun: output streams
// back, stdin reaches the task, and srun exits with the task's status.
func TestSrunOutsideAllocation(t *testing.T) {
	c := startUp(t, 1)
	out, errOut, code := c.runAs(nil, "", "srun", "bash", "-c", "echo out-$SLURM_JOB_ID; echo err >&2")
	if code != 0 || !strings.HasPrefix(out, "out-") || !strings.Contains(errOut, "err") {
		t.Errorf("srun: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	out, errOut, code = c.runAs(nil, "", "srun", "bash", "-c", "exit 5")
	if code != 5 || !strings.Contains(errOut, "task 0: Exited with exit code 5") {
		t.Errorf("srun exit 5: got %d, %q", code, errOut)
	}
	out, _, code = c.runAs(nil, "hello from stdin\n", "srun", "cat")
	if code != 0 || out != "hello from stdin\n" {
		t.Errorf("srun cat: %d %q", code, out)
	}
}

// TestSrunWaitsForResources: srun announces that it waits, runs once the
// node frees up, and an impossible request is refused at once.
func TestSrunWaitsForResources(t *testing.T) {
	c := startUp(t, 1)
	block := c.sbatch("--exclusive", "-o", "/dev/null", "--wrap", "sleep 2")
	c.waitState(block, "RUNNING", 30*time.Second)
	out, errOut, code := c.runAs(nil, "", "srun", "echo", "finally")
	if code != 0 || out != "finally\n" {
		t.Fatalf("srun: %d %q %q", code, out, errOut)
	}
	if !strings.Contains(errOut, "queued and waiting for resources") || !strings.Contains(errOut, "has been allocated resources") {
		t.Errorf("srun stderr: %q", errOut)
	}
	_, errOut, code = c.runAs(nil, "", "srun", "-c", "512", "true")
	if code == 0 || !strings.Contains(errOut, "Requested node configuration is not available") {
		t.Errorf("impossible srun: %d %q", code, errOut)
	}
}
