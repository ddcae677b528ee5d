package e2e

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/status"

	pb "github.com/drover-hpc/drover/api/drover/v1"
	"github.com/drover-hpc/drover/internal/model"
)

// bareCluster is a controller and agents the test starts itself (no
// `drover up`), so that some nodes of slurm.conf can be left to joins.
type bareCluster struct {
	*cluster
	port  int
	procs []*exec.Cmd
	logs  map[string]*bytes.Buffer
}

func startBare(t *testing.T, nodes []string) *bareCluster {
	t.Helper()
	dir := worldDir(t)
	b := &bareCluster{cluster: &cluster{t: t, dir: dir, conf: filepath.Join(dir, "slurm.conf")}, port: freePort(t),
		logs: map[string]*bytes.Buffer{}}
	var conf strings.Builder
	fmt.Fprintf(&conf, "ClusterName=bare\nSlurmctldHost=localhost(127.0.0.1)\nSlurmctldPort=%d\n", b.port)
	fmt.Fprintf(&conf, "StateSaveLocation=%s/state\nSlurmdSpoolDir=%s/spool\nSlurmdTimeout=30\nKillWait=2\n", dir, dir)
	for _, n := range nodes {
		fmt.Fprintf(&conf, "NodeName=%s NodeAddr=127.0.0.1 CPUs=1 RealMemory=500 State=UNKNOWN\n", n)
	}
	conf.WriteString("PartitionName=p Nodes=ALL Default=YES MaxTime=INFINITE State=UP\n")
	if err := os.WriteFile(b.conf, []byte(conf.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.stop)
	b.spawn("controller", "controller", "-f", b.conf)
	b.waitFor("the controller", 30*time.Second, func() bool {
		_, _, code := b.run("scontrol", "ping")
		return code == 0
	})
	return b
}

// spawn starts drover with args; name labels its log.
func (b *bareCluster) spawn(name string, args ...string) *exec.Cmd {
	b.t.Helper()
	return b.spawnEnv(name, nil, args...)
}

// spawnEnv is spawn with extra environment variables.
func (b *bareCluster) spawnEnv(name string, env []string, args ...string) *exec.Cmd {
	b.t.Helper()
	cmd := exec.Command(filepath.Join(binDir, "drover"), args...)
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	log := &bytes.Buffer{}
	b.logs[name] = log
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		b.t.Fatal(err)
	}
	b.procs = append(b.procs, cmd)
	return cmd
}

func (b *bareCluster) nodeState(node string) string {
	o, _, _ := b.run("sinfo", "-h", "-n", node, "-N", "-o", "%t")
	return strings.TrimSpace(o)
}

func (b *bareCluster) stop() {
	for i := len(b.procs) - 1; i >= 0; i-- {
		p := b.procs[i]
		if p.ProcessState != nil {
			continue
		}
		_ = syscall.Kill(-p.Process.Pid, syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = p.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = syscall.Kill(-p.Process.Pid, syscall.SIGKILL)
			<-done
		}
	}
	if b.t.Failed() {
		for name, l := range b.logs {
			b.t.Logf("%s:\n%s", name, tail(l.String(), 3000))
		}
	}
}

