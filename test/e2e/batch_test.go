package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestBatchLifecycle drives one single-node cluster through the common
// job outcomes: success with output and environment, failure, time limit,
// cancellation of pending and running jobs, arrays and holds.
func TestBatchLifecycle(t *testing.T) {
	t.Parallel()
	c := startUp(t, 1)

	t.Run("completed with output and environment", func(t *testing.T) {
		script := filepath.Join(c.dir, "env.sh")
		os.WriteFile(script, []byte(`#!/bin/bash
#SBATCH -J envjob
#SBATCH -o out-%j-%x.txt
echo "args=$1,$2"
echo "id=$SLURM_JOB_ID jobid=$SLURM_JOBID name=$SLURM_JOB_NAME part=$SLURM_JOB_PARTITION"
echo "nodes=$SLURM_JOB_NODELIST nn=$SLURM_NNODES jnn=$SLURM_JOB_NUM_NODES cpus=$SLURM_CPUS_ON_NODE"
echo "submit=$SLURM_SUBMIT_DIR cluster=$SLURM_CLUSTER_NAME node=$SLURMD_NODENAME ntasks=$SLURM_NTASKS"
echo "mine=$MY_VAR pwd=$(pwd)"
`), 0o644)
		id := c.sbatch("-n", "1", "--export=ALL,MY_VAR=hello", script, "a1", "a2")
		c.waitState(id, "COMPLETED", 30*time.Second)
		out := readFile(t, filepath.Join(c.dir, "out-"+id+"-envjob.txt"))
		for _, want := range []string{
			"args=a1,a2", "id=" + id + " jobid=" + id + " name=envjob part=debug",
			"nn=1 jnn=1", "submit=" + c.dir, "cluster=drover", "ntasks=1", "mine=hello", "pwd=" + c.dir,
		} {
			if !strings.Contains(out, want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
		}
		if got := c.jobField(id, "ExitCode"); got != "0:0" {
			t.Errorf("ExitCode=%s", got)
		}
	})

	t.Run("failed job keeps exit code", func(t *testing.T) {
		id := c.sbatch("--wrap", "echo about to fail; exit 3")
		c.waitState(id, "FAILED", 30*time.Second)
		if got := c.jobField(id, "ExitCode"); got != "3:0" {
			t.Errorf("ExitCode=%s, want 3:0", got)
		}
		if got := c.jobField(id, "Reason"); got != "NonZeroExitCode" {
			t.Errorf("Reason=%s", got)
		}
		out := readFile(t, filepath.Join(c.dir, "slurm-"+id+".out"))
		if !strings.Contains(out, "about to fail") {
			t.Errorf("default output file: %q", out)
		}
	})

	t.Run("time limit ends in TIMEOUT", func(t *testing.T) {
		id := c.sbatch("-t", "0:02", "-o", "to-%j.out", "--wrap", "echo start; sleep 60")
		c.waitState(id, "TIMEOUT", 30*time.Second)
		out := readFile(t, filepath.Join(c.dir, "to-"+id+".out"))
		if !strings.Contains(out, "start") || !strings.Contains(out, "CANCELLED AT") || !strings.Contains(out, "DUE TO TIME LIMIT") {
			t.Errorf("timeout output: %q", out)
		}
	})

	t.Run("cancel running and pending", func(t *testing.T) {
		pidFile := filepath.Join(c.dir, "child.pid")
		run := c.sbatch("-o", "cancel-%j.out", "--wrap", "sleep 300 & echo $! > "+pidFile+"; wait")
		c.waitState(run, "RUNNING", 30*time.Second)
		held := c.sbatch("-H", "--wrap", "true")
		c.waitFor("held reason", 10*time.Second, func() bool { return c.jobField(held, "Reason") == "JobHeldUser" })
		c.waitFor("child pid", 10*time.Second, func() bool { _, err := os.Stat(pidFile); return err == nil })
		c.must("scancel", run, held)
		c.waitState(run, "CANCELLED", 30*time.Second)
		c.waitState(held, "CANCELLED", 10*time.Second)
		// The background child of the script is gone too.
		b, _ := os.ReadFile(pidFile)
		pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		c.waitFor("child gone", 10*time.Second, func() bool { return pid > 0 && syscall.Kill(pid, 0) != nil })
		// Cancelling again is quiet, as in Slurm; -v tells why.
		if _, errOut, code := c.run("scancel", run); code != 0 || errOut != "" {
			t.Errorf("second scancel: code %d, %q", code, errOut)
		}
		if _, errOut, _ := c.run("scancel", "-v", run); !strings.Contains(errOut, "Job/step already completing or completed") {
			t.Errorf("scancel -v of a finished job: %q", errOut)
		}
	})

	t.Run("array with patterns and throttle", func(t *testing.T) {
		id := c.sbatch("-a", "1-4%2", "-o", "arr-%A_%a.out", "--wrap", "echo task=$SLURM_ARRAY_TASK_ID of $SLURM_ARRAY_JOB_ID count=$SLURM_ARRAY_TASK_COUNT")
		c.waitFor("array done", 60*time.Second, func() bool {
			out, _, _ := c.run("squeue", "-h", "-j", id)
			return strings.TrimSpace(out) == ""
		})
		for i := 1; i <= 4; i++ {
			out := readFile(t, filepath.Join(c.dir, "arr-"+id+"_"+strconv.Itoa(i)+".out"))
			if want := "task=" + strconv.Itoa(i) + " of " + id + " count=4"; !strings.Contains(out, want) {
				t.Errorf("task %d output %q lacks %q", i, out, want)
			}
		}
	})

	t.Run("hold and release", func(t *testing.T) {
		id := c.sbatch("-H", "-o", "/dev/null", "--wrap", "true")
		out := c.must("squeue", "-h", "-j", id, "-o", "%i %t %r")
		if strings.TrimSpace(out) != id+" PD JobHeldUser" {
			t.Errorf("squeue: %q", out)
		}
		c.must("scontrol", "release", id)
		c.waitState(id, "COMPLETED", 30*time.Second)
	})

	t.Run("wait and parsable", func(t *testing.T) {
		out, _, code := c.run("sbatch", "--parsable", "-W", "-o", "/dev/null", "--wrap", "exit 7")
		if code != 7 {
			t.Errorf("sbatch -W exit %d, want 7", code)
		}
		if _, err := strconv.Atoi(strings.TrimSpace(out)); err != nil {
			t.Errorf("--parsable printed %q", out)
		}
	})

	t.Run("dependency afterok", func(t *testing.T) {
		first := c.sbatch("-H", "-o", "/dev/null", "--wrap", "true")
		second := c.sbatch("-d", "afterok:"+first, "-o", "/dev/null", "--wrap", "true")
		c.waitFor("dependency reason", 10*time.Second, func() bool { return c.jobField(second, "Reason") == "Dependency" })
		c.must("scontrol", "release", first)
		c.waitState(second, "COMPLETED", 30*time.Second)
	})
}

// TestBadInput checks that bad requests get Slurm's wording, exit 1, and
// leave the controller serving.
func TestBadInput(t *testing.T) {
	t.Parallel()
	// EnforcePartLimits=ALL: over-limit jobs are refused, not queued.
	c := startUp(t, 1, "--conf", "PartitionName=short Nodes=ALL MaxTime=10", "--conf", "EnforcePartLimits=ALL")
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--bogus-option", "--wrap", "true"}, "unrecognized option"},
		{[]string{"-p", "nosuch", "--wrap", "true"}, "Invalid partition name specified"},
		{[]string{"-p", "short", "-t", "60", "--wrap", "true"}, "Requested time limit is invalid"},
		{[]string{"-c", "4096", "--wrap", "true"}, "Requested node configuration is not available"},
		{[]string{"-a", "5-1", "--wrap", "true"}, "nvalid job array specification"},
		{[]string{"-d", "afterok:999999", "--wrap", "true"}, "ependency"},
		{[]string{"/nonexistent/script.sh"}, "Unable to open file"},
	}
	for _, tc := range cases {
		_, errOut, code := c.run("sbatch", tc.args...)
		// Slurm exits 255 for malformed options and 1 for refused jobs.
		if (code != 1 && code != 255) || !strings.Contains(errOut, tc.want) {
			t.Errorf("sbatch %v: exit %d, stderr %q; want %q", tc.args, code, errOut, tc.want)
		}
	}
	bin := filepath.Join(c.dir, "binary")
	os.WriteFile(bin, []byte{0x7f, 'E', 'L', 'F', 0, 1, 2}, 0o755)
	if _, errOut, code := c.run("sbatch", bin); code != 1 || !strings.Contains(errOut, "does not look like a batch script") {
		t.Errorf("binary script: exit %d, %q", code, errOut)
	}
	// Garbage on the controller's TCP port does not hurt it.
	port := confValue(t, c.conf, "SlurmctldPort")
	sendGarbage(t, "127.0.0.1:"+port)
	id := c.sbatch("-o", "/dev/null", "--wrap", "true")
	c.waitState(id, "COMPLETED", 30*time.Second)
}

func confValue(t *testing.T, conf, key string) string {
	for _, line := range strings.Split(readFile(t, conf), "\n") {
		if v, ok := strings.CutPrefix(line, key+"="); ok {
			return strings.TrimSpace(v)
		}
	}
	t.Fatalf("%s not in %s", key, conf)
	return ""
}
