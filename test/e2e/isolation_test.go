package e2e

import (
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// upWithConf starts `drover up` on a slurm.conf (and gres.conf,
// cgroup.conf, ...) the test writes: body holds the node and partition
// lines and any keys; the header (ports, directories) is added here.
func upWithConf(t *testing.T, body string, files map[string]string, prep func(dir string)) *cluster {
	t.Helper()
	dir := worldDir(t)
	conf := fmt.Sprintf("ClusterName=iso\nSlurmctldHost=localhost(127.0.0.1)\nSlurmctldPort=%d\n"+
		"StateSaveLocation=%s/state\nSlurmdSpoolDir=%s/spool\nSlurmdTimeout=4\nKillWait=2\n%s",
		freePort(t), dir, dir, body)
	files["slurm.conf"] = conf
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(strings.ReplaceAll(text, "$DIR", dir)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if prep != nil {
		prep(dir)
	}
	c := &cluster{t: t, dir: dir, conf: filepath.Join(dir, "slurm.conf")}
	nodes := strings.Count(body, "NodeName=")
	c.start(nodes)
	t.Cleanup(c.stop)
	return c
}

// fakeGPUs makes n character devices with NVIDIA's major number in
// dir/dev: no driver answers them, so opening one fails with ENXIO ("No
// such device or address") when the devices cgroup allows it and EPERM
// ("Operation not permitted") when it does not.
func fakeGPUs(t *testing.T, dir string, n int) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, "dev"), 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		p := filepath.Join(dir, "dev", fmt.Sprintf("nvidia%d", i))
		if err := syscall.Mknod(p, syscall.S_IFCHR|0o666, int(195<<8|i)); err != nil {
			t.Skipf("mknod: %v", err)
		}
		_ = os.Chmod(p, 0o666)
	}
}

func cgroupV1(t *testing.T) {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("needs root")
	}
	if _, err := os.Stat("/sys/fs/cgroup/memory/memory.limit_in_bytes"); err != nil {
		t.Skip("no cgroup v1 memory hierarchy")
	}
}