// TestJoinTokenBoundNodeCertConfined: a join token names its nodes and is
// spent by the join; a node certificate speaks only the node protocol, as
// its own node, and cannot end another node's job.
func TestJoinTokenBoundNodeCertConfined(t *testing.T) {
	t.Parallel()
	b := startBare(t, []string{"n1", "n2", "n3"})
	b.spawn("n1", "agent", "-f", b.conf, "--name", "n1", "--kill-jobs-on-exit")
	b.waitFor("n1 idle", 30*time.Second, func() bool { return b.nodeState("n1") == "idle" })

	// A token must name its nodes, each one defined.
	if _, e, code := b.run("drover", "token", "create"); code == 0 || !strings.Contains(e, "--nodes") {
		t.Errorf("a token without --nodes: exit %d %q", code, e)
	}
	if _, e, code := b.run("drover", "token", "create", "--nodes", "n9"); code == 0 || !strings.Contains(e, "not defined") {
		t.Errorf("a token for an undefined node: exit %d %q", code, e)
	}
	token := strings.TrimSpace(b.must("drover", "token", "create", "--nodes", "n2"))
	ctl := fmt.Sprintf("127.0.0.1:%d", b.port)
	join := func(node, stateDir string) (*exec.Cmd, *bytes.Buffer) {
		cmd := b.spawn("join-"+node+"-"+filepath.Base(stateDir), "agent", "-f", filepath.Join(b.dir, "absent.conf"),
			"--kill-jobs-on-exit", "--join", token, "--controller", ctl, "--state-dir", stateDir, "--name", node)
		return cmd, b.logs["join-"+node+"-"+filepath.Base(stateDir)]
	}
	// Not a name the token allows: refused before any certificate.
	bad, log := join("n3", filepath.Join(b.dir, "agent-n3"))
	if err := bad.Wait(); err == nil || !strings.Contains(log.String(), "is for nodes n2") {
		t.Errorf("n3 joined with a token for n2: %v\n%s", err, log)
	}
	n2Dir := filepath.Join(b.dir, "agent-n2")
	n2, _ := join("n2", n2Dir)
	b.waitFor("n2 joined and idle", 30*time.Second, func() bool { return b.nodeState("n2") == "idle" })
	// Single use: the token made its one certificate.
	again, log := join("n2", filepath.Join(b.dir, "agent-n2-again"))
	if err := again.Wait(); err == nil || !strings.Contains(log.String(), "used up") {
		t.Errorf("a second join with a one-use token: %v\n%s", err, log)
	}
	// The admin sees what the token did; a revoked token joins nothing.
	id := strings.SplitN(token, ".", 2)[0]
	if l := b.must("drover", "token", "list"); !regexp.MustCompile(`(?m)^` + id + `\s+n2\s+1/1\s+\S+\s+n2$`).MatchString(l) {
		t.Errorf("token list:\n%s", l)
	}
	spareOut, spareErr, code := b.run("drover", "token", "create", "--nodes", "n3")
	spare := strings.TrimSpace(spareOut)
	// The join line to copy names the controller's address from
	// slurm.conf (it printed a HOST:PORT placeholder).
	if code != 0 || !strings.Contains(spareErr, "--join "+spare+" --controller "+ctl+" ") {
		t.Errorf("token create: exit %d, stderr %q: want the join line with --controller %s", code, spareErr, ctl)
	}
	b.must("drover", "token", "delete", strings.SplitN(spare, ".", 2)[0])
	token = spare
	revoked, log := join("n3", filepath.Join(b.dir, "agent-n3-revoked"))
	if err := revoked.Wait(); err == nil || !strings.Contains(log.String(), "invalid or expired join token") {
		t.Errorf("a join with a deleted token: %v\n%s", err, log)
	}
	// Stop the joined agent; the test speaks with its certificate now.
	_ = syscall.Kill(-n2.Process.Pid, syscall.SIGTERM)
	_ = n2.Wait()

	job := strings.Fields(b.must("sbatch", "-w", "n1", "-o", "/dev/null", "--wrap", "sleep 300"))[3]
	b.waitFor("the job on n1 running", 30*time.Second, func() bool { return b.jobField(job, "JobState") == "RUNNING" })

	conn := dialAsNode(t, ctl, n2Dir)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// The user and admin API refuse a node certificate.
	api := pb.NewDroverClient(conn)
	if _, err := api.ListJobs(ctx, &pb.ListJobsRequest{}); status.Code(err) != codes.PermissionDenied {
		t.Errorf("a node certificate listed jobs: %v", err)
	}
	if _, err := api.CreateJoinToken(ctx, &pb.CreateJoinTokenRequest{Nodes: "ALL"}); status.Code(err) != codes.PermissionDenied {
		t.Errorf("a node certificate made a join token: %v", err)
	}
	if r, err := api.SignalJobs(ctx, &pb.SignalJobsRequest{}); status.Code(err) != codes.PermissionDenied {
		t.Errorf("a node certificate signalled jobs: %v %v", r, err)
	}
	// Registering as another node is refused.
	other, err := pb.NewAgentServiceClient(conn).Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_ = other.Send(&pb.AgentMessage{Msg: &pb.AgentMessage_Register{Register: &pb.Register{Node: "n1", Cpus: 1, Memory: 500}}})
	if _, err := other.Recv(); err == nil {
		t.Error("n2's certificate registered as n1")
	}
	// As itself it may register, but an end it reports for n1's job is
	// acknowledged and ignored.
	stream, err := pb.NewAgentServiceClient(conn).Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.Send(&pb.AgentMessage{Msg: &pb.AgentMessage_Register{Register: &pb.Register{Node: "n2", Cpus: 1, Memory: 500}}}); err != nil {
		t.Fatal(err)
	}
	var jobID uint32
	fmt.Sscan(job, &jobID)
	if err := stream.Send(&pb.AgentMessage{Msg: &pb.AgentMessage_JobEnded{JobEnded: &pb.JobEnded{JobId: jobID, State: uint32(model.JobCompleted), EndTime: time.Now().Unix()}}}); err != nil {
		t.Fatal(err)
	}
	for acked := false; !acked; {
		m, err := stream.Recv()
		if err != nil {
			t.Fatalf("waiting for the end's acknowledgement: %v", err)
		}
		acked = m.GetEndAck() != nil && m.GetEndAck().JobId == jobID
	}
	if s := b.jobField(job, "JobState"); s != "RUNNING" {
		t.Errorf("n2 ended n1's job: it is %s", s)
	}
	b.must("scancel", job)
}

