package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestKilledSrunEndsItsStep: srun killed with SIGKILL (no chance to
// cancel its step) does not leave the step's tasks running: the node
// notices srun's connection is gone and, MessageTimeout later, kills the
// step, as slurmctld does for a step whose srun stopped answering. The
// batch script then goes on.
func TestKilledSrunEndsItsStep(t *testing.T) {
	t.Parallel()
	c := startUp(t, 1, "--conf", "MessageTimeout=2")
	pidFile := filepath.Join(c.dir, "srun.pid")
	id := c.sbatch("-o", filepath.Join(c.dir, "loss.out"), "--wrap",
		"srun sleep 3171 & echo $! > "+pidFile+"; wait; echo after-srun; sleep 120")
	c.waitState(id, "RUNNING", 30*time.Second)
	var srunPID int
	c.waitFor("the step's task to run", 30*time.Second, func() bool {
		b, _ := os.ReadFile(pidFile)
		srunPID, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		return srunPID > 0 && taskRunning("3171")
	})
	if err := syscall.Kill(srunPID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	// The batch script outlives srun (it sleeps on): only the step's own
	// end can take the task away.
	c.waitFor("the step's task to be killed after its srun died", 30*time.Second, func() bool { return !taskRunning("3171") })
	t.Logf("task gone %s after srun's SIGKILL", time.Since(killed).Round(100*time.Millisecond))
	if st := c.jobField(id, "JobState"); st != "RUNNING" {
		t.Fatalf("job %s is %s: the task went with the job, not with its srun", id, st)
	}
	c.waitFor("the batch script to go on after the step", 30*time.Second, func() bool {
		b, _ := os.ReadFile(filepath.Join(c.dir, "loss.out"))
		return strings.Contains(string(b), "after-srun")
	})
	c.must("scancel", id)
}

// taskRunning reports whether a "sleep <marker>" process runs.
func taskRunning(marker string) bool {
	return exec.Command("pgrep", "-f", "^sleep "+marker+"$").Run() == nil
}

// TestSattachStdinEndKeepsSrunStdin: an sattach whose input ends (here
// /dev/null) must not end the tasks' input: srun's stdin still reaches
// them afterwards.
func TestSattachStdinEndKeepsSrunStdin(t *testing.T) {
	t.Parallel()
	c := startUp(t, 1)
	srun := exec.Command(filepath.Join(binDir, "srun"), "-n1", "bash", "-c",
		`echo ready; while read l; do echo got:$l; done; echo stdin-closed`)
	srun.Dir, srun.Env = c.dir, c.env()
	var out, errOut syncBuffer
	srun.Stdout, srun.Stderr = &out, &errOut
	in, err := srun.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := srun.Start(); err != nil {
		t.Fatal(err)
	}
	defer srun.Process.Kill()
	c.waitFor("the task to start", 30*time.Second, func() bool { return strings.Contains(out.String(), "ready") })
	var step string
	c.waitFor("the step in squeue", 30*time.Second, func() bool {
		o, _, _ := c.run("squeue", "-s", "-h", "-o", "%i")
		for _, f := range strings.Fields(o) {
			if strings.HasSuffix(f, ".0") {
				step = f
				return true
			}
		}
		return false
	})
	att := exec.Command(filepath.Join(binDir, "sattach"), step) // stdin: /dev/null, at EOF at once
	att.Dir, att.Env = c.dir, c.env()
	var aout syncBuffer
	att.Stdout = &aout
	if err := att.Start(); err != nil {
		t.Fatal(err)
	}
	defer att.Process.Kill()
	n := 0
	c.waitFor("sattach to see the task read srun's input", 30*time.Second, func() bool {
		n++
		_, _ = in.Write([]byte("ping" + strconv.Itoa(n) + "\n"))
		time.Sleep(100 * time.Millisecond) // pace the pings; the wait itself is bounded above
		return strings.Contains(aout.String(), "got:ping")
	})
	if _, err := in.Write([]byte("final\n")); err != nil {
		t.Fatal(err)
	}
	c.waitFor("the task to read srun's input after sattach's ended", 20*time.Second, func() bool {
		return strings.Contains(out.String(), "got:final")
	})
	if strings.Contains(out.String(), "stdin-closed") {
		t.Errorf("the task's stdin was closed: %q", out.String())
	}
	in.Close()
	if err := srun.Wait(); err != nil {
		t.Errorf("srun after its stdin ended: %v %q", err, errOut.String())
	}
	if !strings.Contains(out.String(), "stdin-closed") {
		t.Errorf("srun's own end of input did not reach the task: %q", out.String())
	}
}
