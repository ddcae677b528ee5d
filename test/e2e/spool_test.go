package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestBatchScriptNotWrittenThroughUserLink: a user's leftover spool
// directory (a crashed agent's, say) holds a symlink where the next run's
// batch script goes, pointing at a file of root's. The agent writes the
// script as the user, never through the link: root's file is untouched and
// the job runs its own script.
func TestBatchScriptNotWrittenThroughUserLink(t *testing.T) {
	t.Parallel()
	u := testUser(t, "drovere2e")
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	c := startUp(t, 1)
	node := strings.TrimSpace(c.must("sinfo", "-h", "-N", "-o", "%N"))
	secret := filepath.Join(c.dir, "root-only")
	if err := os.WriteFile(secret, []byte("root's\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(u.HomeDir, "spool-attack.out")
	_ = os.Remove(out)
	o, e, code := c.runAs(u, "", "sbatch", "-H", "-o", out, "--wrap", "echo ran-as-$(id -u)")
	m := regexp.MustCompile(`Submitted batch job (\d+)`).FindStringSubmatch(o)
	if code != 0 || m == nil {
		t.Fatalf("sbatch: exit %d %s %s", code, o, e)
	}
	id := m[1]
	// The planted directory, as an earlier run of the user's would leave it.
	left := filepath.Join(c.dir, "spool", node, "job"+id)
	if err := os.MkdirAll(left, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(left, "slurm_script")); err != nil {
		t.Fatal(err)
	}
	if err := os.Lchown(left, uid, gid); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Lchown(filepath.Join(left, "slurm_script"), uid, gid); err != nil {
		t.Fatal(err)
	}
	c.must("scontrol", "release", id)
	c.waitFor("the job to end", 60*time.Second, func() bool {
		s := c.jobField(id, "JobState")
		return s != "" && s != "PENDING" && s != "RUNNING" && s != "CONFIGURING" && s != "COMPLETING"
	})
	if b, _ := os.ReadFile(secret); string(b) != "root's\n" {
		t.Fatalf("root's file was written through the user's symlink: %q", b)
	}
	if s := c.jobField(id, "JobState"); s != "COMPLETED" {
		t.Errorf("job %s, want COMPLETED", s)
	}
	if got := readFile(t, out); got != "ran-as-"+u.Uid+"\n" {
		t.Errorf("job output %q", got)
	}
}
