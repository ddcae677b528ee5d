package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// nodeReason is the node's state and drain reason, as sinfo -R shows them.
func (c *cluster) nodeReason(node string) (state, reason string) {
	out, _, _ := c.run("sinfo", "-h", "-N", "-n", node, "-o", "%t|%E")
	state, reason, _ = strings.Cut(strings.TrimSpace(out), "|")
	return state, reason
}

func TestHealthAndProlog(t *testing.T) {
	t.Parallel()
	if os.Getuid() != 0 {
		t.Skip("needs root (prolog as root, tmpfs)")
	}
	var c *cluster
	c = upWithConf(t, "Prolog=$DIR/prolog.sh\nEpilog=$DIR/epilog.sh\nTaskProlog=$DIR/taskprolog.sh\nTaskEpilog=$DIR/taskepilog.sh\n"+
		"HealthCheckProgram=$DIR/health.sh\nHealthCheckInterval=1\nDroverMinFreeSpace=8M\n"+
		"NodeName=h1 NodeAddr=127.0.0.1 CPUs=2 RealMemory=1000\nPartitionName=debug Nodes=ALL Default=YES State=UP\n",
		map[string]string{}, func(dir string) {
			write := func(name, text string) { writeScript(t, filepath.Join(dir, name), text) }
			write("prolog.sh", "#!/bin/sh\necho \"$SLURM_JOB_ID $SLURM_JOB_USER $SLURMD_NODENAME\" >> "+dir+"/prolog.log\n[ ! -e "+dir+"/prolog.fail ]\n")
			write("epilog.sh", "#!/bin/sh\necho \"$SLURM_JOB_ID\" >> "+dir+"/epilog.log\n")
			write("taskprolog.sh", "#!/bin/sh\necho export FROM_TASK_PROLOG=yes\n")
			write("taskepilog.sh", "#!/bin/sh\necho \"$SLURM_JOB_ID $FROM_TASK_PROLOG\" >> "+dir+"/taskepilog.log\n")
			write("health.sh", "#!/bin/sh\nif [ -e "+dir+"/sick ]; then echo 'fan 2 failed'; exit 1; fi\n")
			// The spool on a small filesystem of its own, to fill it.
			spool := filepath.Join(dir, "spool")
			_ = os.MkdirAll(spool, 0o755)
			if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=32M", "tmpfs", spool).CombinedOutput(); err != nil {
				t.Skipf("mount tmpfs: %v %s", err, out)
			}
			t.Cleanup(func() { _ = exec.Command("umount", "-l", spool).Run() })
		})

	// Prolog and Epilog run as root around the job with its variables;
	// TaskProlog's exports reach the job.
	id := c.sbatch("-o", "job-%j.out", "--wrap", "echo task=$FROM_TASK_PROLOG")
	c.waitState(id, "COMPLETED", 30*time.Second)
	c.waitFor("epilog", 10*time.Second, func() bool {
		b, _ := os.ReadFile(filepath.Join(c.dir, "epilog.log"))
		return strings.Contains(string(b), id)
	})
	if p := readFile(t, filepath.Join(c.dir, "prolog.log")); !strings.Contains(p, id+" root h1") {
		t.Errorf("prolog.log = %q", p)
	}
	if out := readFile(t, filepath.Join(c.dir, "job-"+id+".out")); !strings.Contains(out, "task=yes") {
		t.Errorf("TaskProlog export missing: %q", out)
	}
	if te := readFile(t, filepath.Join(c.dir, "taskepilog.log")); !strings.Contains(te, id+" yes") {
		t.Errorf("TaskEpilog did not run with the task's environment: %q", te)
	}

	// HealthCheckProgram: a failure drains the node with its first line;
	// passing again lifts that drain.
	writeScript(t, filepath.Join(c.dir, "sick"), "")
	c.waitFor("health drain", 15*time.Second, func() bool {
		s, r := c.nodeReason("h1")
		return strings.HasPrefix(s, "drain") && r == "fan 2 failed"
	})
	os.Remove(filepath.Join(c.dir, "sick"))
	c.waitFor("health undrain", 15*time.Second, func() bool { s, _ := c.nodeReason("h1"); return s == "idle" })

	// A full spool filesystem drains the node ("disk full").
	fill := filepath.Join(c.dir, "spool", "filler")
	if out, err := exec.Command("dd", "if=/dev/zero", "of="+fill, "bs=1M", "count=28").CombinedOutput(); err != nil && !strings.Contains(string(out), "No space") {
		t.Fatalf("dd: %v %s", err, out)
	}
	c.waitFor("disk full drain", 30*time.Second, func() bool {
		s, r := c.nodeReason("h1")
		return strings.HasPrefix(s, "drain") && r == "disk full"
	})
	os.Remove(fill)
	c.waitFor("disk undrain", 30*time.Second, func() bool { s, _ := c.nodeReason("h1"); return s == "idle" })

	// A failing Prolog drains the node and requeues the job, held.
	writeScript(t, filepath.Join(c.dir, "prolog.fail"), "")
	id = c.sbatch("--wrap", "true")
	c.waitFor("prolog failure handled", 30*time.Second, func() bool {
		return c.jobField(id, "JobState") == "PENDING" && c.jobField(id, "Restarts") == "1"
	})
	if s, r := c.nodeReason("h1"); !strings.HasPrefix(s, "drain") || r != "Prolog error" {
		t.Errorf("after a failing prolog: node %s %q", s, r)
	}
	if r := c.jobField(id, "Reason"); r != "launch failed requeued held" && r != "launch_failed_requeued_held" && r != "JobHeldAdmin" {
		t.Errorf("requeued job reason %q", r)
	}
}
