package e2e

import (
	"strings"
	"testing"
	"time"
)

// TestUpdateUnknownQOSRefused: with limits enforced but not QOS names
// (AccountingStorageEnforce=associations,limits), a user whose job waits
// on its QOS's MaxJobsPerUser must not escape the limit by moving the
// job to a QOS that does not exist. Before, `scontrol update qos=nosuch`
// was taken as given, the job left every QOS limit and started at once;
// Slurm finds no such QOS and leaves the job's own.
func TestUpdateUnknownQOSRefused(t *testing.T) {
	t.Parallel()
	u := testUser(t, "drovertest2")
	c := upWithConf(t, "AccountingStorageEnforce=associations,limits\n"+
		"NodeName=uq1 NodeAddr=127.0.0.1 CPUs=4 RealMemory=2000\n"+
		"PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP\n", map[string]string{}, nil)
	c.must("sacctmgr", "-i", "add", "account", "test")
	c.must("sacctmgr", "-i", "add", "user", u.Username, "Account=test")
	c.must("sacctmgr", "-i", "modify", "qos", "normal", "set", "MaxJobsPerUser=1")
	var ids []string
	for range 2 {
		out, errOut, code := c.runAs(u, "", "sbatch", "-o", "/dev/null", "-c1", "--mem=10M", "--wrap", "sleep 300")
		if code != 0 {
			t.Fatalf("sbatch: %s %s", out, errOut)
		}
		ids = append(ids, submittedRe.FindStringSubmatch(out)[1])
	}
	t.Cleanup(func() { c.run("scancel", "-u", u.Username) })
	c.waitState(ids[0], "RUNNING", 30*time.Second)
	c.waitFor("the second job's reason", 15*time.Second, func() bool {
		return c.jobField(ids[1], "Reason") == "QOSMaxJobsPerUserLimit"
	})
	_, errOut, code := c.runAs(u, "", "scontrol", "update", "jobid="+ids[1], "qos=nosuch")
	if code == 0 || !strings.Contains(errOut, "Invalid qos specification") {
		t.Errorf("update to an unknown QOS: exit %d, %q", code, errOut)
	}
	if q := c.jobField(ids[1], "QOS"); q != "normal" {
		t.Errorf("QOS after the update: %q, want normal", q)
	}
	// A QOS that exists is still the user's to choose (no qos enforcement).
	c.must("sacctmgr", "-i", "create", "qos", "other")
	if out, errOut, code := c.runAs(u, "", "scontrol", "update", "jobid="+ids[1], "qos=other"); code != 0 {
		t.Errorf("update to an existing QOS: exit %d, %s %s", code, out, errOut)
	}
	c.waitState(ids[1], "RUNNING", 30*time.Second)
}
