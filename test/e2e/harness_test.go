package e2e

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/drover-hpc/drover/internal/app/commands/table"
)

var binDir string // holds drover and its command symlinks

// parallelTests is how many tests run at once unless -parallel says
// otherwise. Every test has a cluster of its own (node names included, see
// nodePrefix) and spends most of its time waiting on jobs, limits and
// restarts, not on the CPU: more tests than cores run side by side.
const parallelTests = 6

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		fmt.Println("e2e: skipped in -short mode")
		os.Exit(0)
	}
	parallelSet := false
	flag.Visit(func(f *flag.Flag) { parallelSet = parallelSet || f.Name == "test.parallel" })
	if !parallelSet {
		_ = flag.Set("test.parallel", strconv.Itoa(max(parallelTests, runtime.GOMAXPROCS(0))))
	}
	dir, err := os.MkdirTemp("", "drover-e2e-bin")
	if err != nil {
		panic(err)
	}
	// World-readable so tests can run commands as other users.
	_ = os.Chmod(dir, 0o755)
	binDir = dir
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..")
	build := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", filepath.Join(dir, "drover"), "./cmd/drover")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if os.Getenv("DROVER_E2E_RACE") != "" {
		// Daemons under the race detector: slower, but catches races that
		// only real processes exercise.
		build = exec.Command("go", "build", "-race", "-o", filepath.Join(dir, "drover"), "./cmd/drover")
		build.Env = append(os.Environ(), "CGO_ENABLED=1")
	}
	build.Dir = root
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Println("e2e: build failed:", err)
		os.Exit(1)
	}
	// The commands are the lean binaries, as `make build` installs them:
	// drover-cli, and drover-sbatch for sbatch.
	for _, b := range []string{"drover-cli", "drover-sbatch"} {
		lean := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", filepath.Join(dir, b), "./cmd/"+b)
		lean.Env, lean.Dir, lean.Stdout, lean.Stderr = build.Env, root, os.Stdout, os.Stderr
		if err := lean.Run(); err != nil {
			fmt.Println("e2e: build of", b, "failed:", err)
			os.Exit(1)
		}
	}
	for c := range table.Commands {
		target := "drover-cli"
		if own := table.Own[c]; own != "" {
			target = own
		}
		_ = os.Symlink(target, filepath.Join(dir, c))
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// cluster is a running `drover up`.
type cluster struct {
	t      *testing.T
	dir    string
	conf   string
	prefix string // the nodes' names before their numbers (startUp)
	// env is added to every command's environment: a test's settings
	// (t.Setenv would stop the tests running side by side).
	extraEnv []string
	up       *exec.Cmd
	out      *bytes.Buffer
	// oldCgroups: job cgroups of this cluster's node names found before
	// it started (another run's, busy), which checkCgroupsGone leaves be.
	oldCgroups map[string]bool
}

// startUp runs `drover up` in a fresh directory and waits for its nodes,
// named c.node(1)...: a prefix of their own (nodePrefix).
func startUp(t *testing.T, nodes int, extra ...string) *cluster {
	t.Helper()
	dir := worldDir(t)
	c := &cluster{t: t, dir: dir, conf: filepath.Join(dir, "slurm.conf"), prefix: nodePrefix()}
	// An earlier run's clusters had the same names: what they left is
	// removed (empty groups only), and what stays is not this cluster's.
	c.oldCgroups = map[string]bool{}
	for _, d := range c.nodeCgroupDirs() {
		removeCgroupTree(d)
	}
	for _, d := range c.jobCgroupDirs() {
		c.oldCgroups[d] = true
	}
	c.start(nodes, append([]string{"--node-prefix", c.prefix}, extra...)...)
	t.Cleanup(c.stop)
	return c
}

var clusterCount atomic.Int64

// nodePrefix is a node name prefix no other cluster of this run has
// (nodea, nodeb, ...): an agent names its cgroups after its node
// (drover/<node>/job_<id>), so clusters that run side by side (parallel
// tests) must not share node names.
func nodePrefix() string {
	s := ""
	for n := clusterCount.Add(1); n > 0; n = (n - 1) / 26 {
		s = string(rune('a'+(n-1)%26)) + s
	}
	return "node" + s
}

// node is the name of the cluster's i-th node.
func (c *cluster) node(i int) string { return c.prefix + strconv.Itoa(i) }

var nodeWord = regexp.MustCompile(`\bnode(\d|\[)`)

// named writes text that names nodes as a `drover up --nodes N` cluster
// does by default (node1, node[1-3]) in this cluster's node names.
func (c *cluster) named(text string) string {
	return nodeWord.ReplaceAllString(text, c.prefix+"$1")
}

func (c *cluster) start(nodes int, extra ...string) {
	c.t.Helper()
	args := []string{"up", "--dir", c.dir, "--nodes", strconv.Itoa(nodes), "--conf", "SlurmdTimeout=4", "--conf", "KillWait=2"}
	args = append(args, extra...)
	c.out = &bytes.Buffer{}
	c.up = exec.Command(filepath.Join(binDir, "drover"), args...)
	c.up.Stdout, c.up.Stderr = c.out, c.out
	if err := c.up.Start(); err != nil {
		c.t.Fatal(err)
	}
	c.waitFor("all nodes idle", 60*time.Second, func() bool {
		out, _, code := c.run("sinfo", "-h", "-N", "-o", "%N %t")
		if code != 0 {
			return false
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) < nodes {
			return false
		}
		for _, l := range lines {
			if !strings.HasSuffix(l, " idle") {
				return false
			}
		}
		return true
	})
}

func (c *cluster) stop() {
	if c.up == nil || c.up.Process == nil {
		return
	}
	_ = c.up.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = c.up.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = c.up.Process.Kill()
		<-done
	}
	// Under DROVER_E2E_RACE the daemons report races in their logs.
	logs, _ := filepath.Glob(filepath.Join(c.dir, "log", "*.log"))
	for _, f := range logs {
		if b, err := os.ReadFile(f); err == nil && bytes.Contains(b, []byte("WARNING: DATA RACE")) {
			c.t.Errorf("data race reported in %s:\n%s", f, tail(string(b), 6000))
		}
	}
	c.checkCgroupsGone() // first: a leak is a failure whose logs follow
	if c.t.Failed() {
		c.t.Logf("drover up output:\n%s", c.out.String())
		// The controller's log, then every node's: a failure on node2 shows
		// only in node2's.
		names := []string{"controller.log"}
		for _, f := range logs {
			if b := filepath.Base(f); b != "controller.log" {
				names = append(names, b)
			}
		}
		for _, f := range names {
			if b, err := os.ReadFile(filepath.Join(c.dir, "log", f)); err == nil {
				c.t.Logf("%s (tail):\n%s", f, tail(string(b), 3000))
			}
		}
	}
	c.up = nil
}

