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

// stateOnTmpfs starts a controller (no agents: jobs stay pending in a DOWN
// partition) whose StateSaveLocation is a tmpfs of sizeMiB, so that a test
// can fill it. It needs root to mount; elsewhere the test is skipped.
func stateOnTmpfs(t *testing.T, sizeMiB int, extra string) (c *cluster, state string, start func() *exec.Cmd) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a tmpfs")
	}
	dir := worldDir(t)
	state = filepath.Join(dir, "state")
	if err := os.MkdirAll(state, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%dM", sizeMiB), "tmpfs", state).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs: %v %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", state).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v %s", state, err, out)
		}
	})
	conf := filepath.Join(dir, "slurm.conf")
	os.WriteFile(conf, []byte(fmt.Sprintf(`ClusterName=full
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=%d
StateSaveLocation=%s
SlurmdSpoolDir=%s/spool
%sNodeName=n1 CPUs=1 RealMemory=1000 State=UNKNOWN
PartitionName=p Nodes=n1 Default=YES State=DOWN
`, freePort(t), state, dir, extra)), 0o644)
	c = &cluster{t: t, dir: dir, conf: conf}
	var logs []*bytes.Buffer
	t.Cleanup(func() {
		if t.Failed() {
			for i, b := range logs {
				t.Logf("controller run %d log (tail):\n%s", i+1, tail(b.String(), 4000))
			}
		}
	})
	start = func() *exec.Cmd {
		cmd := exec.Command(filepath.Join(binDir, "drover"), "controller", "-f", conf)
		b := &bytes.Buffer{}
		logs = append(logs, b)
		cmd.Stdout, cmd.Stderr = b, b
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Signal(syscall.SIGTERM); _ = cmd.Wait() })
		c.waitFor("controller", 30*time.Second, func() bool {
			_, _, code := c.run("scontrol", "ping")
			return code == 0
		})
		return cmd
	}
	return c, state, start
}

// fill takes all but leave bytes of the filesystem holding dir, with a file
// it returns; removing the file frees the space.
func fill(t *testing.T, dir string, leave int64) string {
	t.Helper()
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	n := int64(st.Bavail)*st.Bsize - leave
	path := filepath.Join(dir, fmt.Sprintf("filler%d", time.Now().UnixNano()))
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if n > 0 {
		if err := syscall.Fallocate(int(f.Fd()), 0, 0, n); err != nil {
			t.Fatalf("fill %s with %d bytes: %v", dir, n, err)
		}
	}
	return path
}

// queued returns the ids squeue lists, failing the test if squeue fails.
func queued(t *testing.T, c *cluster) []int {
	t.Helper()
	out, errOut, code := c.run("squeue", "-h", "-t", "all", "-o", "%i")
	if code != 0 {
		t.Fatalf("squeue while the state directory is full: exit %d: %s", code, errOut)
	}
	var ids []int
	for _, f := range strings.Fields(out) {
		n, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("squeue id %q", f)
		}
		ids = append(ids, n)
	}
	return ids
}

// TestStateDirFullRefusesWritesServesReads: with less free space than
// DroverMinFreeSpace in StateSaveLocation, sbatch is refused with a clear
// error, squeue and scontrol still answer, and submissions are accepted
// again as soon as space is freed, without a restart.
func TestStateDirFullRefusesWritesServesReads(t *testing.T) {
	t.Parallel()
	c, state, start := stateOnTmpfs(t, 256, "DroverMinFreeSpace=100M\n")
	start()
	first := c.sbatch("-o", "/dev/null", "--wrap", "true")
	filler := fill(t, state, 50<<20)
	_, errOut, code := c.run("sbatch", "-o", "/dev/null", "--wrap", "true")
	if code != 1 || !strings.Contains(errOut, "sbatch: error: Batch job submission failed: StateSaveLocation "+state+
		": No space left on device (") || !strings.Contains(errOut, "MiB kept in reserve)") {
		t.Fatalf("sbatch on a full state directory: exit %d, %q", code, errOut)
	}
	if ids := queued(t, c); len(ids) != 1 || strconv.Itoa(ids[0]) != first {
		t.Fatalf("squeue while full: %v, want [%s]", ids, first)
	}
	if got := c.jobField(first, "JobState"); got != "PENDING" {
		t.Fatalf("scontrol show job while full: JobState=%q", got)
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	second := c.sbatch("-o", "/dev/null", "--wrap", "true")
	if ids := queued(t, c); len(ids) != 2 || strconv.Itoa(ids[1]) != second {
		t.Fatalf("squeue after space came back: %v", ids)
	}
}

// TestStateDirFullUnderTheLogRecovers: with the guard off
// (DroverMinFreeSpace=0) the disk fills under the Raft log itself: the next
// log segment cannot be preallocated. The controller used to refuse every
// change ("node is not the leader") until restarted. Now submissions fail
// while the disk is full, reads still answer, and once space is freed the
// controller reopens its log by itself; every acknowledged job is there,
// once, before and after a restart.
func TestStateDirFullUnderTheLogRecovers(t *testing.T) {
	t.Parallel()
	c, state, start := stateOnTmpfs(t, 110, "DroverMinFreeSpace=0\n")
	ctl := start()
	// 1 MiB scripts fill a 64 MiB log segment in about 64 submissions.
	script := filepath.Join(c.dir, "big.sh")
	os.WriteFile(script, []byte("#!/bin/sh\n#"+strings.Repeat("x", 1<<20)+"\ntrue\n"), 0o644)
	filler := fill(t, state, 1<<20)
	var acked []int
	var errOut string
	for i := 0; i < 200; i++ {
		out, e, code := c.run("sbatch", "--parsable", "-o", "/dev/null", script)
		if code != 0 {
			errOut = e
			break
		}
		n, _ := strconv.Atoi(strings.TrimSpace(out))
		acked = append(acked, n)
	}
	if errOut == "" {
		t.Fatalf("200 submissions of 1 MiB accepted on a full state directory")
	}
	t.Logf("%d submissions accepted, then: %s", len(acked), strings.TrimSpace(errOut))
	if !strings.Contains(errOut, "No space left on device") && !strings.Contains(errOut, "Unable to save state") {
		t.Errorf("sbatch's error does not say the state could not be saved: %q", errOut)
	}
	if got := queued(t, c); len(got) != len(acked) {
		t.Fatalf("squeue while full lists %d jobs, %d acknowledged", len(got), len(acked))
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	var id string
	c.waitFor("a submission accepted after space was freed", 60*time.Second, func() bool {
		out, _, code := c.run("sbatch", "--parsable", "-o", "/dev/null", "--wrap", "true")
		id = strings.TrimSpace(out)
		return code == 0
	})
	n, _ := strconv.Atoi(id)
	acked = append(acked, n)
	check := func(when string) {
		got := queued(t, c)
		seen := map[int]int{}
		for _, id := range got {
			seen[id]++
		}
		for _, id := range acked {
			if seen[id] != 1 {
				t.Errorf("%s: acknowledged job %d listed %d times", when, id, seen[id])
			}
		}
		if len(got) != len(acked) {
			t.Errorf("%s: %d jobs listed, %d acknowledged", when, len(got), len(acked))
		}
	}
	check("after recovery")
	_ = ctl.Process.Signal(syscall.SIGTERM)
	_ = ctl.Wait()
	start()
	check("after restart")
}
