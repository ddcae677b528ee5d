package e2e

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/drover-hpc/drover/internal/slurmconf"
)

// TestHostileLocalUser: an unprivileged local user who writes the local
// protocol's frames by hand (testdata/hostile) gets nothing of another
// user's: not a cancel, signal, hold, requeue, suspend, update, completion,
// step, attach, statistics or broadcast on their jobs — the victim's uid
// and name inside the frames change nothing, the kernel names the caller
// — nor a submission in their name, their scripts and environments, or an
// operator's call. Its connections stalled inside 64 MiB frames are cut
// at the per-user cap and hold up no other user's commands.
func TestHostileLocalUser(t *testing.T) {
	t.Parallel()
	victim, attacker := testUser(t, "drovertest1"), testUser(t, "drovertest2")
	c := startUp(t, 1, "--conf", "DroverMaxConnsPerUser=8")
	cfg, err := slurmconf.Load(c.conf)
	if err != nil {
		t.Fatal(err)
	}
	sock := cfg.SocketPath()
	tool := buildHostile(t, c)

	running := c.runAsSbatch(t, victim, "-o", "/dev/null", "--wrap", "sleep 300")
	pending := c.runAsSbatch(t, victim, "-o", "/dev/null", "--begin", "now+3600", "--export=ALL,SECRET=victim", "--wrap", "echo victim-secret")
	c.waitState(running, "RUNNING", 30*time.Second)
	limitBefore := c.jobField(pending, "TimeLimit")

	attack := func(how string, cmd ...string) {
		out, errOut, code := c.runAs(attacker, "", cmd[0], append(cmd[1:], sock, "frames", running, pending, victim.Uid, victim.Username)...)
		if code != 0 {
			t.Fatalf("hostile frames %s: exit %d\n%s\n%s", how, code, out, errOut)
		}
		t.Logf("hostile frames as %s %s:\n%s", attacker.Username, how, out)
		attempts := 0
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			attempts++
			if !strings.Contains(line, "\trefused: ") {
				t.Errorf("another user's frame went through (%s): %s", how, line)
			}
		}
		if attempts < 20 {
			t.Errorf("only %d attempts reported (%s):\n%s", attempts, how, out)
		}
	}
	attack("directly", tool)
	// Root of a user namespace of its own is still itself to the kernel's
	// SO_PEERCRED, which maps the caller into the controller's namespace.
	unshare, err := exec.LookPath("unshare")
	if _, _, code := c.runAs(attacker, "", unshare, "-Ur", "true"); err == nil && code == 0 {
		attack("as root of its own user namespace", unshare, "-Ur", tool)
	} else {
		t.Log("unprivileged user namespaces are off here: that attempt is skipped")
	}
	// What the attempts would have changed did not change.
	if s := c.jobField(running, "JobState"); s != "RUNNING" {
		t.Errorf("the victim's running job is %s", s)
	}
	if s, r := c.jobField(pending, "JobState"), c.jobField(pending, "Reason"); s != "PENDING" || r != "BeginTime" {
		t.Errorf("the victim's pending job is %s (%s), want PENDING (BeginTime)", s, r)
	}
	if l := c.jobField(pending, "TimeLimit"); l != limitBefore {
		t.Errorf("the victim's time limit went from %s to %s", limitBefore, l)
	}
	if o := c.must("squeue", "-h", "-s", "-j", running, "-o", "%i"); strings.Contains(o, running+".0") {
		t.Errorf("a step was made in the victim's job:\n%s", o)
	}
	if o := c.must("squeue", "-h", "-o", "%j %u"); strings.Contains(o, "hostile") {
		t.Errorf("a job was submitted in another's name:\n%s", o)
	}
	if o := c.must("sinfo", "-h", "-o", "%t"); strings.Contains(o, "drain") {
		t.Errorf("an unprivileged user drained nodes: %s", o)
	}

	// 40 connections stalled inside the largest frames: the cap keeps 8.
	hog := exec.Command(tool, sock, "hog", "40")
	uid, _ := strconv.Atoi(attacker.Uid)
	gid, _ := strconv.Atoi(attacker.Gid)
	hog.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	stdin, err := hog.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := hog.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := hog.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); _ = hog.Wait() }()
	lines := bufio.NewScanner(stdout)
	var report []string
	for lines.Scan() && lines.Text() != "ready" {
		report = append(report, lines.Text())
	}
	if len(report) != 1 || !strings.HasPrefix(report[0], "open ") {
		t.Fatalf("hog reported %q", report)
	}
	if n, _ := strconv.Atoi(strings.TrimPrefix(report[0], "open ")); n > 8 || n < 1 {
		t.Errorf("%d stalled connections of one user kept open, want 1 to 8 (DroverMaxConnsPerUser=8)", n)
	}
	// The victim is served while the attacker's connections stall.
	if o, e, code := c.runAs(victim, "", "squeue", "-h", "-u", victim.Username, "-o", "%i"); code != 0 || !strings.Contains(o, pending) {
		t.Errorf("the victim's squeue beside the stalled connections: exit %d %s %s", code, o, e)
	}
	id := c.runAsSbatch(t, victim, "-o", "/dev/null", "--begin", "now+3600", "--wrap", "true")
	if o, e, code := c.runAs(victim, "", "scancel", id); code != 0 {
		t.Errorf("the victim's scancel beside the stalled connections: exit %d %s %s", code, o, e)
	}
	_ = os.Remove(tool)
}