func TestIsolation(t *testing.T) {
	t.Parallel()
	cgroupV1(t)
	u := testUser(t, "drovertest1")
	c := upWithConf(t, "GresTypes=gpu\nNodeName=iso1 NodeAddr=127.0.0.1 CPUs=4 RealMemory=1000 Gres=gpu:tesla:2\n"+
		"PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP\n",
		map[string]string{"gres.conf": "NodeName=iso1 Name=gpu Type=tesla File=$DIR/dev/nvidia[0-1]\n"},
		func(dir string) { fakeGPUs(t, dir, 2) })
	if out := c.must("scontrol", "show", "node", "iso1"); !strings.Contains(out, "Gres=gpu:tesla:2") {
		t.Fatalf("node gres:\n%s", out)
	}

	// An impossible request is refused at submission, in Slurm's words.
	_, errOut, code := c.runAs(u, "", "sbatch", "--gres=gpu:3", "--wrap", "true")
	if code == 0 || !strings.Contains(errOut, "Requested node configuration is not available") {
		t.Errorf("--gres=gpu:3 on a 2-GPU node: exit %d, %q", code, errOut)
	}

	// Two GPU jobs: distinct GPUs and cores; each opens its own device and
	// is refused the other's, even after resetting CUDA_VISIBLE_DEVICES.
	script := `#!/bin/sh
echo "cuda=$CUDA_VISIBLE_DEVICES jobgpus=$SLURM_JOB_GPUS bind=$SLURM_CPU_BIND"
grep Cpus_allowed_list /proc/self/status
for d in 0 1; do
  if (exec 3<` + c.dir + `/dev/nvidia$d) 2>/tmp/e.$$; then echo "gpu$d open"; else echo "gpu$d $(cat /tmp/e.$$)"; fi
done
rm -f /tmp/e.$$
srun -n1 --gres=gpu:1 sh -c 'echo "step gpus=$SLURM_STEP_GPUS cuda=$CUDA_VISIBLE_DEVICES"'
touch started.$SLURM_JOB_ID
sleep 60
`
	// The user's home outlives clusters whose job ids restart at 1: clear
	// what earlier runs left there.
	for _, pat := range []string{"started.*", "gpu-*.out", "hog-*.out"} {
		old, _ := filepath.Glob(filepath.Join(u.HomeDir, pat))
		for _, f := range old {
			_ = os.Remove(f)
		}
	}
	writeScript(t, filepath.Join(u.HomeDir, "gpu.sh"), script)
	_ = os.Chown(filepath.Join(u.HomeDir, "gpu.sh"), atoi(u.Uid), atoi(u.Gid))
	var ids []string
	for range 2 {
		out, errOut, code := c.runAs(u, "", "sbatch", "--gres=gpu:1", "-c1", "--mem=100M", "-o", "gpu-%j.out", "gpu.sh")
		if code != 0 {
			t.Fatalf("sbatch: %s %s", out, errOut)
		}
		ids = append(ids, submittedRe.FindStringSubmatch(out)[1])
	}
	for _, id := range ids {
		c.waitFor("job "+id+" to start", 30*time.Second, func() bool {
			_, err := os.Stat(filepath.Join(u.HomeDir, "started."+id))
			return err == nil
		})
	}
	if b := c.must("squeue", "-h", "-o", "%i %b", "-j", ids[0]); !strings.Contains(b, "gpu:1") {
		t.Errorf("squeue %%b: %q", b)
	}
	seen := map[string]bool{}
	for _, id := range ids {
		out := readFile(t, filepath.Join(u.HomeDir, "gpu-"+id+".out"))
		m := regexp.MustCompile(`cuda=(\d) jobgpus=(\d) bind=quiet,mask_cpu:0x(\d)`).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("job %s output:\n%s", id, out)
		}
		gpu := m[2]
		other := map[string]string{"0": "1", "1": "0"}[gpu]
		seen["gpu"+gpu] = true
		if !strings.Contains(out, "gpu"+gpu+" ") || strings.Contains(out, "gpu"+gpu+" open") ||
			!strings.Contains(out, "No such device") {
			t.Errorf("job %s cannot reach its own GPU %s:\n%s", id, gpu, out)
		}
		if !strings.Contains(out, "Operation not permitted") || strings.Contains(out, "gpu"+other+" open") {
			t.Errorf("job %s was not refused GPU %s:\n%s", id, other, out)
		}
		if !strings.Contains(out, "step gpus="+gpu+" cuda=0") {
			t.Errorf("job %s: its step did not get its GPU %s:\n%s", id, gpu, out)
		}
		cpus := regexp.MustCompile(`Cpus_allowed_list:\s*(\S+)`).FindStringSubmatch(out)
		if cpus == nil || strings.ContainsAny(cpus[1], ",-") {
			t.Errorf("job %s not bound to one core:\n%s", id, out)
		} else {
			seen["cpu"+cpus[1]] = true
		}
		if d := c.jobField(id, "TRES"); !strings.Contains(d, "gres/gpu=1") {
			t.Errorf("job %s TRES=%q", id, d)
		}
	}
	if !seen["gpu0"] || !seen["gpu1"] || !seen["cpu0"] || !seen["cpu1"] {
		t.Errorf("jobs did not get distinct GPUs and cores: %v", seen)
	}
	if out := c.must("sstat", "-P", "-n", "-o", "JobID,MaxRSS,NTasks", "-j", ids[0]+".batch"); !strings.HasPrefix(out, ids[0]+".batch|") {
		t.Errorf("sstat: %q", out)
	}

	// A memory hog is killed inside its own cgroup; the neighbours run on.
	hog := c.runAsSbatch(t, u, "--mem=60M", "-o", "hog-%j.out", "--wrap", "x=$(head -c 300000000 /dev/zero | tr '\\0' a); echo survived")
	c.waitState(hog, "OUT_OF_MEMORY", 60*time.Second)
	if ec := c.jobField(hog, "ExitCode"); ec != "0:125" {
		t.Errorf("OOM job ExitCode=%s, want 0:125", ec)
	}
	out := readFile(t, filepath.Join(u.HomeDir, "hog-"+hog+".out"))
	if !strings.Contains(out, "oom-kill event") || strings.Contains(out, "survived") {
		t.Errorf("hog output:\n%s", out)
	}
	for _, id := range ids {
		if s := c.jobField(id, "JobState"); s != "RUNNING" {
			t.Errorf("neighbour job %s is %s after the OOM", id, s)
		}
	}

	// Ending a job kills what escaped its process group and removes its
	// cgroup.
	marker := "drover-escapee-" + ids[0]
	esc := c.runAsSbatch(t, u, "-o", "/dev/null", "--wrap", "setsid sh -c 'exec -a "+marker+" sleep 300' & sleep 1")
	c.waitState(esc, "COMPLETED", 30*time.Second)
	c.must("scancel", ids[0], ids[1])
	c.waitState(ids[0], "CANCELLED", 30*time.Second)
	c.waitState(ids[1], "CANCELLED", 30*time.Second)
	c.waitFor("escaped process killed", 10*time.Second, func() bool {
		out, _, _ := c.run("/usr/bin/pgrep", "-f", marker)
		return strings.TrimSpace(out) == ""
	})
	// Steps with --exact are bound to cores of their own within the job's.
	// The node is empty now, so the job gets CPU ids 0-1: the machine's
	// two CPUs (ids beyond the machine's CPUs wrap around them).
	// Each step waits (30 s at most) until the other one runs too: on a
	// loaded machine the second srun may otherwise come after the first
	// step ended, and rightly get its core.
	both := filepath.Join(c.dir, "exact-steps")
	if err := os.Mkdir(both, 0o755); err != nil {
		t.Fatal(err)
	}
	out, errOut, code = c.run("salloc", "-c", "2", "sh", "-c",
		"for i in 1 2; do srun --exact -n1 -c1 sh -c 'grep Cpus_allowed_list /proc/self/status; touch "+both+"/$$; "+
			"n=0; while [ $(ls "+both+" | wc -l) -lt 2 ] && [ $n -lt 300 ]; do sleep 0.1; n=$((n+1)); done' & done; wait")
	cores := regexp.MustCompile(`Cpus_allowed_list:\s*(\S+)`).FindAllStringSubmatch(out, -1)
	if code != 0 || len(cores) != 2 || cores[0][1] == cores[1][1] || strings.ContainsAny(cores[0][1]+cores[1][1], ",-") {
		t.Errorf("two --exact steps: exit %d, %q\n%s", code, cores, errOut)
	}
	// --gpus-per-task binds each task to its own GPU.
	out, errOut, code = c.run("salloc", "-n2", "--gpus-per-task=1", "srun", "-n2", "--gpus-per-task=1", "sh", "-c",
		`echo "task$SLURM_LOCALID cuda=$CUDA_VISIBLE_DEVICES gpus=$SLURM_STEP_GPUS"`)
	if code != 0 || !strings.Contains(out, "task0 cuda=0 gpus=0") || !strings.Contains(out, "task1 cuda=1 gpus=1") {
		t.Errorf("--gpus-per-task: exit %d\n%s\n%s", code, out, errOut)
	}
	c.waitFor("job cgroups removed", 10*time.Second, func() bool {
		m, _ := filepath.Glob("/sys/fs/cgroup/memory/drover/iso1/job_*")
		return len(m) == 0
	})
}

