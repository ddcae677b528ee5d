package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestWideStepsDoNotHang runs many wide steps (48 tasks over 3 nodes, each
// task's output piped through its node's supervisor) back to back in one
// allocation: none may hang, and every task's output arrives (issue 12 B6).
// DROVER_WIDE_STEPS sets how many (a soak runs hundreds).
func TestWideStepsDoNotHang(t *testing.T) {
	t.Parallel()
	steps := 60
	if v, err := strconv.Atoi(os.Getenv("DROVER_WIDE_STEPS")); err == nil && v > 0 {
		steps = v
	}
	c := startUp(t, 3, "--cpus", "16")
	out := filepath.Join(c.dir, "wide.out")
	script := fmt.Sprintf("for i in $(seq %d); do n=$(srun -N3 -n48 hostname | wc -l); echo $n; [ $n = 48 ] || exit 1; done", steps)
	id := c.sbatch("-N3", "-n48", "-o", out, "--wrap", script)
	limit := time.Duration(steps)*3*time.Second + 30*time.Second
	deadline := time.Now().Add(limit)
	for {
		st := c.jobField(id, "JobState")
		if st == "COMPLETED" {
			break
		}
		if st != "RUNNING" && st != "PENDING" {
			t.Fatalf("job %s ended %s; output:\n%s", id, st, readFileOr(out))
		}
		if time.Now().After(deadline) {
			steps, _, _ := c.run("squeue", "-s", "-h")
			t.Fatalf("wide steps hung after %d steps; running steps:\n%s", strings.Count(readFileOr(out), "\n"), steps)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if got := strings.Count(readFileOr(out), "48\n"); got != steps {
		t.Errorf("%d of %d steps printed 48 lines:\n%s", got, steps, readFileOr(out))
	}
}