// buildHostile builds testdata/hostile into the cluster's directory.
func buildHostile(t *testing.T, c *cluster) string {
	t.Helper()
	tool := filepath.Join(c.dir, "hostile")
	if _, err := os.Stat(tool); err == nil {
		return tool // built for this cluster already
	}
	build := exec.Command("go", "build", "-o", tool, "./test/e2e/testdata/hostile")
	_, file, _, _ := runtime.Caller(0)
	build.Dir = filepath.Join(filepath.Dir(file), "..", "..")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the hostile client: %v\n%s", err, out)
	}
	return tool
}

// runHostile runs the hostile client (buildHostile) as u against the
// cluster's local socket with args, and fails the test unless it exits 0;
// it returns what the client printed.
func (c *cluster) runHostile(t *testing.T, u *user.User, args ...string) string {
	t.Helper()
	cfg, err := slurmconf.Load(c.conf)
	if err != nil {
		t.Fatal(err)
	}
	out, errOut, code := c.runAs(u, "", buildHostile(t, c), append([]string{cfg.SocketPath()}, args...)...)
	if code != 0 {
		t.Fatalf("hostile %s: exit %d\n%s\n%s", args[0], code, out, errOut)
	}
	return out
}

// TestHostileSubmissionShapes: the controller checks what a client parsed
// instead of trusting it. A local user writing SubmitJob frames by hand
// sent array task ids sbatch never sends (one id 20,000 times: 20,000
// tasks named JOB_1, past MaxArraySize; ids out of range between the first
// and the last; a negative throttle) and a dependency of 10 characters
// with 200,000 terms (tens of bytes each in the controller's memory, its
// log and every pass: a few such submissions grew the controller by
// hundreds of MiB); all were accepted. Each is refused now, and the same
// user's ordinary arrays and dependencies still go in.
func TestHostileSubmissionShapes(t *testing.T) {
	t.Parallel()
	attacker := testUser(t, "drovertest2")
	c := startUp(t, 1)
	out := c.runHostile(t, attacker, "shapes")
	t.Logf("hostile submissions as %s:\n%s", attacker.Username, out)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) < 6 {
		t.Fatalf("only %d attempts reported:\n%s", len(lines), out)
	}
	for _, line := range lines {
		if !strings.Contains(line, "\trefused: ") {
			t.Errorf("a submission sbatch never sends was accepted: %s", line)
		}
	}
	if o := c.must("squeue", "-h", "-r", "-o", "%i %j"); strings.Contains(o, "hostile") {
		t.Errorf("hand-made jobs are queued:\n%s", tail(o, 2000))
	}
	// What sbatch sends still goes in.
	first := c.runAsSbatch(t, attacker, "-H", "-o", "/dev/null", "--array=1,3,5-7%2", "--wrap", "true")
	second := c.runAsSbatch(t, attacker, "-H", "-o", "/dev/null", "--dependency=afterany:"+first+":"+first+",afterok:"+first, "--wrap", "true")
	if n := len(strings.Fields(c.must("squeue", "-h", "-r", "-j", first, "-o", "%i"))); n != 5 {
		t.Errorf("--array=1,3,5-7%%2 made %d tasks, want 5", n)
	}
	if d := c.jobField(second, "Dependency"); !strings.HasPrefix(d, "afterany:"+first) {
		t.Errorf("the dependency reads %q", d)
	}
}

