package e2e

import (
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestConstraintsAndMinCPUs: --constraint keeps a job to nodes with the
// features (Feature= on NodeName lines), an unknown feature is refused at
// submit with Slurm's words, and scontrol update changes Features= and
// MinCPUsNode= of a pending job, which then runs where they say.
func TestConstraintsAndMinCPUs(t *testing.T) {
	t.Parallel()
	c := startUp(t, 2, "--cpus", "2")
	c.stop()
	conf, err := os.ReadFile(c.conf)
	if err != nil {
		t.Fatal(err)
	}
	// Give each virtual node its own features: split the generated line.
	re := regexp.MustCompile(`(?m)^NodeName=` + c.prefix + `\[1-2\] (.*)$`)
	if !re.Match(conf) {
		t.Fatalf("no NodeName=%s[1-2] line in\n%s", c.prefix, conf)
	}
	conf = re.ReplaceAll(conf, []byte(c.named("NodeName=node1 $1 Feature=intel,ib\nNodeName=node2 $1 Feature=amd")))
	if err := os.WriteFile(c.conf, conf, 0o644); err != nil {
		t.Fatal(err)
	}
	c.start(2)

	if out := c.must("sinfo", "-h", "-N", "-o", "%N %f"); !strings.Contains(out, c.node(1)+" intel,ib") || !strings.Contains(out, c.node(2)+" amd") {
		t.Fatalf("sinfo features:\n%s", out)
	}
	_, stderr, code := c.run("sbatch", "-C", "gpu", "--wrap", "true")
	if code != 1 || !strings.Contains(stderr, "Invalid feature specification") {
		t.Errorf("sbatch -C gpu: code %d, stderr %q", code, stderr)
	}
	_, stderr, code = c.run("sbatch", "-C", "intel&", "--wrap", "true")
	if code != 1 || !strings.Contains(stderr, "Invalid feature specification") {
		t.Errorf("sbatch -C 'intel&': code %d, stderr %q", code, stderr)
	}

	for _, tc := range []struct{ expr, node string }{{"amd", c.node(2)}, {"intel&ib", c.node(1)}, {"(amd|intel)&ib", c.node(1)}} {
		id := c.sbatch("-C", tc.expr, "-o", "/dev/null", "--wrap", "true")
		c.waitState(id, "COMPLETED", 30*time.Second)
		if got := c.jobField(id, "NodeList"); got != tc.node {
			t.Errorf("-C %s ran on %q, want %s", tc.expr, got, tc.node)
		}
		if got := c.jobField(id, "Features"); got != tc.expr {
			t.Errorf("-C %s: scontrol show job Features=%q", tc.expr, got)
		}
	}

	// A held job: move it to the other node's features, ask for both CPUs.
	id := c.sbatch("-H", "-C", "amd", "-o", "/dev/null", "--wrap", "true")
	if out := c.must("squeue", "-h", "-j", id, "-o", "%f %c"); strings.TrimSpace(out) != "amd 1" {
		t.Errorf("squeue %%f %%c: %q", out)
	}
	c.must("scontrol", "update", "JobId="+id, "Features=intel", "MinCPUsNode=2")
	if got := c.jobField(id, "MinCPUsNode"); got != "2" {
		t.Errorf("MinCPUsNode after update: %q", got)
	}
	_, stderr, code = c.run("scontrol", "update", "JobId="+id, "Features=nosuch")
	if code != 1 || !strings.Contains(stderr, "Invalid feature specification") {
		t.Errorf("update Features=nosuch: code %d, stderr %q", code, stderr)
	}
	c.must("scontrol", "release", id)
	c.waitState(id, "COMPLETED", 30*time.Second)
	if got := c.jobField(id, "NodeList"); got != c.node(1) {
		t.Errorf("updated job ran on %q, want %s", got, c.node(1))
	}
	if got := c.jobField(id, "NumCPUs"); got != "2" {
		t.Errorf("updated job NumCPUs=%q, want 2 (MinCPUsNode=2)", got)
	}
	// Features of a running job cannot change.
	run := c.sbatch("-C", "amd", "-o", "/dev/null", "--wrap", "sleep 30")
	c.waitState(run, "RUNNING", 30*time.Second)
	_, stderr, code = c.run("scontrol", "update", "JobId="+run, "Features=intel")
	if code != 1 || !strings.Contains(stderr, "Job is no longer pending execution") {
		t.Errorf("update Features of a running job: code %d, stderr %q", code, stderr)
	}
	c.must("scancel", run)
}
