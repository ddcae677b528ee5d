package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestStepsInBatchJob runs a three-node batch job whose script launches
// steps: ranks and step variables on every node, block and cyclic layouts,
// labels, stdin to every task, exit statuses, a step that waits for another,
// --overlap, and the step records the controller keeps.
func TestStepsInBatchJob(t *testing.T) {
	t.Parallel()
	c := startUp(t, 3, "--cpus", "2")
	script := filepath.Join(c.dir, "steps.sh")
	writeScript(t, script, c.named(`#!/bin/bash
#SBATCH -N3 --ntasks-per-node=2 -o steps-%j.out -e steps-%j.err
echo "batch on $SLURMD_NODENAME first=$(scontrol show hostnames $SLURM_JOB_NODELIST | head -1)"
srun bash -c 'echo "rank $SLURM_PROCID local $SLURM_LOCALID node $SLURM_NODEID on $SLURMD_NODENAME step $SLURM_STEP_ID ntasks $SLURM_NTASKS tpn $SLURM_STEP_TASKS_PER_NODE nodes $SLURM_STEP_NODELIST launch=${SLURM_LAUNCH_NODE_IPADDR:+set}"' | sort
echo "---cyclic"
srun -n3 --distribution=cyclic bash -c 'echo "rank $SLURM_PROCID on $SLURMD_NODENAME"' | sort
echo "---label"
srun -l -n2 -N1 bash -c 'echo hi; echo there'
echo "---stdin"
echo "from stdin" | srun -n2 -N2 cat
echo "---exit"
srun -n2 -N2 bash -c 'exit $((SLURM_PROCID + 3))'
echo "status $?"
echo "---wait"
srun -N1 -n1 -w node3 sleep 2 &
sleep 0.5
srun -N1 -n1 -w node3 echo second-step
wait
echo "---overlap"
srun -N1 -n1 -w node2 sleep 2 &
sleep 0.5
srun --overlap -N1 -n1 -w node2 echo overlapped
wait
`))
	id := c.sbatch(script)
	c.waitState(id, "COMPLETED", 60*time.Second)
	out := readFile(t, filepath.Join(c.dir, "steps-"+id+".out"))
	errOut := readFile(t, filepath.Join(c.dir, "steps-"+id+".err"))
	sections := map[string]string{}
	name := "main"
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "---") {
			name = line[3:]
			continue
		}
		sections[name] += line + "\n"
	}
	wantMain := c.named(`batch on node1 first=node1
rank 0 local 0 node 0 on node1 step 0 ntasks 6 tpn 2(x3) nodes node[1-3] launch=set
rank 1 local 1 node 0 on node1 step 0 ntasks 6 tpn 2(x3) nodes node[1-3] launch=set
rank 2 local 0 node 1 on node2 step 0 ntasks 6 tpn 2(x3) nodes node[1-3] launch=set
rank 3 local 1 node 1 on node2 step 0 ntasks 6 tpn 2(x3) nodes node[1-3] launch=set
rank 4 local 0 node 2 on node3 step 0 ntasks 6 tpn 2(x3) nodes node[1-3] launch=set
rank 5 local 1 node 2 on node3 step 0 ntasks 6 tpn 2(x3) nodes node[1-3] launch=set
`)
	if sections["main"] != wantMain {
		t.Errorf("block step output:\n%s\nwant:\n%s\nstderr: %s", sections["main"], wantMain, errOut)
	}
	if got, want := sections["cyclic"], c.named("rank 0 on node1\nrank 1 on node2\nrank 2 on node3\n"); got != want {
		t.Errorf("cyclic: %q, want %q", got, want)
	}
	label := strings.Split(strings.TrimSpace(sections["label"]), "\n")
	sort.Strings(label)
	if strings.Join(label, "|") != "0: hi|0: there|1: hi|1: there" {
		t.Errorf("labels: %q", label)
	}
	if got := sections["stdin"]; got != "from stdin\nfrom stdin\n" {
		t.Errorf("stdin reaches every task (Slurm's --input=all): %q", got)
	}
	if !strings.Contains(sections["exit"], "status 4") {
		t.Errorf("exit status of a failing step: %q", sections["exit"])
	}
	for _, want := range []string{c.named("node1: task 0: Exited with exit code 3"), c.named("node2: task 1: Exited with exit code 4"),
		"step creation temporarily disabled, retrying (Requested nodes are busy)"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	if !strings.Contains(sections["wait"], "second-step") || !strings.Contains(sections["overlap"], "overlapped") {
		t.Errorf("wait/overlap sections: %q %q", sections["wait"], sections["overlap"])
	}
	// Whether the --overlap step also printed the message depends on
	// timing (sleep 0.5 under load); that it ran beside the other is
	// checked by its output above.
}