// TestUnprovenTCPConnectionsClosed: a TCP connection to the controller
// that proves no caller (node certificate, cluster token, join) within
// about twice MessageTimeout is closed. A local user could otherwise hold
// connections past DroverMaxConnsPerUser (which counts the Unix socket)
// for the whole idle timeout, 5 minutes, some 50 KiB of the controller
// each: 3,000 took it from 36 to 182 MiB. The agents, whose connections
// prove themselves at once, keep theirs.
func TestUnprovenTCPConnectionsClosed(t *testing.T) {
	t.Parallel()
	attacker := testUser(t, "drovertest2")
	c := startUp(t, 1, "--conf", "MessageTimeout=2")
	cfg, err := slurmconf.Load(c.conf)
	if err != nil {
		t.Fatal(err)
	}
	tool := buildHostile(t, c)
	// 300: past the per-user cap of 256 the Unix socket has. Probation is
	// 4 s here; 12 s later none may be left.
	addr := "127.0.0.1:" + strconv.Itoa(cfg.SlurmctldPort)
	out, errOut, code := c.runAs(attacker, "", tool, addr, "tcpidle", "300", "12")
	if code != 0 || !strings.HasPrefix(out, "open ") {
		t.Fatalf("hostile tcpidle: exit %d\n%s\n%s", code, out, errOut)
	}
	if n := atoi(strings.TrimSpace(strings.TrimPrefix(out, "open "))); n != 0 {
		t.Errorf("%d of 300 connections that made no call are still open after 12 s (MessageTimeout=2)", n)
	}
	// The agent's own connection, proven at once, was not cut every few
	// seconds (one loss may come from a loaded machine: MessageTimeout=2
	// bounds the agent's sends too), and the cluster still works.
	if b := readFile(t, filepath.Join(c.dir, "log", c.node(1)+".log")); strings.Count(b, "controller connection lost") >= 3 {
		t.Errorf("the agent kept losing its connection:\n%s", tail(b, 2000))
	}
	id := c.sbatch("-o", "/dev/null", "--wrap", "true")
	c.waitState(id, "COMPLETED", 60*time.Second)
}

// TestGRPCRequestsInFlightBoundedPerUser: gRPC reads a call's whole
// request into the controller's memory before anything checks it, up to
// 64 MiB allocated as soon as the length is announced. A local user could
// have any number in flight on the socket (32 uploads of 60 MiB took the
// controller to 5.5 GiB). Now one user has at most 8 calls still reading
// their request; the rest are refused at once with "Resource temporarily
// unavailable" (try again), and a request that does not arrive within
// MessageTimeout ends its call and gives its place back. The same user's
// ordinary commands over gRPC still work afterwards.
func TestGRPCRequestsInFlightBoundedPerUser(t *testing.T) {
	t.Parallel()
	attacker := testUser(t, "drovertest2")
	c := startUp(t, 1, "--conf", "MessageTimeout=3")
	// 40 calls that announce 60 MiB and stall after 10 bytes; looked at
	// 10 s later (3 s for a request to arrive).
	out := c.runHostile(t, attacker, "grpcstall", "40", "10")
	var refused, ended, pending int
	if _, err := fmt.Sscanf(out, "refused %d ended %d pending %d", &refused, &ended, &pending); err != nil {
		t.Fatalf("hostile grpcstall reported %q: %v", out, err)
	}
	if refused != 32 {
		t.Errorf("%d of 40 stalled uploads refused at once, want 32 (8 in flight per user): %s", refused, out)
	}
	if pending != 0 {
		t.Errorf("%d stalled uploads still held 10 s later (MessageTimeout=3): %s", pending, out)
	}
	c.extraEnv = []string{"DROVER_TRANSPORT=grpc"}
	id := c.runAsSbatch(t, attacker, "-H", "-o", "/dev/null", "--wrap", "true")
	c.extraEnv = nil
	if s := c.jobField(id, "JobState"); s != "PENDING" {
		t.Errorf("the user's own sbatch over gRPC afterwards: %s", s)
	}
}