// checkCgroupsGone fails the test on job cgroups of this cluster's nodes
// that outlived `drover up`: every job's end (or the agent's stop, which
// kills its jobs under `drover up`, or the next agent's start, which
// removes the groups of jobs it does not run) removes its group, and one
// left behind is a directory (and on v1 a css_set) leaked on a node that
// runs for months. The nodes' own directories then go too: every cluster
// of a run has node names of its own.
func (c *cluster) checkCgroupsGone() {
	if c.prefix == "" {
		return
	}
	var left []string
	for _, d := range c.jobCgroupDirs() {
		if !c.oldCgroups[d] {
			left = append(left, d)
		}
	}
	if len(left) > 0 {
		c.t.Errorf("LEAK: job cgroups left after the cluster stopped: %v", left)
	}
	for _, d := range c.nodeCgroupDirs() {
		removeCgroupTree(d)
	}
}

// nodeCgroupDirs are the cgroup directories of this cluster's nodes, in
// every hierarchy (v1) or the unified one (v2).
func (c *cluster) nodeCgroupDirs() []string {
	var out []string
	for _, pat := range []string{"/sys/fs/cgroup/*/drover/", "/sys/fs/cgroup/drover/"} {
		m, _ := filepath.Glob(pat + c.prefix + "[0-9]*")
		out = append(out, m...)
	}
	return out
}

// jobCgroupDirs are the job groups of this cluster's nodes.
func (c *cluster) jobCgroupDirs() []string {
	var out []string
	for _, d := range c.nodeCgroupDirs() {
		jobs, _ := filepath.Glob(filepath.Join(d, "job_*"))
		out = append(out, jobs...)
	}
	return out
}