// TestSallocAndStepControl: salloc around a command, srun steps inside it,
// squeue -s / scontrol show step / scancel JOB.STEP on a running step, and
// the allocation given back with the command's status.
func TestSallocAndStepControl(t *testing.T) {
	t.Parallel()
	c := startUp(t, 2, "--cpus", "2")
	out, errOut, code := c.run("salloc", "-N2", "bash", "-c",
		`echo "job=$SLURM_JOB_ID nodes=$SLURM_JOB_NODELIST nn=$SLURM_NNODES"; srun hostname >/dev/null; srun -N2 -n2 bash -c 'echo step $SLURM_STEP_ID rank $SLURM_PROCID' | sort; exit 7`)
	if code != 7 {
		t.Fatalf("salloc exit %d, want 7\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	m := regexp.MustCompile(`job=(\d+) nodes=` + regexp.QuoteMeta(c.named("node[1-2]")) + ` nn=2\n`).FindStringSubmatch(out)
	if m == nil || !strings.Contains(out, "step 1 rank 0\nstep 1 rank 1\n") {
		t.Fatalf("salloc output: %q", out)
	}
	id := m[1]
	for _, want := range []string{"salloc: Granted job allocation " + id, "salloc: Relinquishing job allocation " + id} {
		if !strings.Contains(errOut, want) {
			t.Errorf("salloc stderr lacks %q: %q", want, errOut)
		}
	}
	c.waitFor("salloc job to end", 20*time.Second, func() bool {
		st := c.jobField(id, "JobState")
		return st == "FAILED"
	})
	if ec := c.jobField(id, "ExitCode"); ec != "7:0" {
		t.Errorf("salloc job exit code %q", ec)
	}

	// A long step, watched and cancelled from outside.
	salloc := exec.Command(filepath.Join(binDir, "salloc"), "-N1", "srun", "sleep", "300")
	salloc.Dir, salloc.Env = c.dir, c.env()
	var sout, serr syncBuffer
	salloc.Stdout, salloc.Stderr = &sout, &serr
	if err := salloc.Start(); err != nil {
		t.Fatal(err)
	}
	defer salloc.Process.Kill()
	var step string
	c.waitFor("a running step", 30*time.Second, func() bool {
		o, _, _ := c.run("squeue", "-s", "-h", "-o", "%i %j %N")
		for _, l := range strings.Split(o, "\n") {
			if f := strings.Fields(l); len(f) == 3 && f[1] == "sleep" && strings.HasSuffix(f[0], ".0") {
				step = f[0]
				return true
			}
		}
		return false
	})
	show := c.must("scontrol", "show", "step", step)
	if !strings.Contains(show, "StepId="+step) || !strings.Contains(show, "State=RUNNING") {
		t.Errorf("scontrol show step: %s", show)
	}
	c.must("scancel", step)
	done := make(chan error, 1)
	go func() { done <- salloc.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("salloc did not end after scancel %s: %s", step, serr.String())
	}
	if !strings.Contains(serr.String(), "CANCELLED AT") {
		t.Errorf("srun stderr after scancel: %q", serr.String())
	}
}

// TestSbcastAndSattach copies a file to every node of an allocation, and
// attaches to a running step's output.
func TestSbcastAndSattach(t *testing.T) {
	t.Parallel()
	c := startUp(t, 3)
	src := filepath.Join(c.dir, "payload.txt")
	if err := os.WriteFile(src, []byte("payload\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	dest := filepath.Join(c.dir, "copied.txt")
	out, errOut, code := c.run("salloc", "-N3", "bash", "-c",
		"sbcast -f "+src+" "+dest+" && srun -N3 -n3 cat "+dest+" && sbcast "+src+" "+dest)
	if strings.Count(out, "payload\n") != 3 {
		t.Errorf("sbcast then srun cat on 3 nodes: %q %q", out, errOut)
	}
	if code == 0 || !strings.Contains(errOut, "File exists") {
		t.Errorf("sbcast without -f onto an existing file: exit %d, %q", code, errOut)
	}

	salloc := exec.Command(filepath.Join(binDir, "salloc"), "-N1", "srun", "bash", "-c", "for i in $(seq 1 100); do echo tick $i; sleep 0.2; done")
	salloc.Dir, salloc.Env = c.dir, c.env()
	if err := salloc.Start(); err != nil {
		t.Fatal(err)
	}
	defer salloc.Process.Kill()
	var step string
	c.waitFor("a running step", 30*time.Second, func() bool {
		o, _, _ := c.run("squeue", "-s", "-h", "-o", "%i")
		for _, f := range strings.Fields(o) {
			if strings.HasSuffix(f, ".0") {
				step = f
				return true
			}
		}
		return false
	})
	att := exec.Command(filepath.Join(binDir, "sattach"), step)
	att.Dir, att.Env = c.dir, c.env()
	var aout syncBuffer
	att.Stdout = &aout
	if err := att.Start(); err != nil {
		t.Fatal(err)
	}
	defer att.Process.Kill()
	c.waitFor("sattach to see ticks", 20*time.Second, func() bool { return strings.Count(aout.String(), "tick") >= 2 })
}

func writeScript(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o755); err != nil {
		t.Fatal(err)
	}
}

// TestSrunCtrlC: one Ctrl-C makes srun print the tasks' status and leaves
// them running; two within a second send SIGINT to the tasks.
func TestSrunCtrlC(t *testing.T) {
	t.Parallel()
	c := startUp(t, 1)
	srun := exec.Command(filepath.Join(binDir, "srun"), "-n2", "bash", "-c",
		`trap "echo got-int-$SLURM_PROCID; exit 9" INT; echo ready; while :; do sleep 0.1; done`)
	srun.Dir, srun.Env = c.dir, c.env()
	var out, errOut syncBuffer
	srun.Stdout, srun.Stderr = &out, &errOut
	if err := srun.Start(); err != nil {
		t.Fatal(err)
	}
	defer srun.Process.Kill()
	c.waitFor("both tasks ready", 30*time.Second, func() bool { return strings.Count(out.String(), "ready") == 2 })
	_ = srun.Process.Signal(syscall.SIGINT)
	c.waitFor("the status line", 10*time.Second, func() bool { return strings.Contains(errOut.String(), "tasks 0-1: running") })
	if !strings.Contains(errOut.String(), "interrupt (one more within 1 sec to abort)") || strings.Contains(out.String(), "got-int") {
		t.Fatalf("one Ctrl-C: %q %q", out.String(), errOut.String())
	}
	time.Sleep(1200 * time.Millisecond) // the next one starts afresh
	_ = srun.Process.Signal(syscall.SIGINT)
	time.Sleep(100 * time.Millisecond)
	_ = srun.Process.Signal(syscall.SIGINT)
	err := srun.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 9 {
		t.Errorf("srun after two Ctrl-C: %v\n%s\n%s", err, out.String(), errOut.String())
	}
	if !strings.Contains(out.String(), "got-int-0") || !strings.Contains(out.String(), "got-int-1") {
		t.Errorf("tasks did not get SIGINT: %q", out.String())
	}
}

// TestSrunCtrlCPastUnreadStdin: a task that never reads its stdin while
// srun is fed without end fills the node's stdin queue, and the I/O stream
// stops; two Ctrl-C still reach the task, since srun forwards signals
// through the controller, not behind the stdin in the stream.
func TestSrunCtrlCPastUnreadStdin(t *testing.T) {
	c := startUp(t, 1)
	srun := exec.Command(filepath.Join(binDir, "srun"), "-n1", "bash", "-c",
		`trap "echo got-int; exit 9" INT; echo ready; while :; do sleep 0.1; done`)
	srun.Dir, srun.Env = c.dir, c.env()
	var out, errOut syncBuffer
	srun.Stdout, srun.Stderr = &out, &errOut
	srun.Stdin = zeros{}
	if err := srun.Start(); err != nil {
		t.Fatal(err)
	}
	defer srun.Process.Kill()
	c.waitFor("the task ready", 30*time.Second, func() bool { return strings.Contains(out.String(), "ready") })
	// srun's stdin pump blocks once the node's queue for the task (256 KiB)
	// and the sockets are full.
	c.waitFor("srun to block on the stream", 30*time.Second, func() bool { return blockedOnSocket(srun.Process.Pid) })
	_ = srun.Process.Signal(syscall.SIGINT)
	time.Sleep(100 * time.Millisecond) // the second Ctrl-C within a second forwards SIGINT
	_ = srun.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- srun.Wait() }()
	select {
	case err := <-done:
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 9 || !strings.Contains(out.String(), "got-int") {
			t.Errorf("srun after two Ctrl-C: %v\n%s\n%s", err, out.String(), errOut.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("SIGINT did not reach the task within 30 s: %q %q", out.String(), errOut.String())
	}
}

// zeros is an endless stdin.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// blockedOnSocket reports whether process pid has a TCP connection whose
// send queue holds more than 64 KiB: the peer stopped reading.
func blockedOnSocket(pid int) bool {
	out, err := exec.Command("ss", "-tnpH").Output()
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) < 6 || !strings.Contains(line, "pid="+strconv.Itoa(pid)+",") {
			continue
		}
		if q, _ := strconv.Atoi(f[2]); q > 64<<10 {
			return true
		}
	}
	return false
}