// TestSattachConnectionsBoundedPerStep: the node's agent keeps at most 32
// sattach connections per step. A user asking again and again for their
// own step's I/O (AttachStep, cheap for the caller: the node dials a
// listener of theirs) made the agent, which every user's jobs on the node
// share, hold one descriptor and goroutine for each: 3,000 requests, 2,400
// connections, toward its descriptor limit.
func TestSattachConnectionsBoundedPerStep(t *testing.T) {
	t.Parallel()
	attacker := testUser(t, "drovertest2")
	c := startUp(t, 1)
	id := c.runAsSbatch(t, attacker, "-o", "/dev/null", "--wrap", "srun sleep 120")
	c.waitFor("step 0 to run", 30*time.Second, func() bool {
		o, _, _ := c.run("squeue", "-h", "-s", "-j", id, "-o", "%i")
		return strings.Contains(o, id+".0")
	})
	out := c.runHostile(t, attacker, "attach", id, "0", "100")
	var attached, refused int
	if _, err := fmt.Sscanf(out, "attached %d refused %d", &attached, &refused); err != nil {
		t.Fatalf("hostile attach reported %q: %v", out, err)
	}
	t.Logf("hostile attach: %s", out)
	if attached > 32 || attached == 0 {
		t.Errorf("the node kept %d of 100 attachments to one step, want 1 to 32", attached)
	}
	c.must("scancel", id)
}

