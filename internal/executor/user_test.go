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
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
)

const testUser = "drovertest1"

// needTestUser returns drovertest1's uid and gid, creating the account when
// missing. Other packages' tests may race to create it: a failed useradd is
// fine if the user exists afterwards.
func needTestUser(t testing.TB) (uid, gid uint32) {
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

// userDir is a fresh directory of dir owned by the user.
func userDir(t *testing.T, dir, name string, uid, gid uint32) string {
	t.Helper()
	d := filepath.Join(dir, name)
	if err := os.Mkdir(d, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(d, int(uid), int(gid)); err != nil {
		t.Fatal(err)
	}
	return d
}

func TestRunsAsUser(t *testing.T) {
	uid, gid := needTestUser(t)
	bothPaths(t, func(t *testing.T, helper bool) {
		dir := testDir(t, true)
		outDir := userDir(t, dir, "out", uid, gid)
		spec := scriptSpec(t, helper, dir, "id -u; id -g; id -G")
		spec.UID, spec.GID = uid, gid
		spec.Dir = outDir
		spec.Stdout = filepath.Join(outDir, "job.out")
		spec.Stderr = "job.err" // relative to Dir
		r := run(t, spec)
		if r.Err != nil || r.ExitCode != 0 {
			t.Fatalf("got %+v", r)
		}
		// Only the primary group: root's supplementary groups were cleared.
		want := fmt.Sprintf("%d\n%d\n%d\n", uid, gid, gid)
		if got := readFile(t, spec.Stdout); got != want {
			t.Errorf("id output %q, want %q", got, want)
		}
		for _, f := range []string{spec.Stdout, filepath.Join(outDir, "job.err")} {
			st, err := os.Stat(f)
			if err != nil {
				t.Fatal(err)
			}
			sys := st.Sys().(*syscall.Stat_t)
			if sys.Uid != uid || sys.Gid != gid {
				t.Errorf("%s owned by %d:%d, want %d:%d", f, sys.Uid, sys.Gid, uid, gid)
			}
		}
	})
}

func TestSupplementaryGroups(t *testing.T) {
	uid, gid := needTestUser(t)
	bothPaths(t, func(t *testing.T, helper bool) {
		dir := testDir(t, true)
		var out syncBuffer
		spec := scriptSpec(t, helper, dir, "id -G")
		spec.UID, spec.GID, spec.Groups = uid, gid, []uint32{gid, 4242}
		spec.Dir = "/"
		spec.StdoutW = &out
		if r := run(t, spec); r.Err != nil || r.ExitCode != 0 {
			t.Fatalf("got %+v", r)
		}
		if got := strings.Fields(out.String()); len(got) != 2 || got[1] != "4242" {
			t.Errorf("id -G = %q, want [%d 4242]", out.String(), gid)
		}
	})
}

// The supplementary groups also count when the stdio files are opened: a
// file only group 4242 may write is writable.
func TestSupplementaryGroupOpensFile(t *testing.T) {
	uid, gid := needTestUser(t)
	bothPaths(t, func(t *testing.T, helper bool) {
		dir := testDir(t, true)
		shared := filepath.Join(dir, "shared")
		if err := os.Mkdir(shared, 0o770); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(shared, 0, 4242); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(shared, 0o770); err != nil { // past the umask
			t.Fatal(err)
		}
		spec := scriptSpec(t, helper, dir, "echo hi")
		spec.UID, spec.GID = uid, gid
		spec.Stdout = filepath.Join(shared, "job.out")
		r := run(t, spec)
		if r.Err == nil || !strings.Contains(r.Err.Error(), "permission denied") {
			t.Fatalf("without group 4242: got %+v, want permission denied", r)
		}
		spec.Groups = []uint32{4242}
		if r := run(t, spec); r.Err != nil || r.ExitCode != 0 {
			t.Fatalf("with group 4242: got %+v", r)
		}
		if got := readFile(t, spec.Stdout); got != "hi\n" {
			t.Fatalf("got %q", got)
		}
	})
}

// The point of opening as the user: a user must not get a root-created file
// where the user could not create one.
func TestUserCannotWriteOutputDir(t *testing.T) {
	uid, gid := needTestUser(t)
	bothPaths(t, func(t *testing.T, helper bool) {
		dir := testDir(t, true) // root-owned, 0755: not writable by the user
		spec := scriptSpec(t, helper, dir, "echo should not run")
		spec.UID, spec.GID = uid, gid
		spec.Stdout = filepath.Join(dir, "job.out")
		r := run(t, spec)
		if r.Err == nil || r.Err.Error() != "cannot open output file "+spec.Stdout+": permission denied" {
			t.Fatalf("got %+v, want a permission error", r)
		}
		if _, err := os.Stat(spec.Stdout); !os.IsNotExist(err) {
			t.Fatalf("output file exists after a refused launch (stat: %v)", err)
		}
	})
}

// Symlinks are followed with the user's rights only: -o pointing at a file
// the user may not write fails and leaves the file alone; one the user owns
// works. Same for reading stdin.
func TestUserSymlinks(t *testing.T) {
	uid, gid := needTestUser(t)
	bothPaths(t, func(t *testing.T, helper bool) {
		dir := testDir(t, true)
		secret := filepath.Join(dir, "secret")
		if err := os.WriteFile(secret, []byte("root only\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		home := userDir(t, dir, "home", uid, gid)
		for name, target := range map[string]string{"evil.out": secret, "ok.out": filepath.Join(home, "real.out")} {
			if err := os.Symlink(target, filepath.Join(home, name)); err != nil {
				t.Fatal(err)
			}
		}
		spec := scriptSpec(t, helper, dir, "cat; echo written")
		spec.UID, spec.GID, spec.Dir = uid, gid, home

		spec.Stdout = "evil.out"
		r := run(t, spec)
		if r.Err == nil || !strings.Contains(r.Err.Error(), "cannot open output file evil.out: permission denied") {
			t.Fatalf("symlink to root's file: got %+v", r)
		}
		if got := readFile(t, secret); got != "root only\n" {
			t.Fatalf("root's file changed to %q", got)
		}

		spec.Stdout = ""
		spec.Stdin = "evil.out"
		r = run(t, spec)
		if r.Err == nil || !strings.Contains(r.Err.Error(), "cannot open input file evil.out: permission denied") {
			t.Fatalf("reading root's file: got %+v", r)
		}

		spec.Stdin = ""
		spec.Stdout = "ok.out"
		if r := run(t, spec); r.Err != nil || r.ExitCode != 0 {
			t.Fatalf("symlink to the user's file: got %+v", r)
		}
		if got := readFile(t, filepath.Join(home, "real.out")); got != "written\n" {
			t.Fatalf("got %q", got)
		}
	})
}

func TestUserCannotChdir(t *testing.T) {
	uid, gid := needTestUser(t)
	bothPaths(t, func(t *testing.T, helper bool) {
		dir := testDir(t, true)
		private := filepath.Join(dir, "private")
		if err := os.Mkdir(private, 0o700); err != nil {
			t.Fatal(err)
		}
		spec := scriptSpec(t, helper, dir, "echo should not run")
		spec.UID, spec.GID = uid, gid
		spec.Dir = private // root could enter it; the user cannot
		spec.Stdout = "job.out"
		r := run(t, spec)
		if r.Err == nil || r.Err.Error() != "cannot change directory to "+private+": permission denied" {
			t.Fatalf("got %+v, want a chdir error", r)
		}
		if _, err := os.Stat(filepath.Join(private, "job.out")); !os.IsNotExist(err) {
			t.Fatalf("output file created in a directory the user cannot enter (stat: %v)", err)
		}
	})
}

// The direct path opens files as the user on one thread of the agent: the
// agent's other threads, and that thread afterwards, stay root with root's
// groups, even with launches and file creation going on concurrently.
func TestDirectKeepsAgentIdentity(t *testing.T) {
	uid, gid := needTestUser(t)
	origGroups, err := syscall.Getgroups()
	if err != nil {
		t.Fatal(err)
	}
	dir := testDir(t, true)
	home := userDir(t, dir, "home", uid, gid)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var created atomic.Int32
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				f := filepath.Join(dir, fmt.Sprintf("agent-%d-%d", w, i))
				if err := os.WriteFile(f, nil, 0o600); err != nil {
					t.Errorf("agent file: %v", err)
					return
				}
				created.Add(1)
			}
		}()
	}
	base := scriptSpec(t, false, home, "true")
	base.UID, base.GID, base.Groups = uid, gid, []uint32{4242}
	var steps sync.WaitGroup
	for i := range 40 {
		steps.Add(1)
		go func() {
			defer steps.Done()
			spec := *base
			spec.Stdout = fmt.Sprintf("job%d.out", i)
			if i%4 == 0 {
				spec.Stdout = filepath.Join(dir, "denied.out") // fails as the user
			}
			p, err := Start(&spec)
			if err != nil {
				t.Error(err)
				return
			}
			r := p.Wait()
			if (r.Err != nil) != (i%4 == 0) {
				t.Errorf("step %d: %+v", i, r)
			}
		}()
	}
	steps.Wait()
	close(stop)
	wg.Wait()
	if created.Load() == 0 {
		t.Fatal("no agent files created")
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), "agent-") {
			continue
		}
		info, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		if st := info.Sys().(*syscall.Stat_t); st.Uid != 0 || st.Gid != 0 {
			t.Fatalf("%s owned by %d:%d, want root", e.Name(), st.Uid, st.Gid)
		}
	}
	checkThreadsRoot(t, origGroups)
}

