package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestJobsRunAsVerifiedUser submits as an unprivileged user: the job runs
// with that user's uid, writes files the user owns, and the user can act
// only on their own jobs.
func TestJobsRunAsVerifiedUser(t *testing.T) {
	t.Parallel()
	u := testUser(t, "drovere2e")
	c := startUp(t, 1)
	out, errOut, code := c.runAs(u, "", "sbatch", "-o", "whoami-%j.out", "--wrap", "id -u; id -un; echo home=$HOME")
	if code != 0 {
		t.Fatalf("sbatch as %s: %d %s", u.Username, code, errOut)
	}
	id := strings.TrimPrefix(strings.TrimSpace(out), "Submitted batch job ")
	c.waitState(id, "COMPLETED", 30*time.Second)
	path := filepath.Join(u.HomeDir, "whoami-"+id+".out")
	got := readFile(t, path)
	if !strings.HasPrefix(got, u.Uid+"\n"+u.Username+"\n") {
		t.Errorf("job ran as %q, want uid %s", got, u.Uid)
	}
	st, _ := os.Stat(path)
	if uid := st.Sys().(*syscall.Stat_t).Uid; int(uid) != atoi(u.Uid) {
		t.Errorf("output owned by %d, want %s", uid, u.Uid)
	}
	if user := c.jobField(id, "UserId"); !strings.HasPrefix(user, u.Username+"(") {
		t.Errorf("UserId=%s", user)
	}

	// root's job: the user may see it but not cancel, hold or update it.
	rootJob := c.sbatch("-o", "/dev/null", "--wrap", "sleep 60")
	for _, args := range [][]string{{"scancel", rootJob}, {"scontrol", "hold", rootJob}, {"scontrol", "update", "JobId=" + rootJob, "TimeLimit=5"}} {
		_, errOut, code := c.runAs(u, "", args[0], args[1:]...)
		if code == 0 || !strings.Contains(errOut, "Access/permission denied") {
			t.Errorf("%v as user: exit %d, %q", args, code, errOut)
		}
	}
	out, _, _ = c.runAs(u, "", "squeue", "-h", "-o", "%i", "-j", rootJob)
	if strings.TrimSpace(out) != rootJob {
		t.Errorf("user cannot see root's job: %q", out)
	}
	c.must("scancel", rootJob)
	c.waitState(rootJob, "CANCELLED", 30*time.Second)
	// A user cannot write output where they have no rights: the job fails
	// to launch instead of root writing the file.
	out, _, _ = c.runAs(u, "", "sbatch", "-o", "/root/forbidden-%j.out", "--wrap", "true")
	bad := strings.TrimPrefix(strings.TrimSpace(out), "Submitted batch job ")
	c.waitState(bad, "FAILED", 30*time.Second)
	if _, err := os.Stat("/root/forbidden-" + bad + ".out"); err == nil {
		t.Errorf("output file created where the user has no rights")
	}
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}
