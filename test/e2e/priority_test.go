package e2e

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestFairSharePriority: with priority/multifactor, a user who already
// used the cluster gets a lower fair-share factor than one who did not;
// sshare shows the usage, sprio the factors, and the job of the user with
// more fair share starts first.
func TestFairSharePriority(t *testing.T) {
	heavy, light := testUser(t, "drovertest1"), testUser(t, "drovertest2")
	c := startUp(t, 1, "--conf", "PriorityType=priority/multifactor", "--conf", "PriorityWeightFairshare=10000",
		"--conf", "PriorityWeightAge=1000", "--conf", "PriorityWeightJobSize=1000", "--conf", "PriorityWeightPartition=1000",
		"--conf", "PriorityCalcPeriod=0:01")
	cpus := strings.TrimSpace(c.must("sinfo", "-h", "-o", "%c"))
	n, _ := strconv.Atoi(cpus)
	if n < 1 {
		t.Fatalf("sinfo %%c = %q", cpus)
	}
	out, errOut, code := c.runAs(heavy, "", "sbatch", "-n", cpus, "-o", "/dev/null", "--wrap", "sleep 2")
	if code != 0 {
		t.Fatalf("sbatch: %s", errOut)
	}
	first := submittedRe.FindStringSubmatch(out)[1]
	c.waitState(first, "COMPLETED", 30*time.Second)
	c.waitFor("sshare to show drovertest1's usage", 15*time.Second, func() bool {
		out, _, _ := c.run("sshare", "-a", "-P", "-n")
		for _, l := range strings.Split(out, "\n") {
			f := strings.Split(l, "|")
			if len(f) == 7 && f[1] == heavy.Username {
				use, _ := strconv.ParseFloat(f[4], 64)
				fs, _ := strconv.ParseFloat(f[6], 64)
				return use >= 2 && fs < 1
			}
		}
		return false
	})

	// Fill the node, then queue one job each.
	blocker := c.sbatch("-n", cpus, "-o", "/dev/null", "--wrap", "sleep 300")
	c.waitState(blocker, "RUNNING", 30*time.Second)
	ids := map[string]string{}
	for _, u := range []struct{ name string }{{heavy.Username}, {light.Username}} {
		usr := heavy
		if u.name == light.Username {
			usr = light
		}
		out, errOut, code := c.runAs(usr, "", "sbatch", "-n", cpus, "-o", "/dev/null", "--wrap", "sleep 30")
		if code != 0 {
			t.Fatalf("sbatch as %s: %s", u.name, errOut)
		}
		ids[u.name] = submittedRe.FindStringSubmatch(out)[1]
	}
	prio := func(id string) int {
		out, _, _ := c.run("squeue", "-h", "-j", id, "-o", "%Q")
		n, _ := strconv.Atoi(strings.TrimSpace(out))
		return n
	}
	c.waitFor("the light user's job to rank first", 15*time.Second, func() bool {
		return prio(ids[light.Username]) > prio(ids[heavy.Username])
	})
	// sprio: the header and one line per pending job, the light user's
	// with the larger FAIRSHARE.
	out = c.must("sprio")
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) != 3 || lines[0] != "          JOBID PARTITION   PRIORITY       SITE        AGE  FAIRSHARE    JOBSIZE  PARTITION" {
		t.Fatalf("sprio:\n%s", out)
	}
	fair := map[string]int{}
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		fair[f[0]], _ = strconv.Atoi(f[5])
	}
	if fair[ids[light.Username]] <= fair[ids[heavy.Username]] {
		t.Errorf("FAIRSHARE: light %d, heavy %d\n%s", fair[ids[light.Username]], fair[ids[heavy.Username]], out)
	}
	if out := c.must("sprio", "-w"); !strings.Contains(out, "        Weights                               1       1000      10000       1000       1000") {
		t.Errorf("sprio -w:\n%s", out)
	}
	// The light user's job starts first when the node frees.
	c.must("scancel", blocker)
	c.waitState(ids[light.Username], "RUNNING", 30*time.Second)
	if st := c.jobField(ids[heavy.Username], "JobState"); st != "PENDING" {
		t.Errorf("heavy user's job %s, want PENDING", st)
	}
	if out := c.must("sshare"); !strings.HasPrefix(out, "Account                    User  RawShares  NormShares    RawUsage  EffectvUsage  FairShare \n-------------------- ---------- ---------- ----------- ----------- ------------- ---------- \nroot ") {
		t.Errorf("sshare:\n%s", out)
	}
}
