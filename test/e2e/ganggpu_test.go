package e2e

import (
	"os"
	"regexp"
	"testing"
	"time"
)

// TestGangGPUs: GPU jobs on an OverSubscribe=FORCE:3 partition take turns
// on the node's CPUs but never share a GPU, as in Slurm 22.05 (suspended
// jobs keep their GRES): two 1-GPU jobs alternate, each on a GPU of its
// own; a job that needs a GPU a suspended or running job holds waits
// (Resources) and suspends nobody.
func TestGangGPUs(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("short")
	}
	c := upWithConf(t, "GresTypes=gpu\nPreemptMode=SUSPEND,GANG\nSchedulerTimeSlice=2\n"+
		"NodeName=ggpu1 NodeAddr=127.0.0.1 CPUs=2 RealMemory=2000 Gres=gpu:2\n"+
		"PartitionName=shared Nodes=ALL Default=YES OverSubscribe=FORCE:3 MaxTime=INFINITE State=UP\n",
		map[string]string{"gres.conf": "NodeName=ggpu1 Name=gpu File=$DIR/dev/nvidia[0-1]\n"},
		func(dir string) { fakeGPUs(t, dir, 2) })
	a := c.sbatch("-c2", "--mem=10M", "--gres=gpu:1", "-o", os.DevNull, "--wrap", "sleep 300")
	c.waitState(a, "RUNNING", 30*time.Second)
	b := c.sbatch("-c2", "--mem=10M", "--gres=gpu:1", "-o", os.DevNull, "--wrap", "sleep 300")
	c.waitTakingTurns(t, a, b)
	idx := regexp.MustCompile(`GRES=gpu:1\(IDX:(\d)\)`)
	gpuOf := func(id string) string {
		m := idx.FindStringSubmatch(c.must("scontrol", "show", "job", "-d", id))
		if m == nil {
			t.Fatalf("scontrol show job -d %s shows no GPU index", id)
		}
		return m[1]
	}
	if ga, gb := gpuOf(a), gpuOf(b); ga == gb {
		t.Errorf("jobs %s and %s share GPU %s", a, b, ga)
	}
	// Both GPUs are held (one job suspended, one running): a third GPU
	// job waits and suspends nobody, though FORCE:3 leaves room for a
	// third job on the CPUs.
	third := c.sbatch("-c1", "--mem=10M", "--gres=gpu:1", "-o", os.DevNull, "--wrap", "true")
	c.waitFor("the third GPU job's reason", 20*time.Second, func() bool {
		return c.squeueField(third, "%r") == "Resources"
	})
	if st := c.squeueField(third, "%t"); st != "PD" {
		t.Errorf("third GPU job is %s", st)
	}
	c.must("scancel", a, b, third)
}
