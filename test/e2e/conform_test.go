package e2e

import (
	"strings"
	"testing"
	"time"
)

// TestKillInvalidDep checks issue 17 item 1: a job whose dependency can
// never be satisfied is cancelled at once under --kill-on-invalid-dep=yes
// or DependencyParameters=kill_invalid_depend, and kept pending under
// --kill-on-invalid-dep=no.
func TestKillInvalidDep(t *testing.T) {
	c := startUp(t, 1, "--conf", "DependencyParameters=kill_invalid_depend")
	failed := c.sbatch("-o", "/dev/null", "--wrap", "exit 3")
	c.waitState(failed, "FAILED", 30*time.Second)

	yes := c.sbatch("-o", "/dev/null", "-d", "afterok:"+failed, "--kill-on-invalid-dep=yes", "--wrap", "true")
	byConf := c.sbatch("-o", "/dev/null", "-d", "afterok:"+failed, "--wrap", "true")
	no := c.sbatch("-o", "/dev/null", "-d", "afterok:"+failed, "--kill-on-invalid-dep=no", "--wrap", "true")
	for _, id := range []string{yes, byConf} {
		c.waitState(id, "CANCELLED", 20*time.Second)
		if r := c.jobField(id, "Reason"); r != "DependencyNeverSatisfied" {
			t.Errorf("job %s: reason %q, want DependencyNeverSatisfied", id, r)
		}
	}
	c.waitFor("reason of the job that stays", 20*time.Second, func() bool {
		return c.jobField(no, "Reason") == "DependencyNeverSatisfied"
	})
	if s := c.jobField(no, "JobState"); s != "PENDING" {
		t.Errorf("--kill-on-invalid-dep=no: state %s, want PENDING", s)
	}
	c.waitFor("sacct rows", 20*time.Second, func() bool {
		out, _, _ := c.run("sacct", "-n", "-X", "-P", "-o", "jobid,state", "-j", yes+","+byConf)
		return strings.Count(out, "|CANCELLED") == 2
	})
	_, errOut, code := c.run("sbatch", "--kill-on-invalid-dep=maybe", "--wrap", "true")
	if code != 255 || !strings.Contains(errOut, "Invalid --kill-on-invalid-dep specification") {
		t.Errorf("bad value: exit %d, stderr %q", code, errOut)
	}
	c.must("scancel", no)
}
