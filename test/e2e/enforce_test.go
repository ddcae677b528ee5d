package e2e

import (
	"strings"
	"testing"
	"time"
)

// TestLimitsEnforcement is the admin guide's set-up done with sacctmgr on
// a running cluster: a user outside every account is refused, then an
// account, the user in it, and a QOS allowing 4 GPUs per user; the
// user's fifth one-GPU job waits with Slurm's reason until one ends.
func TestLimitsEnforcement(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("short")
	}
	u := testUser(t, "drovertest2")
	c := upWithConf(t, "AccountingStorageEnforce=associations,limits,qos\nGresTypes=gpu\n"+
		"NodeName=lim1 NodeAddr=127.0.0.1 CPUs=8 RealMemory=2000 Gres=gpu:8\n"+
		"PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP\n",
		map[string]string{"gres.conf": "NodeName=lim1 Name=gpu File=$DIR/dev/nvidia[0-7]\n"},
		func(dir string) { fakeGPUs(t, dir, 8) })

	submit := func(args ...string) (string, string, int) {
		return c.runAs(u, "", "sbatch", append([]string{"-o", "/dev/null"}, args...)...)
	}
	if _, errOut, code := submit("--wrap", "true"); code == 0 ||
		!strings.Contains(errOut, "Invalid account or account/partition combination specified") {
		t.Fatalf("a user without an association: exit %d, %q", code, errOut)
	}
	// Only an administrator may change the configuration.
	if _, errOut, code := c.runAs(u, "", "sacctmgr", "-i", "add", "account", "mine"); code == 0 ||
		!strings.Contains(errOut, "Access/permission denied") {
		t.Errorf("sacctmgr add as a user: exit %d, %q", code, errOut)
	}

	c.must("sacctmgr", "-i", "add", "account", "test", "Cluster=iso", "Description=test", "Organization=LRI")
	c.must("sacctmgr", "-i", "add", "user", u.Username, "Account=test")
	c.must("sacctmgr", "-i", "create", "qos", "default", "MaxTresPerUser=gres/gpu=4")
	c.must("sacctmgr", "-i", "modify", "user", "where", "name="+u.Username, "set", "qos=default", "defaultqos=default")
	got := c.must("sacctmgr", "-n", "-P", "show", "assoc", "where", "user="+u.Username, "format=cluster,account,user,qos,defaultqos")
	if want := "iso|test|" + u.Username + "|default|default\n"; got != want {
		t.Errorf("association: %q, want %q", got, want)
	}
	// A QOS the user may not use is refused at submission.
	if _, errOut, code := submit("--qos=normal", "--wrap", "true"); code == 0 || !strings.Contains(errOut, "Invalid qos specification") {
		t.Errorf("--qos=normal: exit %d, %q", code, errOut)
	}

	var ids []string
	for range 5 {
		out, errOut, code := submit("--gres=gpu:1", "-c1", "--mem=10M", "--wrap", "sleep 300")
		if code != 0 {
			t.Fatalf("sbatch: %s %s", out, errOut)
		}
		ids = append(ids, submittedRe.FindStringSubmatch(out)[1])
	}
	for _, id := range ids[:4] {
		c.waitState(id, "RUNNING", 30*time.Second)
	}
	c.waitFor("the fifth job's reason", 10*time.Second, func() bool {
		return c.jobField(ids[4], "Reason") == "QOSMaxGRESPerUser"
	})
	if st := c.jobField(ids[4], "JobState"); st != "PENDING" {
		t.Fatalf("fifth GPU job: %s", st)
	}
	if r := strings.TrimSpace(c.must("squeue", "-h", "-o", "%r", "-j", ids[4])); r != "QOSMaxGRESPerUser" {
		t.Errorf("squeue %%r: %q", r)
	}
	c.must("scancel", ids[0])
	c.waitState(ids[4], "RUNNING", 30*time.Second)

	// The records carry the account and QOS the jobs ran under.
	c.waitFor("sacct to show the fifth job running", 20*time.Second, func() bool {
		return c.acctRow(ids[4], "User,Account,QOS,State,AllocTRES") ==
			u.Username+"|test|default|RUNNING|billing=1,cpu=1,gres/gpu=1,mem=10M,node=1"
	})
	c.must("scancel", "-u", u.Username)
}
