package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestControllerKill9LosesNoJob kills the controller with SIGKILL while
// clients submit, restarts it, and checks that every acknowledged job is
// there and that job ids are not reused.
func TestControllerKill9LosesNoJob(t *testing.T) {
	t.Parallel()
	dir := worldDir(t)
	conf := filepath.Join(dir, "slurm.conf")
	port := freePort(t)
	os.WriteFile(conf, []byte(fmt.Sprintf(`ClusterName=crash
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=%d
StateSaveLocation=%s/state
SlurmdSpoolDir=%s/spool
NodeName=n1 CPUs=1 RealMemory=1000 State=UNKNOWN
PartitionName=p Nodes=n1 Default=YES State=DOWN
`, port, dir, dir)), 0o644)
	c := &cluster{t: t, dir: dir, conf: conf}
	startCtl := func() *exec.Cmd {
		cmd := exec.Command(filepath.Join(binDir, "drover"), "controller", "-f", conf)
		var log bytes.Buffer
		cmd.Stdout, cmd.Stderr = &log, &log
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		c.waitFor("controller", 30*time.Second, func() bool {
			_, _, code := c.run("scontrol", "ping")
			return code == 0
		})
		return cmd
	}
	ctl := startCtl()

	var mu sync.Mutex
	var acked []int
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				out, _, code := c.run("sbatch", "--parsable", "-o", "/dev/null", "--wrap", "true")
				if code == 0 {
					if id, err := strconv.Atoi(strings.TrimSpace(out)); err == nil {
						mu.Lock()
						acked = append(acked, id)
						mu.Unlock()
					}
				}
			}
		}()
	}
	time.Sleep(1500 * time.Millisecond) // let submissions flow before the crash
	_ = ctl.Process.Signal(syscall.SIGKILL)
	_ = ctl.Wait()
	close(stop)
	wg.Wait()
	if len(acked) == 0 {
		t.Fatal("no submission was acknowledged")
	}

	ctl = startCtl()
	defer func() { _ = ctl.Process.Signal(syscall.SIGTERM); _ = ctl.Wait() }()
	out := c.must("squeue", "-h", "-t", "all", "-o", "%i")
	have := map[int]bool{}
	for _, f := range strings.Fields(out) {
		n, _ := strconv.Atoi(f)
		have[n] = true
	}
	sort.Ints(acked)
	for _, id := range acked {
		if !have[id] {
			t.Errorf("acknowledged job %d lost after kill -9", id)
		}
	}
	next, _, code := c.run("sbatch", "--parsable", "-o", "/dev/null", "--wrap", "true")
	n, _ := strconv.Atoi(strings.TrimSpace(next))
	if code != 0 || n <= acked[len(acked)-1] {
		t.Errorf("job id after restart %q (exit %d) reuses an id ≤ %d", next, code, acked[len(acked)-1])
	}
	t.Logf("%d acknowledged submissions survived kill -9", len(acked))
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := netListen()
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return portOf(l)
}

// TestJobEndsWhileControllerDown: a job finishes while the controller is
// dead; after the restart its end is recorded once and it is not run again.
func TestJobEndsWhileControllerDown(t *testing.T) {
	t.Parallel()
	c, daemon := manualCluster(t, "outage", "")
	dir := c.dir
	ctl := daemon("controller")
	c.waitFor("controller", 30*time.Second, func() bool { _, _, code := c.run("scontrol", "ping"); return code == 0 })
	daemon("agent", "--name", "outage1")
	runs, ending := filepath.Join(dir, "runs"), filepath.Join(dir, "ending")
	id := c.sbatch("-o", "/dev/null", "--wrap", "echo ran >> "+runs+"; sleep 2; touch "+ending)
	c.waitState(id, "RUNNING", 30*time.Second)
	_ = ctl.Process.Signal(syscall.SIGKILL)
	_ = ctl.Wait()
	// The job ends while no controller listens (a fixed 3 s let a loaded
	// machine restart the controller before the script's 2 s were over).
	c.waitFor("the job's script to end", 30*time.Second, func() bool {
		_, err := os.Stat(ending)
		return err == nil
	})
	daemon("controller")
	c.waitState(id, "COMPLETED", 30*time.Second)
	time.Sleep(500 * time.Millisecond) // a wrongful relaunch would show by now
	if got := readFile(t, runs); got != "ran\n" {
		t.Errorf("job ran %d times", strings.Count(got, "ran"))
	}
}

