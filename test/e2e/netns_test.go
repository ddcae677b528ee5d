package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// netCluster is a controller and agents each in a network namespace of
// its own, joined by a bridge: separate "machines" with their own
// addresses. Commands run in a "login" namespace (they reach the
// controller through its Unix socket; the nodes reach srun over the
// bridge).
type netCluster struct {
	t      *testing.T
	dir    string
	conf   string
	prefix string
	port   int
	procs  []*exec.Cmd
	agents map[string]*exec.Cmd
}

func ip(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		t.Fatalf("ip %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// newNetCluster builds namespaces <prefix>-br (the bridge), -ctl, -login
// and one per node, on 10.77.<net>.0/24.
func newNetCluster(t *testing.T, nodes []string) *netCluster {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("network namespaces need root")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Fatal("the ip command (iproute2) is required: .ci/run installs it")
	}
	n := &netCluster{t: t, dir: worldDir(t), prefix: fmt.Sprintf("drv%d", os.Getpid()%100000), agents: map[string]*exec.Cmd{}}
	net3 := 77
	ip(t, "netns", "add", n.ns("br"))
	t.Cleanup(n.teardown)
	ip(t, "-n", n.ns("br"), "link", "add", "br0", "type", "bridge")
	ip(t, "-n", n.ns("br"), "link", "set", "br0", "up")
	hosts := append([]string{"ctl", "login"}, nodes...)
	for i, h := range hosts {
		ip(t, "netns", "add", n.ns(h))
		ip(t, "-n", n.ns(h), "link", "set", "lo", "up")
		peer := "p" + strconv.Itoa(i)
		ip(t, "-n", n.ns(h), "link", "add", "eth0", "type", "veth", "peer", "name", peer, "netns", n.ns("br"))
		ip(t, "-n", n.ns(h), "addr", "add", fmt.Sprintf("10.%d.0.%d/24", net3, 10+i), "dev", "eth0")
		ip(t, "-n", n.ns(h), "link", "set", "eth0", "up")
		ip(t, "-n", n.ns("br"), "link", "set", peer, "master", "br0")
		ip(t, "-n", n.ns("br"), "link", "set", peer, "up")
	}
	n.port = freePort(t)
	var b strings.Builder
	fmt.Fprintf(&b, "ClusterName=netns\nSlurmctldHost=ctl(10.%d.0.10)\nSlurmctldPort=%d\n", net3, n.port)
	fmt.Fprintf(&b, "StateSaveLocation=%s\nSlurmdSpoolDir=%s\nSlurmdTimeout=4\nKillWait=2\nMinJobAge=300\n",
		filepath.Join(n.dir, "state"), filepath.Join(n.dir, "spool"))
	for i, node := range nodes {
		fmt.Fprintf(&b, "NodeName=%s NodeAddr=10.%d.0.%d CPUs=2 RealMemory=1000\n", node, net3, 12+i)
	}
	fmt.Fprintf(&b, "PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP\n")
	n.conf = filepath.Join(n.dir, "slurm.conf")
	if err := os.WriteFile(n.conf, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	n.start("ctl", "controller", "-f", n.conf)
	n.waitFor("the controller", 30*time.Second, func() bool {
		_, _, code := n.run("scontrol", "ping")
		return code == 0
	})
	return n
}

func (n *netCluster) ns(h string) string { return n.prefix + "-" + h }

// start runs drover in a namespace, logging to dir/log/<name>.log.
func (n *netCluster) start(h string, args ...string) *exec.Cmd {
	n.t.Helper()
	_ = os.MkdirAll(filepath.Join(n.dir, "log"), 0o755)
	name := h
	if len(args) > 0 && args[0] == "agent" {
		name = args[len(args)-1]
	}
	logf, err := os.OpenFile(filepath.Join(n.dir, "log", name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		n.t.Fatal(err)
	}
	cmd := exec.Command("ip", append([]string{"netns", "exec", n.ns(h), filepath.Join(binDir, "drover")}, args...)...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		n.t.Fatal(err)
	}
	n.procs = append(n.procs, cmd)
	return cmd
}

func (n *netCluster) joinNode(token, node string) {
	n.t.Helper()
	cmd := n.start(node, "agent", "-f", filepath.Join(n.dir, "absent.conf"), "--kill-jobs-on-exit", "--join", token,
		"--controller", fmt.Sprintf("10.77.0.10:%d", n.port), "--state-dir", filepath.Join(n.dir, "agent-"+node), "--name", node)
	n.agents[node] = cmd
}

// run runs a command in the login namespace.
func (n *netCluster) run(name string, args ...string) (string, string, int) {
	cmd := exec.Command("ip", append([]string{"netns", "exec", n.ns("login"), filepath.Join(binDir, name)}, args...)...)
	cmd.Dir = n.dir
	cmd.Env = append(os.Environ(), "SLURM_CONF="+n.conf, "PATH="+binDir+":"+os.Getenv("PATH"))
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		return "", err.Error(), -1
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			code = -1
		}
		return o.String(), e.String(), code
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		return o.String(), e.String() + "(timed out)", -1
	}
}

func (n *netCluster) must(name string, args ...string) string {
	n.t.Helper()
	o, e, code := n.run(name, args...)
	if code != 0 {
		n.t.Fatalf("%s %v: exit %d\n%s\n%s", name, args, code, o, e)
	}
	return o
}

func (n *netCluster) waitFor(what string, limit time.Duration, cond func() bool) {
	n.t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			n.dumpLogs()
			n.t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (n *netCluster) state(id string) string {
	o, _, _ := n.run("scontrol", "show", "job", id)
	for _, f := range strings.Fields(o) {
		if v, ok := strings.CutPrefix(f, "JobState="); ok {
			return v
		}
	}
	return ""
}

func (n *netCluster) dumpLogs() {
	files, _ := filepath.Glob(filepath.Join(n.dir, "log", "*.log"))
	for _, f := range files {
		b, _ := os.ReadFile(f)
		n.t.Logf("%s:\n%s", filepath.Base(f), tail(string(b), 3000))
	}
}

func (n *netCluster) teardown() {
	for _, p := range n.procs {
		if p.Process != nil {
			_ = syscall.Kill(-p.Process.Pid, syscall.SIGTERM)
		}
	}
	for _, p := range n.procs {
		done := make(chan struct{})
		go func() { _ = p.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = syscall.Kill(-p.Process.Pid, syscall.SIGKILL)
		}
	}
	out, _ := exec.Command("ip", "netns", "list").Output()
	for _, l := range strings.Split(string(out), "\n") {
		if f := strings.Fields(l); len(f) > 0 && strings.HasPrefix(f[0], n.prefix+"-") {
			_ = exec.Command("ip", "netns", "del", f[0]).Run()
		}
	}
}

// TestJoinAcrossNamespaces: nodes on separate network namespaces join with
// a token (TLS, certificates from the cluster CA, slurm.conf fetched from
// the controller), run a two-node job whose srun reaches both, survive a
// short link cut with their step running, and a long cut of one node's
// link ends its job NODE_FAIL while the other node carries on.
func TestJoinAcrossNamespaces(t *testing.T) {
	t.Parallel()
	n := newNetCluster(t, []string{"ns1", "ns2"})
	token := strings.TrimSpace(n.must("drover", "token", "create", "--nodes", "ns[1-2]"))
	n.joinNode(token, "ns1")
	n.joinNode(token, "ns2")
	// A forged token is refused.
	bad := n.start("ns2", "agent", "-f", filepath.Join(n.dir, "absent.conf"), "--join", "aaaaaa.bbbbbbbbbbbbbbbbbbbbbbbb."+strings.Split(token, ".")[2],
		"--controller", fmt.Sprintf("10.77.0.10:%d", n.port), "--state-dir", filepath.Join(n.dir, "agent-forged"), "--name", "forged")
	if err := bad.Wait(); err == nil {
		t.Error("an agent with a forged token joined")
	}
	n.waitFor("both nodes up", 30*time.Second, func() bool {
		o, _, _ := n.run("sinfo", "-h", "-N", "-o", "%N %t")
		return strings.Count(o, " idle") == 2
	})
	for _, node := range []string{"ns1", "ns2"} {
		if _, err := os.Stat(filepath.Join(n.dir, "agent-"+node, "tls", "node.crt")); err != nil {
			t.Errorf("%s has no certificate: %v", node, err)
		}
	}

	// A two-node job: the batch script on ns1, its step on both.
	out := filepath.Join(n.dir, "two.out")
	o := n.must("sbatch", "-N2", "-o", out, "--wrap", "srun bash -c 'echo $SLURMD_NODENAME' | sort")
	id := strings.Fields(o)[3]
	n.waitFor("the two-node job", 30*time.Second, func() bool { return n.state(id) == "COMPLETED" })
	if got := readFile(t, out); got != "ns1\nns2\n" {
		t.Errorf("two-node step output %q", got)
	}

	// A short cut (under SlurmdTimeout): the running step on ns2 goes on.
	o = n.must("sbatch", "-w", "ns2", "-o", filepath.Join(n.dir, "short.out"), "--wrap", "srun bash -c 'sleep 4; echo survived'")
	short := strings.Fields(o)[3]
	n.waitFor("the job on ns2", 30*time.Second, func() bool { return n.state(short) == "RUNNING" })
	time.Sleep(500 * time.Millisecond)
	ip(t, "-n", n.ns("ns2"), "link", "set", "eth0", "down")
	time.Sleep(1500 * time.Millisecond)
	ip(t, "-n", n.ns("ns2"), "link", "set", "eth0", "up")
	n.waitFor("the job to finish after the short cut", 30*time.Second, func() bool {
		s := n.state(short)
		return s != "RUNNING" && s != "PENDING"
	})
	if s := n.state(short); s != "COMPLETED" || readFile(t, filepath.Join(n.dir, "short.out")) != "survived\n" {
		t.Errorf("job across a short cut: %s %q", s, readFile(t, filepath.Join(n.dir, "short.out")))
	}

	// A long cut: ns2's job ends NODE_FAIL, ns2 goes down, ns1 keeps working.
	o = n.must("sbatch", "-w", "ns2", "--no-requeue", "-o", "/dev/null", "--wrap", "sleep 300")
	lost := strings.Fields(o)[3]
	o = n.must("sbatch", "-w", "ns2", "-o", "/dev/null", "--wrap", "sleep 300")
	requeued := strings.Fields(o)[3]
	n.waitFor("the job on ns2", 30*time.Second, func() bool { return n.state(lost) == "RUNNING" })
	ip(t, "-n", n.ns("ns2"), "link", "set", "eth0", "down")
	n.waitFor("NODE_FAIL", 30*time.Second, func() bool { return n.state(lost) == "NODE_FAIL" })
	if s := n.state(requeued); s != "PENDING" {
		t.Errorf("requeueable job on the cut node: %s, want PENDING", s)
	}
	o = n.must("sbatch", "-w", "ns1", "-o", "/dev/null", "--wrap", "true")
	ok := strings.Fields(o)[3]
	n.waitFor("a job on ns1 during the cut", 30*time.Second, func() bool { return n.state(ok) == "COMPLETED" })
	// The link comes back: the node registers again and kills the stale job.
	ip(t, "-n", n.ns("ns2"), "link", "set", "eth0", "up")
	n.waitFor("ns2 back", 60*time.Second, func() bool {
		o, _, _ := n.run("sinfo", "-h", "-N", "-n", "ns2", "-o", "%t")
		return !strings.HasPrefix(strings.TrimSpace(o), "down")
	})
	// ...and runs the requeued job again.
	n.waitFor("the requeued job to run again", 30*time.Second, func() bool { return n.state(requeued) == "RUNNING" })
	n.must("scancel", requeued)
	if testing.Verbose() {
		n.dumpLogs()
	}
}
