package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestGresLowNodeGivesNoPhantomGPU: a node whose agent finds fewer GPUs
// than slurm.conf declares is drained and INVAL, as in Slurm 22.05;
// `scontrol update state=resume` is refused ("Invalid node state
// specified") and no job is given a GPU there, until the agent registers
// them all. Before, the resume made the node idle and a job was given a
// GPU the node does not have.
func TestGresLowNodeGivesNoPhantomGPU(t *testing.T) {
	t.Parallel()
	c, daemon := manualCluster(t, "phant", "")
	dir := c.dir
	fakeGPUs(t, dir, 2)
	conf := readFile(t, c.conf)
	conf = strings.Replace(conf, "NodeName=phant1 CPUs=2 RealMemory=1000", "GresTypes=gpu\nNodeName=phant1 CPUs=2 RealMemory=1000 Gres=gpu:2", 1)
	gresConf := filepath.Join(dir, "gres.conf")
	for path, text := range map[string]string{c.conf: conf, gresConf: "NodeName=phant1 Name=gpu File=" + dir + "/dev/nvidia0\n"} {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	daemon("controller")
	c.waitFor("controller", 30*time.Second, func() bool { _, _, code := c.run("scontrol", "ping"); return code == 0 })
	agent := daemon("agent", "--name", "phant1")
	c.waitFor("the node to register its one GPU", 60*time.Second, func() bool {
		out, _, _ := c.run("scontrol", "show", "node", "phant1")
		return strings.Contains(out, "gres/gpu count reported lower than configured (1 < 2)")
	})
	if st := strings.TrimSpace(c.must("sinfo", "-h", "-o", "%t")); st != "inval" {
		t.Errorf("sinfo state of a node short of GPUs: %q, want inval", st)
	}
	_, errOut, code := c.run("scontrol", "update", "nodename=phant1", "state=resume")
	if code == 0 || !strings.Contains(errOut, "Invalid node state specified") {
		t.Errorf("resume of a node short of GPUs: exit %d %q, want Slurm's refusal", code, errOut)
	}
	id := c.sbatch("--gres=gpu:2", "-o", os.DevNull, "--wrap", "echo $CUDA_VISIBLE_DEVICES")
	c.waitFor("the scheduler's verdict on the GPU job", 30*time.Second, func() bool {
		r := c.jobField(id, "Reason")
		return c.jobField(id, "JobState") != "PENDING" || r != "" && r != "None"
	})
	if st := c.jobField(id, "JobState"); st != "PENDING" {
		t.Fatalf("a job asking for 2 GPUs is %s on a node that has 1", st)
	}

	// The second GPU appears and the agent starts again: its registration
	// clears INVAL and the drain it caused, and the job runs.
	if err := os.WriteFile(gresConf, []byte("NodeName=phant1 Name=gpu File="+dir+"/dev/nvidia[0-1]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_ = agent.Process.Signal(os.Interrupt)
	_ = agent.Wait()
	daemon("agent", "--name", "phant1")
	c.waitState(id, "COMPLETED", 60*time.Second)
}

// TestReconfigureRereadsGresConf: an administrator adds a GPU to a node
// (slurm.conf Gres=gpu:2, gres.conf a second File=) and runs scontrol
// reconfigure: the node's agent reads gres.conf again and registers both
// devices, without a restart, and a job gets them. Before, the agent kept
// the GPUs it found at its start until restarted.
func TestReconfigureRereadsGresConf(t *testing.T) {
	t.Parallel()
	c, daemon := manualCluster(t, "regres", "")
	dir := c.dir
	fakeGPUs(t, dir, 2)
	conf := readFile(t, c.conf)
	gresConf := filepath.Join(dir, "gres.conf")
	write := func(path, text string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	withGres := func(n int) string {
		return strings.Replace(conf, "NodeName=regres1 CPUs=2 RealMemory=1000", "GresTypes=gpu\nNodeName=regres1 CPUs=2 RealMemory=1000 Gres=gpu:"+strconv.Itoa(n), 1)
	}
	write(c.conf, withGres(1))
	write(gresConf, "NodeName=regres1 Name=gpu File="+dir+"/dev/nvidia0\n")
	daemon("controller")
	c.waitFor("controller", 30*time.Second, func() bool { _, _, code := c.run("scontrol", "ping"); return code == 0 })
	daemon("agent", "--name", "regres1")
	c.waitFor("node up", 60*time.Second, func() bool {
		o, _, _ := c.run("sinfo", "-h", "-o", "%t")
		return strings.TrimSpace(o) == "idle"
	})

	write(c.conf, withGres(2))
	write(gresConf, "NodeName=regres1 Name=gpu File="+dir+"/dev/nvidia[0-1]\n")
	c.must("scontrol", "reconfigure")
	out := filepath.Join(dir, "out")
	id := c.sbatch("--gres=gpu:2", "-o", out, "--wrap", "echo $CUDA_VISIBLE_DEVICES")
	c.waitState(id, "COMPLETED", 60*time.Second)
	if got := strings.TrimSpace(readFileOr(out)); got != "0,1" {
		t.Errorf("CUDA_VISIBLE_DEVICES of a job given both GPUs: %q", got)
	}
	if st := strings.TrimSpace(c.must("sinfo", "-h", "-o", "%t")); st != "idle" {
		t.Errorf("node after reconfigure: %q, want idle", st)
	}
}
