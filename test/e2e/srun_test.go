package e2e

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSrunOutsideAllocation runs commands through srun: output streams
// back, stdin reaches the task, and srun exits with the task's status.
func TestSrunOutsideAllocation(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
	c := startUp(t, 1)
	block := c.sbatch("--exclusive", "-o", "/dev/null", "--wrap", "sleep 300")
	c.waitState(block, "RUNNING", 30*time.Second)
	srun := exec.Command(filepath.Join(binDir, "srun"), "echo", "finally")
	srun.Dir, srun.Env = c.dir, c.env()
	var out, errOut syncBuffer
	srun.Stdout, srun.Stderr = &out, &errOut
	if err := srun.Start(); err != nil {
		t.Fatal(err)
	}
	c.waitFor("srun to queue", 30*time.Second, func() bool { return strings.Contains(errOut.String(), "queued and waiting for resources") })
	c.must("scancel", block)
	if err := srun.Wait(); err != nil || out.String() != "finally\n" {
		t.Fatalf("srun: %v %q %q", err, out.String(), errOut.String())
	}
	if !strings.Contains(errOut.String(), "has been allocated resources") {
		t.Errorf("srun stderr: %q", errOut.String())
	}
	_, bad, code := c.runAs(nil, "", "srun", "-c", "512", "true")
	if code == 0 || !strings.Contains(bad, "Requested node configuration is not available") {
		t.Errorf("impossible srun: %d %q", code, bad)
	}
}
