package e2e

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestDefMemPerCPUShownWhilePending: a job that asks for no memory gets
// DefMemPerCPU at submission, as in Slurm 22.05, so scontrol show job and
// squeue show it while the job waits (MinMemoryCPU=250M, TRES mem=250M,
// %m 250M) and the job's tasks see SLURM_MEM_PER_CPU. Drover applied the
// default only when it placed the job: a pending job showed
// MinMemoryNode=0 and no mem= in its TRES.
func TestDefMemPerCPUShownWhilePending(t *testing.T) {
	t.Parallel()
	c := startUp(t, 1, "--conf", "DefMemPerCPU=250")
	if v := c.must("scontrol", "show", "config"); !regexp.MustCompile(`(?m)^DefMemPerCPU\s+= 250$`).MatchString(v) {
		t.Fatalf("DefMemPerCPU is not 250 here:\n%s", v)
	}
	out := filepath.Join(c.dir, "mem.out")
	held := c.sbatch("-H", "-o", out, "--wrap", "echo mem=$SLURM_MEM_PER_CPU")
	show := c.must("scontrol", "show", "job", held)
	for _, want := range []string{"JobState=PENDING", "MinMemoryCPU=250M", "TRES=cpu=1,mem=250M,node=1,billing=1"} {
		if !strings.Contains(show, want) {
			t.Errorf("held job: no %q in\n%s", want, show)
		}
	}
	if m := strings.TrimSpace(c.must("squeue", "-h", "-j", held, "-o", "%m")); m != "250M" {
		t.Errorf("squeue %%m of the held job: %q, want 250M", m)
	}
	// An explicit request is shown as given.
	asked := c.sbatch("-H", "--mem=100", "-o", "/dev/null", "--wrap", "true")
	if show := c.must("scontrol", "show", "job", asked); !strings.Contains(show, "MinMemoryNode=100M") {
		t.Errorf("--mem=100 job:\n%s", show)
	}
	c.must("scontrol", "release", held)
	c.waitState(held, "COMPLETED", 60*time.Second)
	if got := strings.TrimSpace(readFile(t, out)); got != "mem=250" {
		t.Errorf("the job's SLURM_MEM_PER_CPU: %q, want mem=250", got)
	}
}