// TestSbcastTransfersBoundedPerUser: a node runs at most 16 sbcast
// transfers of one user at once, and one whose data stops coming ends
// after MessageTimeout. Each transfer holds an OS thread of the agent
// (the user's filesystem identity is per thread), which every user's
// jobs share: 500 requests for a file that never came held 360 threads,
// for ever, on the way to the Go runtime's thread limit (the end of the
// agent).
func TestSbcastTransfersBoundedPerUser(t *testing.T) {
	t.Parallel()
	attacker := testUser(t, "drovertest2")
	c := startUp(t, 1, "--conf", "MessageTimeout=3")
	id := c.runAsSbatch(t, attacker, "-o", "/dev/null", "--wrap", "sleep 120")
	c.waitState(id, "RUNNING", 30*time.Second)
	out := c.runHostile(t, attacker, "bcast", id, "100", "10")
	t.Logf("hostile bcast: %s", out)
	var soon, later int
	if _, err := fmt.Sscanf(out, "open %d later %d", &soon, &later); err != nil {
		t.Fatalf("hostile bcast reported %q: %v", out, err)
	}
	if soon > 16 {
		t.Errorf("the node held %d stalled transfers of one user, want at most 16", soon)
	}
	if later != 0 {
		t.Errorf("%d stalled transfers still held 10 s later (MessageTimeout=3)", later)
	}
	// An ordinary sbcast of the same user still works.
	src := filepath.Join(attacker.HomeDir, "bcast-src")
	if err := os.WriteFile(src, []byte("payload\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(src)
	dest := filepath.Join(c.dir, "bcast-dest-"+id)
	_ = os.Chmod(c.dir, 0o777)
	if o, e, code := c.runAs(attacker, "", "sbcast", "-j", id, src, dest); code != 0 {
		t.Errorf("sbcast afterwards: exit %d %s %s", code, o, e)
	} else if got := readFile(t, dest); got != "payload\n" {
		t.Errorf("sbcast afterwards wrote %q", got)
	}
	c.must("scancel", id)
}

// TestRunningStepsBoundedPerJob: one job runs at most 256 steps at once
// (4 per allocated CPU if more). Each running task holds descriptors and
// goroutines of the agent that every user's jobs on the node share, and
// --overlap steps had no bound but MaxStepCount (40,000): 300 one-task
// steps in a one-CPU job all ran.
func TestRunningStepsBoundedPerJob(t *testing.T) {
	t.Parallel()
	attacker := testUser(t, "drovertest2")
	c := startUp(t, 1)
	id := c.runAsSbatch(t, attacker, "-o", "/dev/null", "-c1", "--wrap", "sleep 300")
	c.waitState(id, "RUNNING", 30*time.Second)
	// The descriptors of drover up's processes (controller, agent).
	fds := func() int {
		n := 0
		var walk func(pid string)
		walk = func(pid string) {
			ents, _ := os.ReadDir("/proc/" + pid + "/fd")
			n += len(ents)
			tasks, _ := os.ReadDir("/proc/" + pid + "/task")
			for _, task := range tasks {
				kids, _ := os.ReadFile("/proc/" + pid + "/task/" + task.Name() + "/children")
				for _, k := range strings.Fields(string(kids)) {
					walk(k)
				}
			}
		}
		walk(strconv.Itoa(c.up.Process.Pid))
		return n
	}
	before := fds()
	out := c.runHostile(t, attacker, "steps", id, "300")
	t.Logf("hostile steps: %s(descriptors of drover up and its processes: %d before, %d after)", out, before, fds())
	var created, refused int
	if _, err := fmt.Sscanf(out, "created %d refused %d", &created, &refused); err != nil {
		t.Fatalf("hostile steps reported %q: %v", out, err)
	}
	if created > 256 || created == 0 {
		t.Errorf("one one-CPU job ran %d of 300 steps at once, want 1 to 256", created)
	}
	if refused > 0 && !strings.Contains(out, "Step limit reached for this job") {
		t.Errorf("refusal: %q, want Slurm's step limit words", out)
	}
	c.must("scancel", id)
	c.waitState(id, "CANCELLED", 60*time.Second)
}

// TestRunningStepsBoundedPerUserNode: many small jobs of one user on a
// node do not each bring the per-job bound of running --overlap steps'
// tasks (256, or 4 per CPU) onto the node's one agent: the user's
// running steps there are bound together by the same figure, per CPU its
// jobs hold on the node. Two one-CPU jobs, 200 overlapping steps asked in
// each: before, 400 ran on the node; now 256, the rest refused with
// Slurm's step limit words.
func TestRunningStepsBoundedPerUserNode(t *testing.T) {
	t.Parallel()
	attacker := testUser(t, "drovertest2")
	c := startUp(t, 1, "--cpus", "2")
	a := c.runAsSbatch(t, attacker, "-o", "/dev/null", "-c1", "--wrap", "sleep 300")
	b := c.runAsSbatch(t, attacker, "-o", "/dev/null", "-c1", "--wrap", "sleep 300")
	c.waitState(a, "RUNNING", 30*time.Second)
	c.waitState(b, "RUNNING", 30*time.Second)
	out := c.runHostile(t, attacker, "steps", a+","+b, "200")
	t.Logf("hostile steps: %s", out)
	var createdA, refusedA, createdB, refusedB int
	if _, err := fmt.Sscanf(out, "created %d refused %d\ncreated %d refused %d", &createdA, &refusedA, &createdB, &refusedB); err != nil {
		t.Fatalf("hostile steps reported %q: %v", out, err)
	}
	if createdA != 200 {
		t.Errorf("the first job ran %d of 200 steps, want all (its own bound is 256)", createdA)
	}
	if total := createdA + createdB; total > 256 || createdB == 0 {
		t.Errorf("two one-CPU jobs of one user ran %d + %d steps at once on one node, want 200 + 1 to 56", createdA, createdB)
	}
	if !strings.Contains(out, "Step limit reached for this job") {
		t.Errorf("refusal: %q, want Slurm's step limit words", out)
	}
	c.must("scancel", a, b)
	c.waitState(a, "CANCELLED", 60*time.Second)
	c.waitState(b, "CANCELLED", 60*time.Second)
}

// TestJobBytesBoundedPerUser: what one user's jobs in memory hold of
// scripts, argv, environments and submit lines is bounded
// (DroverMaxUserJobBytes, 1 GiB by default): the controller keeps them in
// memory, and MaxJobCount jobs with a 2 MiB environment each were 20 GiB
// of it from one user. Past the bound a submission is refused for now
// (sbatch waits and retries); other users still submit.
func TestJobBytesBoundedPerUser(t *testing.T) {
	t.Parallel()
	attacker := testUser(t, "drovertest2")
	other := testUser(t, "drovertest1")
	c := startUp(t, 1, "--conf", "DroverMaxUserJobBytes=8M")
	out := c.runHostile(t, attacker, "bigenv", "10", "1536")
	t.Logf("hostile bigenv: %s", out)
	var accepted, refused int
	if _, err := fmt.Sscanf(out, "accepted %d refused %d", &accepted, &refused); err != nil {
		t.Fatalf("hostile bigenv reported %q: %v", out, err)
	}
	if accepted != 5 || !strings.Contains(out, "temporarily unavailable") {
		t.Errorf("jobs of 1.5 MiB each under an 8 MiB bound: %d of 10 accepted (want 5), %q", accepted, out)
	}
	if o, e, code := c.runAs(other, "", "sbatch", "--hold", "-o", "/dev/null", "--wrap", "true"); code != 0 {
		t.Errorf("another user's sbatch: exit %d %s %s", code, o, e)
	}
	c.run("scancel", "-u", attacker.Username)
	c.run("scancel", "-u", other.Username)
}

// TestGRPCAnswersBoundedPerUser: the gRPC answers of one local user not
// yet written to their connections are bounded (64 MiB; past it a new
// call waits MessageTimeout for them to go out, then is refused "try
// again"). gRPC queues a call's whole answer until the client reads it,
// and the reader opens the flow-control window: 30 listings of 10 MiB
// each that the client never read were all built and held.
func TestGRPCAnswersBoundedPerUser(t *testing.T) {
	t.Parallel()
	attacker := testUser(t, "drovertest2")
	c := startUp(t, 1, "--conf", "MessageTimeout=2")
	cfg, err := slurmconf.Load(c.conf)
	if err != nil {
		t.Fatal(err)
	}
	tool := buildHostile(t, c)
	// Ten held jobs with a 1 MiB environment each: a full listing (the
	// owner gets the environments) is about 10 MiB.
	if out, errOut, code := c.runAs(attacker, "", tool, cfg.SocketPath(), "bigenv", "10", "1024"); code != 0 || !strings.HasPrefix(out, "accepted 10 ") {
		t.Fatalf("hostile bigenv: exit %d\n%s\n%s", code, out, errOut)
	}
	t.Cleanup(func() { c.run("scancel", "-u", attacker.Username) })
	out := c.runHostile(t, attacker, "grpclist", "30", "6")
	t.Logf("hostile grpclist: %s", out)
	var answered, refused int
	if _, err := fmt.Sscanf(out, "answered %d refused %d", &answered, &refused); err != nil {
		t.Fatalf("hostile grpclist reported %q: %v", out, err)
	}
	// One after the other: 64 MiB holds 7 such answers, and the call after
	// them is refused once MessageTimeout passed.
	if answered > 8 || answered == 0 || refused != 1 {
		t.Errorf("unread 10 MiB listings of one user, one after the other: %d answered, %d refused; want 1 to 8 answered, then one refused", answered, refused)
	}
	// The user's own reading client still gets its answers.
	c.extraEnv = []string{"DROVER_TRANSPORT=grpc"}
	o, e, code := c.runAs(attacker, "", "squeue", "-h", "-u", attacker.Username, "-o", "%i")
	c.extraEnv = nil
	if code != 0 || len(strings.Fields(o)) != 10 {
		t.Errorf("the user's squeue over gRPC: exit %d, %q %s", code, o, e)
	}
}