// TestAgentRestartKeepsBatchJobs: an agent killed (SIGKILL) or stopped
// (SIGTERM) while batch scripts run leaves them running under their
// supervisors; the next agent takes them back and reports their ends, and
// each job runs once.
func TestAgentRestartKeepsBatchJobs(t *testing.T) {
	t.Parallel()
	c, daemon := manualCluster(t, "restart", "SlurmdTimeout=30\n")
	dir := c.dir
	daemon("controller")
	c.waitFor("controller", 30*time.Second, func() bool { _, _, code := c.run("scontrol", "ping"); return code == 0 })
	agent := daemon("agent", "--name", "restart1")
	c.waitFor("node up", 30*time.Second, func() bool {
		o, _, _ := c.run("sinfo", "-h", "-o", "%t")
		return strings.TrimSpace(o) == "idle"
	})
	for _, stop := range []syscall.Signal{syscall.SIGKILL, syscall.SIGTERM} {
		runs := filepath.Join(dir, "runs-"+stop.String())
		out := filepath.Join(dir, "out-"+stop.String())
		id := c.sbatch("-o", out, "--wrap", "echo ran >> "+runs+"; sleep 3; echo finished")
		c.waitFor("the job to start", 30*time.Second, func() bool { return readFileOr(runs) == "ran\n" })
		_ = agent.Process.Signal(stop)
		_ = agent.Wait()
		agent = daemon("agent", "--name", "restart1")
		c.waitState(id, "COMPLETED", 30*time.Second)
		if got := readFile(t, out); got != "finished\n" {
			t.Errorf("after agent %v: output %q", stop, got)
		}
		if got := readFileOr(runs); got != "ran\n" {
			t.Errorf("after agent %v: the job ran %d times", stop, strings.Count(got, "ran"))
		}
		if r := c.jobField(id, "Restarts"); r != "0" {
			t.Errorf("after agent %v: Restarts=%s", stop, r)
		}
	}
	// Steps and allocations too: a batch job's step, and an salloc whose
	// srun streams its output here, carry on across an agent restart.
	stepOut := filepath.Join(dir, "step.out")
	sid := c.sbatch("-o", stepOut, "--wrap", "srun bash -c 'echo step-start; sleep 3; echo step-done'")
	srun := exec.Command(filepath.Join(binDir, "salloc"), "srun", "bash", "-c", "echo live-before; sleep 3; echo live-after")
	srun.Dir, srun.Env = dir, c.env()
	var live syncBuffer
	srun.Stdout, srun.Stderr = &live, &live
	if err := srun.Start(); err != nil {
		t.Fatal(err)
	}
	c.waitFor("both steps to start", 30*time.Second, func() bool {
		return strings.Contains(live.String(), "live-before") && strings.Contains(readFileOr(stepOut), "step-start")
	})
	_ = agent.Process.Signal(syscall.SIGKILL)
	_ = agent.Wait()
	agent = daemon("agent", "--name", "restart1")
	if err := srun.Wait(); err != nil || !strings.Contains(live.String(), "live-after") {
		t.Errorf("salloc + srun across an agent restart: %v %q", err, live.String())
	}
	c.waitState(sid, "COMPLETED", 30*time.Second)
	if got := readFileOr(stepOut); got != "step-start\nstep-done\n" {
		t.Errorf("batch step across an agent restart: %q", got)
	}

	// A job that ends while no agent runs is reported by the next one.
	runs := filepath.Join(dir, "runs-gap")
	id := c.sbatch("-o", "/dev/null", "--wrap", "echo ran >> "+runs+"; sleep 1; exit 3")
	c.waitFor("the job to start", 30*time.Second, func() bool { return readFileOr(runs) == "ran\n" })
	_ = agent.Process.Signal(syscall.SIGKILL)
	_ = agent.Wait()
	time.Sleep(2 * time.Second)
	_ = daemon("agent", "--name", "restart1")
	c.waitState(id, "FAILED", 30*time.Second)
	if ec := c.jobField(id, "ExitCode"); ec != "3:0" {
		t.Errorf("exit code of a job that ended without an agent: %q", ec)
	}
}

func readFileOr(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

// manualCluster writes a one-node slurm.conf (node NAME1, 2 CPUs, KillWait=2, plus
// extra lines) for daemons a test starts itself with the returned function;
// they get SIGTERM when the test ends.
func manualCluster(t *testing.T, name, extra string) (*cluster, func(args ...string) *exec.Cmd) {
	t.Helper()
	dir := worldDir(t)
	conf := filepath.Join(dir, "slurm.conf")
	text := fmt.Sprintf(`ClusterName=%s
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=%d
StateSaveLocation=%s/state
SlurmdSpoolDir=%s/spool
KillWait=2
%sNodeName=%s1 CPUs=2 RealMemory=1000
PartitionName=p Nodes=ALL Default=YES
`, name, freePort(t), dir, dir, extra, name)
	if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	c := &cluster{t: t, dir: dir, conf: conf}
	// Each daemon's output goes to its own log (controller-1.log,
	// agent-2.log, ...), shown when the test fails: a restarted agent's
	// log is the only record of what it took back.
	var logs []string
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		for _, f := range logs {
			if b, err := os.ReadFile(f); err == nil {
				t.Logf("%s (tail):\n%s", filepath.Base(f), tail(string(b), 3000))
			}
		}
	})
	daemon := func(args ...string) *exec.Cmd {
		cmd := exec.Command(filepath.Join(binDir, "drover"), append(args, "-f", conf)...)
		logf, err := os.Create(filepath.Join(dir, fmt.Sprintf("%s-%d.log", args[0], len(logs)+1)))
		if err != nil {
			t.Fatal(err)
		}
		logs = append(logs, logf.Name())
		cmd.Stdout, cmd.Stderr = logf, logf
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		logf.Close() // the daemon has its own copy
		t.Cleanup(func() { _ = cmd.Process.Signal(syscall.SIGTERM); _ = cmd.Wait() })
		return cmd
	}
	return c, daemon
}