// runAsSbatch submits as u and returns the job id.
func (c *cluster) runAsSbatch(t *testing.T, u *user.User, args ...string) string {
	t.Helper()
	out, errOut, code := c.runAs(u, "", "sbatch", args...)
	m := submittedRe.FindStringSubmatch(out)
	if code != 0 || m == nil {
		t.Fatalf("sbatch %v: exit %d: %s %s", args, code, out, errOut)
	}
	return m[1]
}

// TestGPUStepCgroupNotLeftByKeptTree: a job holding all of a node's GPUs
// has no devices group of its own; a step of it given some of them does,
// under the job's name. The job's emptied cgroup tree must not be kept
// for the next job (another user's) with that directory left under the
// old job's name, where nothing removed it.
func TestGPUStepCgroupNotLeftByKeptTree(t *testing.T) {
	t.Parallel()
	cgroupV1(t)
	if _, err := os.Stat("/sys/fs/cgroup/devices/devices.deny"); err != nil {
		t.Skip("no cgroup v1 devices hierarchy")
	}
	u1, u2 := testUser(t, "drovertest1"), testUser(t, "drovertest2")
	const node = "gpukeep1"
	leftDir := func(id string) string { return "/sys/fs/cgroup/devices/drover/" + node + "/job_" + id }
	t.Cleanup(func() { // after the cluster stopped: the node's own groups
		ds, _ := filepath.Glob("/sys/fs/cgroup/*/drover/" + node)
		for _, d := range ds {
			removeCgroupTree(d)
		}
	})
	c := upWithConf(t, "GresTypes=gpu\nNodeName="+node+" NodeAddr=127.0.0.1 CPUs=2 RealMemory=1000 Gres=gpu:tesla:2\n"+
		"PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP\n",
		map[string]string{"gres.conf": "NodeName=" + node + " Name=gpu Type=tesla File=$DIR/dev/nvidia[0-1]\n"},
		func(dir string) {
			fakeGPUs(t, dir, 2)
			// An earlier run's cluster had this node's name (its job ids
			// start at 1 too).
			for _, d := range []string{"/sys/fs/cgroup/devices/drover/" + node, "/sys/fs/cgroup/memory/drover/" + node} {
				removeCgroupTree(d)
			}
		})
	out := filepath.Join(u1.HomeDir, "gpukeep.out")
	_ = os.Remove(out)
	a := c.runAsSbatch(t, u1, "--gres=gpu:2", "-o", out, "--wrap",
		`srun -n1 --gres=gpu:1 sh -c 'echo step gpus=$SLURM_STEP_GPUS'`)
	c.waitState(a, "COMPLETED", 60*time.Second)
	if got := readFile(t, out); !strings.Contains(got, "step gpus=") {
		t.Fatalf("job %s's step did not run with one GPU:\n%s", a, got)
	}
	b := c.runAsSbatch(t, u2, "--gres=gpu:2", "-o", "/dev/null", "--wrap", "true")
	c.waitState(b, "COMPLETED", 60*time.Second)
	if _, err := os.Stat(leftDir(a)); err == nil {
		t.Errorf("job %s's devices group %s is left after job %s ran", a, leftDir(a), b)
	}
}
