//go:build unix

package executor

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

const testUser = "drovertest1"

// needTestUser returns drovertest1's uid and gid, creating the account when
// missing. Other packages' tests may race to create it: a failed useradd is
// fine if the user exists afterwards.
func needTestUser(t *testing.T) (uid, gid uint32) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to switch users")
	}
	u, err := user.Lookup(testUser)
	if err != nil {
		out, addErr := exec.Command("useradd", "-m", testUser).CombinedOutput()
		if u, err = user.Lookup(testUser); err != nil {
			t.Fatalf("useradd %s: %v: %s", testUser, addErr, out)
		}
	}
	ui, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gi, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err1 != nil || err2 != nil {
		t.Fatalf("bad ids for %s: %q %q", testUser, u.Uid, u.Gid)
	}
	return uint32(ui), uint32(gi)
}

func TestRunsAsUser(t *testing.T) {
	uid, gid := needTestUser(t)
	dir := testDir(t, true)
	outDir := filepath.Join(dir, "out")
	if err := os.Mkdir(outDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(outDir, int(uid), int(gid)); err != nil {
		t.Fatal(err)
	}
	spec := scriptSpec(t, dir, "id -u; id -g; id -G")
	spec.UID, spec.GID = uid, gid
	spec.Dir = outDir
	spec.Stdout = filepath.Join(outDir, "job.out")
	r := run(t, spec)
	if r.Err != nil || r.ExitCode != 0 {
		t.Fatalf("got %+v", r)
	}
	// Only the primary group: root's supplementary groups were cleared.
	want := fmt.Sprintf("%d\n%d\n%d\n", uid, gid, gid)
	if got := readFile(t, spec.Stdout); got != want {
		t.Errorf("id output %q, want %q", got, want)
	}
	st, err := os.Stat(spec.Stdout)
	if err != nil {
		t.Fatal(err)
	}
	sys := st.Sys().(*syscall.Stat_t)
	if sys.Uid != uid || sys.Gid != gid {
		t.Errorf("output file owned by %d:%d, want %d:%d", sys.Uid, sys.Gid, uid, gid)
	}
}

func TestSupplementaryGroups(t *testing.T) {
	uid, gid := needTestUser(t)
	dir := testDir(t, true)
	var out syncBuffer
	spec := scriptSpec(t, dir, "id -G")
	spec.UID, spec.GID, spec.Groups = uid, gid, []uint32{gid, 4242}
	spec.Dir = "/"
	spec.StdoutW = &out
	if r := run(t, spec); r.Err != nil || r.ExitCode != 0 {
		t.Fatalf("got %+v", r)
	}
	if got := strings.Fields(out.String()); len(got) != 2 || got[1] != "4242" {
		t.Errorf("id -G = %q, want [%d 4242]", out.String(), gid)
	}
}

// The point of the helper: a user must not get a root-created file where
// the user could not create one.
func TestUserCannotWriteOutputDir(t *testing.T) {
	uid, gid := needTestUser(t)
	dir := testDir(t, true) // root-owned, 0755: not writable by the user
	spec := scriptSpec(t, dir, "echo should not run")
	spec.UID, spec.GID = uid, gid
	spec.Stdout = filepath.Join(dir, "job.out")
	r := run(t, spec)
	if r.Err == nil || !strings.Contains(r.Err.Error(), "permission denied") {
		t.Fatalf("got %+v, want a permission error", r)
	}
	if _, err := os.Stat(spec.Stdout); !os.IsNotExist(err) {
		t.Fatalf("output file exists after a refused launch (stat: %v)", err)
	}
}

func TestUserCannotChdir(t *testing.T) {
	uid, gid := needTestUser(t)
	dir := testDir(t, true)
	private := filepath.Join(dir, "private")
	if err := os.Mkdir(private, 0o700); err != nil {
		t.Fatal(err)
	}
	spec := scriptSpec(t, dir, "echo should not run")
	spec.UID, spec.GID = uid, gid
	spec.Dir = private // root could enter it; the user cannot
	r := run(t, spec)
	if r.Err == nil || !strings.Contains(r.Err.Error(), "cannot change directory") {
		t.Fatalf("got %+v, want a chdir error", r)
	}
}

func TestUnprivilegedCannotSwitchUser(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("only meaningful when the tests do not run as root")
	}
	spec := scriptSpec(t, testDir(t, false), "echo should not run")
	spec.UID = uint32(os.Getuid()) + 1
	r := run(t, spec)
	if r.Err == nil || !strings.Contains(r.Err.Error(), "not root") {
		t.Fatalf("got %+v, want a refusal", r)
	}
}