// dialAsNode connects to the controller with the certificate a join left
// in stateDir.
func dialAsNode(t *testing.T, addr, stateDir string) *grpc.ClientConn {
	t.Helper()
	tdir := filepath.Join(stateDir, "tls")
	pair, err := tls.LoadX509KeyPair(filepath.Join(tdir, "node.crt"), filepath.Join(tdir, "node.key"))
	if err != nil {
		t.Fatal(err)
	}
	caPEM, err := os.ReadFile(filepath.Join(tdir, "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	conn, err := grpc.NewClient("passthrough:///"+addr, grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{
		Certificates: []tls.Certificate{pair}, RootCAs: pool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS13,
	})))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// TestJoinKeepsJoinedConf: a machine whose default slurm.conf (here
// SLURM_CONF; /etc/slurm/slurm.conf on a node that ran Slurm) is another
// cluster's joins with `drover agent --join` alone, runs with the
// slurm.conf its join brought, and later restarts with `drover agent`
// alone the same way.
func TestJoinKeepsJoinedConf(t *testing.T) {
	t.Parallel()
	b := startBare(t, []string{"jc1"})
	old := filepath.Join(b.dir, "old-slurm.conf")
	if err := os.WriteFile(old, []byte("ClusterName=old\nSlurmctldHost=elsewhere\nNodeName=x1 CPUs=1\nPartitionName=p Nodes=ALL\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	token := strings.TrimSpace(b.must("drover", "token", "create", "--nodes", "jc1"))
	stateDir := filepath.Join(b.dir, "agent-jc1")
	env := []string{"SLURM_CONF=" + old}
	joined := b.spawnEnv("join", env, "agent", "--kill-jobs-on-exit", "--join", token,
		"--controller", fmt.Sprintf("127.0.0.1:%d", b.port), "--state-dir", stateDir, "--name", "jc1")
	b.waitFor("jc1 joined and idle", 30*time.Second, func() bool { return b.nodeState("jc1") == "idle" })
	_ = syscall.Kill(-joined.Process.Pid, syscall.SIGTERM)
	_ = joined.Wait()
	b.spawnEnv("again", env, "agent", "--kill-jobs-on-exit", "--state-dir", stateDir, "--name", "jc1")
	job := strings.Fields(b.must("sbatch", "-o", "/dev/null", "--wrap", "true"))[3]
	b.waitFor("a job on the restarted agent", 30*time.Second, func() bool { return b.jobField(job, "JobState") == "COMPLETED" })
}

// TestJoinedNodeReconfigureTakesControllerConf: a joined node runs on the
// slurm.conf its join brought; scontrol reconfigure gives it the
// controller's current one (as configless slurmd gets slurmctld's), so a
// Prolog the administrator added runs there for the next job. Before, the
// node read its old copy again and never saw the change.
func TestJoinedNodeReconfigureTakesControllerConf(t *testing.T) {
	t.Parallel()
	b := startBare(t, []string{"jr1"})
	token := strings.TrimSpace(b.must("drover", "token", "create", "--nodes", "jr1"))
	stateDir := filepath.Join(b.dir, "agent-jr1")
	b.spawn("join", "agent", "-f", filepath.Join(b.dir, "absent.conf"), "--kill-jobs-on-exit", "--join", token,
		"--controller", fmt.Sprintf("127.0.0.1:%d", b.port), "--state-dir", stateDir, "--name", "jr1")
	b.waitFor("jr1 joined and idle", 30*time.Second, func() bool { return b.nodeState("jr1") == "idle" })

	prolog := filepath.Join(b.dir, "prolog.sh")
	writeScript(t, prolog, "#!/bin/sh\ntouch "+b.dir+"/prolog.$SLURM_JOB_ID\n")
	conf := readFile(t, b.conf)
	if err := os.WriteFile(b.conf, []byte(conf+"Prolog="+prolog+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	b.must("scontrol", "reconfigure")
	joined := filepath.Join(stateDir, "slurm.conf")
	b.waitFor("the joined node's slurm.conf to name the Prolog", 30*time.Second, func() bool {
		got, _ := os.ReadFile(joined)
		return strings.Contains(string(got), "Prolog="+prolog)
	})
	// The agent reads the file right after writing it: the first job may
	// still start before, the next ones run the Prolog.
	b.waitFor("a job on jr1 to run the Prolog", 60*time.Second, func() bool {
		job := strings.Fields(b.must("sbatch", "-o", "/dev/null", "--wrap", "true"))[3]
		b.waitFor("job "+job+" to end", 30*time.Second, func() bool { return b.jobField(job, "JobState") == "COMPLETED" })
		_, err := os.Stat(filepath.Join(b.dir, "prolog."+job))
		return err == nil
	})
}