// removeCgroupTree removes an empty cgroup directory and its empty
// sub-groups (cgroupfs takes only rmdir, children first).
func removeCgroupTree(dir string) {
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if e.IsDir() {
			removeCgroupTree(filepath.Join(dir, e.Name()))
		}
	}
	_ = syscall.Rmdir(dir)
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

func (c *cluster) env() []string {
	return append(append(os.Environ(), "SLURM_CONF="+c.conf, "PATH="+binDir+":"+os.Getenv("PATH")), c.extraEnv...)
}

// run runs a command as root from the cluster dir.
func (c *cluster) run(name string, args ...string) (stdout, stderr string, code int) {
	return c.runAs(nil, "", name, args...)
}

// runAs runs a command as the given user (nil = the test's user) with
// optional stdin.
func (c *cluster) runAs(u *user.User, stdin string, name string, args ...string) (string, string, int) {
	path := name
	if !strings.Contains(name, "/") {
		path = filepath.Join(binDir, name)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Dir = c.dir
	cmd.Env = c.env()
	if u != nil {
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
		cmd.Dir = u.HomeDir
		cmd.Env = append(cmd.Env, "HOME="+u.HomeDir, "USER="+u.Username)
	}
	cmd.Stdin = strings.NewReader(stdin)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	code := 0
	if err != nil {
		code = -1
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
	}
	return o.String(), e.String(), code
}

// must runs a command and fails the test unless it exits 0.
func (c *cluster) must(name string, args ...string) string {
	c.t.Helper()
	out, errOut, code := c.run(name, args...)
	if code != 0 {
		c.t.Fatalf("%s %v: exit %d\nstdout: %s\nstderr: %s", name, args, code, out, errOut)
	}
	return out
}

var submittedRe = regexp.MustCompile(`Submitted batch job (\d+)`)

// sbatch submits and returns the job id.
func (c *cluster) sbatch(args ...string) string {
	c.t.Helper()
	out := c.must("sbatch", args...)
	m := submittedRe.FindStringSubmatch(out)
	if m == nil {
		c.t.Fatalf("sbatch printed %q", out)
	}
	return m[1]
}

// waitFor polls cond until it holds or the deadline passes.
func (c *cluster) waitFor(what string, limit time.Duration, cond func() bool) {
	c.t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			c.t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// jobField reads one Key=Value from scontrol show job.
func (c *cluster) jobField(id, key string) string {
	out, _, code := c.run("scontrol", "show", "job", "-o", id)
	if code != 0 {
		return ""
	}
	m := regexp.MustCompile(`(?:^| )` + regexp.QuoteMeta(key) + `=(\S*)`).FindStringSubmatch(out)
	if m == nil {
		return ""
	}
	return m[1]
}

// waitState waits until the job reaches the state.
func (c *cluster) waitState(id, state string, limit time.Duration) {
	c.t.Helper()
	last := ""
	deadline := time.Now().Add(limit)
	for {
		last = c.jobField(id, "JobState")
		if last == state {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("job %s: state %q, want %q", id, last, state)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// usersMu serialises useradd: parallel tests may create users at once,
// and useradd fails rather than waits while another holds /etc/passwd.
var usersMu sync.Mutex

// testUser creates (once) an unprivileged user for tests.
func testUser(t *testing.T, name string) *user.User {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("needs root to create users")
	}
	usersMu.Lock()
	defer usersMu.Unlock()
	if u, err := user.Lookup(name); err == nil {
		return u
	}
	if out, err := exec.Command("useradd", "-m", "-s", "/bin/bash", name).CombinedOutput(); err != nil {
		if u, err2 := user.Lookup(name); err2 == nil {
			return u
		}
		t.Fatalf("useradd %s: %v: %s", name, err, out)
	}
	u, err := user.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return string(b)
}

// worldDir is a temporary directory other users can read, so jobs run as
// test users can load slurm.conf (t.TempDir's parent is private).
func worldDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "drover-e2e-")
	if err != nil {
		t.Fatal(err)
	}
	_ = os.Chmod(dir, 0o755)
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}