// checkThreadsRoot reads every thread's credentials from /proc.
func checkThreadsRoot(t *testing.T, groups []int) {
	t.Helper()
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, g := range groups {
		want = append(want, strconv.Itoa(g))
	}
	for _, task := range tasks {
		b, err := os.ReadFile("/proc/self/task/" + task.Name() + "/status")
		if err != nil {
			continue // thread gone
		}
		for _, line := range strings.Split(string(b), "\n") {
			k, v, _ := strings.Cut(line, ":")
			f := strings.Fields(v)
			switch k {
			case "Uid", "Gid":
				if strings.Join(f, " ") != "0 0 0 0" {
					t.Errorf("thread %s: %s %q (real, effective, saved, fs), want all 0", task.Name(), k, f)
				}
			case "Groups":
				if strings.Join(f, " ") != strings.Join(want, " ") {
					t.Errorf("thread %s: groups %q, want %q", task.Name(), f, want)
				}
			}
		}
	}
}

func TestUnprivilegedCannotSwitchUser(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("only meaningful when the tests do not run as root")
	}
	bothPaths(t, func(t *testing.T, helper bool) {
		spec := scriptSpec(t, helper, testDir(t, false), "echo should not run")
		spec.UID = uint32(os.Getuid()) + 1
		r := run(t, spec)
		if r.Err == nil || !strings.Contains(r.Err.Error(), "not root") {
			t.Fatalf("got %+v, want a refusal", r)
		}
	})
}
