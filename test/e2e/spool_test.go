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

// TestSpoolDirKeptForTheUsersNextJob: a finished job's spool directory is
// kept, its script emptied, for the same user's next job, which rewrites
// the script in place. Each job runs its own script (a shorter one after a
// longer one leaves nothing of the first), and what the user may plant in
// the kept directory meanwhile (a symlink to root's file where the script
// is) gets nothing written through it: the next job's directory is made
// afresh.
func TestSpoolDirKeptForTheUsersNextJob(t *testing.T) {
	t.Parallel()
	// Kept only once the job's cgroup is removed: with no cgroups nothing is.
	cgroupV1(t)
	u := testUser(t, "drovere2e")
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	c := startUp(t, 1)
	node := strings.TrimSpace(c.must("sinfo", "-h", "-N", "-o", "%N"))
	spool := filepath.Join(c.dir, "spool", node)
	secret := filepath.Join(c.dir, "root-only")
	if err := os.WriteFile(secret, []byte("root's\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(name, wrap string) string {
		t.Helper()
		out := filepath.Join(u.HomeDir, "spool-keep-"+name+".out")
		_ = os.Remove(out)
		id := c.runAsSbatch(t, u, "-o", out, "--wrap", wrap)
		c.waitFor("job "+name+" to end", 60*time.Second, func() bool {
			s := c.jobField(id, "JobState")
			return s != "" && s != "PENDING" && s != "RUNNING" && s != "CONFIGURING" && s != "COMPLETING"
		})
		if s := c.jobField(id, "JobState"); s != "COMPLETED" {
			t.Errorf("job %s: %s, want COMPLETED", name, s)
		}
		return readFile(t, out)
	}
	// kept is the user's kept directory once the agent has emptied it.
	kept := func() string {
		ents, _ := os.ReadDir(spool)
		for _, e := range ents {
			d := filepath.Join(spool, e.Name())
			st, err := os.Lstat(d)
			if err != nil || !strings.HasPrefix(e.Name(), ".gone-") || st.Sys().(*syscall.Stat_t).Uid != uint32(uid) {
				continue
			}
			if s, err := os.Lstat(filepath.Join(d, "slurm_script")); err == nil && s.Size() == 0 {
				return d
			}
		}
		return ""
	}
	long := "echo first-$(id -u); : a longer script than the next one, so that a rewrite must truncate it"
	if got := run("first", long); got != "first-"+u.Uid+"\n" {
		t.Errorf("first job's output %q", got)
	}
	c.waitFor("the first job's spool directory to be kept", 30*time.Second, func() bool { return kept() != "" })
	if got := run("second", "echo second"); got != "second\n" {
		t.Errorf("second job's output %q (the kept script must be rewritten whole)", got)
	}

	c.waitFor("the second job's spool directory to be kept", 30*time.Second, func() bool { return kept() != "" })
	script := filepath.Join(kept(), "slurm_script")
	if err := os.Remove(script); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, script); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Lchown(script, uid, gid); err != nil {
		t.Fatal(err)
	}
	if got := run("third", "echo third"); got != "third\n" {
		t.Errorf("third job's output %q", got)
	}
	if b, _ := os.ReadFile(secret); string(b) != "root's\n" {
		t.Fatalf("root's file was written through the user's symlink: %q", b)
	}
}
