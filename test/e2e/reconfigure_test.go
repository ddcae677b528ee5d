package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestReconfigureRereadsSlurmAndCgroupConf: scontrol reconfigure makes the
// agents read slurm.conf and cgroup.conf again, as slurmd does: a Prolog
// added to slurm.conf runs for the next job, and a new AllowedRAMSpace
// sizes the next job's memory cgroup, without restarting anything. The
// agent read gres.conf alone: neither happened until it was restarted.
func TestReconfigureRereadsSlurmAndCgroupConf(t *testing.T) {
	t.Parallel()
	if os.Getuid() != 0 {
		t.Skip("needs root")
	}
	body := "NodeName=rcf1 NodeAddr=127.0.0.1 CPUs=2 RealMemory=1000\n" +
		"PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP\n"
	c := upWithConf(t, body, map[string]string{"cgroup.conf": "ConstrainRAMSpace=yes\nAllowedRAMSpace=100\n"}, nil)
	prolog := filepath.Join(c.dir, "prolog.sh")
	writeScript(t, prolog, "#!/bin/sh\ntouch "+c.dir+"/prolog.$SLURM_JOB_ID\n")
	// The job prints its memory cgroup's limit (the job's group: the
	// batch step's parent, on cgroup v1 or v2).
	script := filepath.Join(c.dir, "limit.sh")
	writeScript(t, script, `#!/bin/sh
p=$(awk -F: '$2=="memory"{print $3} $1=="0"&&$2==""{print "v2:"$3}' /proc/self/cgroup | head -1)
case $p in
v2:*) p=${p#v2:}; cat /sys/fs/cgroup${p%/step_batch}/memory.max ;;
*) cat /sys/fs/cgroup/memory${p%/step_batch}/memory.limit_in_bytes ;;
esac
`)
	limitOf := func(id string) string {
		c.waitState(id, "COMPLETED", 60*time.Second)
		return strings.TrimSpace(readFile(t, filepath.Join(c.dir, "limit."+id)))
	}
	before := c.sbatch("--mem=100M", "-o", filepath.Join(c.dir, "limit.%j"), script)
	if got := limitOf(before); got != "104857600" {
		t.Skipf("the memory cgroup is not enforced here (limit %q): nothing to compare", got)
	}
	if _, err := os.Stat(filepath.Join(c.dir, "prolog."+before)); err == nil {
		t.Fatal("a Prolog ran before slurm.conf named one")
	}

	conf := readFile(t, c.conf)
	if err := os.WriteFile(c.conf, []byte(conf+"Prolog="+prolog+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(c.dir, "cgroup.conf"), []byte("ConstrainRAMSpace=yes\nAllowedRAMSpace=200\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	agentLog := filepath.Join(c.dir, "log", "rcf1.log")
	c.must("scontrol", "reconfigure")
	c.waitFor("the agent to read its configuration again", 30*time.Second, func() bool {
		b, _ := os.ReadFile(agentLog)
		return strings.Contains(string(b), "slurm.conf and cgroup.conf read again")
	})

	after := c.sbatch("--mem=100M", "-o", filepath.Join(c.dir, "limit.%j"), script)
	if got := limitOf(after); got != "209715200" {
		t.Errorf("memory limit of a --mem=100M job after AllowedRAMSpace=200 and reconfigure: %s, want 209715200", got)
	}
	if _, err := os.Stat(filepath.Join(c.dir, "prolog."+after)); err != nil {
		t.Errorf("the Prolog added to slurm.conf did not run for the next job: %v", err)
	}
}
