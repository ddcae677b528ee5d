package e2e

import (
	"math"
	"os"
	"os/user"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestFairSharePriority: with priority/multifactor and the classic
// fair-share formula (PriorityFlags=NO_FAIR_TREE), a user who already
// used the cluster gets a lower fair-share factor than one who did not;
// sshare shows the usage, sprio the factors, and the job of the user with
// more fair share starts first. TestFairTreePriority is the default.
func TestFairSharePriority(t *testing.T) {
	t.Parallel()
	heavy, light := testUser(t, "drovertest1"), testUser(t, "drovertest2")
	c := startUp(t, 1, "--conf", "PriorityType=priority/multifactor", "--conf", "PriorityFlags=NO_FAIR_TREE", "--conf", "PriorityWeightFairshare=10000",
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

// TestFairTreePriority: Fair Tree, the default. Two users of one account
// with 9 and 1 shares; the one with 9 uses about twice as much, yet its
// LevelFS (S/U among the account's users) stays higher, so sshare -l
// ranks it first, sprio gives its job the larger FAIRSHARE (and shows the
// TRES factor), and its job starts first. scontrol top reorders a user's
// own pending jobs.
func TestFairTreePriority(t *testing.T) {
	t.Parallel()
	few, many := testUser(t, "drovertest1"), testUser(t, "drovertest2")
	c := startUp(t, 1, "--conf", "PriorityType=priority/multifactor", "--conf", "PriorityWeightFairshare=10000",
		"--conf", "PriorityWeightTRES=CPU=1000", "--conf", "PriorityCalcPeriod=0:01")
	c.must("sacctmgr", "-i", "add", "account", "lab")
	c.must("sacctmgr", "-i", "add", "user", few.Username, "Account=lab", "Fairshare=1")
	c.must("sacctmgr", "-i", "add", "user", many.Username, "Account=lab", "Fairshare=9")
	cpus := strings.TrimSpace(c.must("sinfo", "-h", "-o", "%c"))
	submit := func(u *user.User, args ...string) string {
		t.Helper()
		out, errOut, code := c.runAs(u, "", "sbatch", append([]string{"-A", "lab", "-o", "/dev/null"}, args...)...)
		if code != 0 {
			t.Fatalf("sbatch as %s: %s", u.Username, errOut)
		}
		return submittedRe.FindStringSubmatch(out)[1]
	}
	a, b := submit(few, "-n", "1", "--wrap", "sleep 2"), submit(many, "-n", "1", "--wrap", "sleep 4")
	c.waitState(a, "COMPLETED", 30*time.Second)
	c.waitState(b, "COMPLETED", 30*time.Second)

	// sshare -l: Fair Tree's columns; per user S (NormShares, among the
	// account's users), U (EffectvUsage) and LevelFS = S/U.
	type share struct{ norm, use, eff, fs, level float64 }
	var rows map[string]share
	c.waitFor("sshare -l to show both users' usage", 15*time.Second, func() bool {
		out, _, _ := c.run("sshare", "-l", "-a", "-P", "-n")
		rows = map[string]share{}
		for _, l := range strings.Split(out, "\n") {
			f := strings.Split(l, "|")
			if len(f) != 11 || f[1] == "" {
				continue
			}
			num := func(i int) float64 { v, _ := strconv.ParseFloat(f[i], 64); return v }
			rows[f[1]] = share{norm: num(3), use: num(4), eff: num(6), fs: num(7), level: num(8)}
		}
		return rows[few.Username].use > 0 && rows[many.Username].use > 0
	})
	lo, hi := rows[few.Username], rows[many.Username]
	if lo.norm != 0.1 || hi.norm != 0.9 {
		t.Errorf("NormShares %v and %v, want 0.1 and 0.9 (siblings' shares)", lo.norm, hi.norm)
	}
	for name, r := range rows {
		if r.eff > 0 && math.Abs(r.level-r.norm/r.eff) > 1e-3*r.level {
			t.Errorf("%s: LevelFS %v, NormShares/EffectvUsage %v", name, r.level, r.norm/r.eff)
		}
	}
	if !(hi.use > lo.use && hi.level > lo.level && hi.fs > lo.fs) {
		t.Errorf("the 9-share user: usage %v LevelFS %v FairShare %v; the 1-share user: %v %v %v",
			hi.use, hi.level, hi.fs, lo.use, lo.level, lo.fs)
	}
	if out := c.must("sshare", "-l"); !strings.HasPrefix(out, "Account                    User  RawShares  NormShares    RawUsage   NormUsage  EffectvUsage  FairShare    LevelFS                    GrpTRESMins                    TRESRunMins \n") {
		t.Errorf("sshare -l:\n%s", out)
	}

	// Fill the node (as the 1-share user, whose rank it only lowers), then
	// queue one job each.
	blocker := submit(few, "-n", cpus, "--wrap", "sleep 300")
	c.waitState(blocker, "RUNNING", 30*time.Second)
	jl, jh := submit(few, "-n", cpus, "--wrap", "sleep 30"), submit(many, "-n", cpus, "--wrap", "sleep 30")
	prio := func(id string) int {
		out, _, _ := c.run("squeue", "-h", "-j", id, "-o", "%Q")
		n, _ := strconv.Atoi(strings.TrimSpace(out))
		return n
	}
	c.waitFor("the 9-share user's job to rank first", 15*time.Second, func() bool { return prio(jh) > prio(jl) })
	out := c.must("sprio")
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) != 3 || lines[0] != "          JOBID PARTITION   PRIORITY       SITE  FAIRSHARE                 TRES" {
		t.Fatalf("sprio:\n%s", out)
	}
	for _, l := range lines[1:] {
		if f := strings.Fields(l); len(f) != 6 || f[5] != "cpu=1000" {
			t.Errorf("sprio line %q: want the whole partition's CPUs, TRES cpu=1000", l)
		}
	}

	// scontrol top: the 1-share user's later job moves ahead of its
	// earlier one; nice records the exchange.
	jl2 := submit(few, "-n", cpus, "--wrap", "sleep 30")
	c.waitFor("both of the 1-share user's jobs to have a priority", 15*time.Second, func() bool { return prio(jl2) > 0 && prio(jl) > 0 })
	if out, errOut, code := c.run("scontrol", "top", jl2); code != 0 {
		t.Fatalf("scontrol top: %s%s", out, errOut)
	}
	if p2, p1 := prio(jl2), prio(jl); p2 <= p1 {
		t.Errorf("after scontrol top %s: priority %d, %s's %d", jl2, p2, jl, p1)
	}
	if n := c.jobField(jl, "Nice"); n == "0" {
		t.Errorf("job %s moved down with Nice=%s", jl, n)
	}

	// The 9-share user's job starts first when the node frees.
	c.must("scancel", blocker)
	c.waitState(jh, "RUNNING", 30*time.Second)
	if st := c.jobField(jl, "JobState"); st != "PENDING" {
		t.Errorf("the 1-share user's job %s, want PENDING", st)
	}

	// Usage is replicated state: it survives a restart of the cluster.
	usage := func(u *user.User) float64 {
		out, _, _ := c.run("sshare", "-a", "-P", "-n", "-u", u.Username, "-A", "lab")
		for _, l := range strings.Split(out, "\n") {
			if f := strings.Split(l, "|"); len(f) == 7 && f[1] == u.Username {
				v, _ := strconv.ParseFloat(f[4], 64)
				return v
			}
		}
		return -1
	}
	c.must("scancel", jh, jl, jl2)
	c.waitState(jh, "CANCELLED", 30*time.Second)
	c.stop()
	c.start(1)
	if u := usage(few); u < lo.use {
		t.Errorf("the 1-share user's usage after a restart: %v, was %v", u, lo.use)
	}
	// PriorityUsageResetPeriod=NOW clears it at reconfigure.
	f, err := os.OpenFile(c.conf, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.WriteString("PriorityUsageResetPeriod=NOW\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	c.must("scontrol", "reconfigure")
	c.waitFor("sshare to show the 1-share user's usage cleared", 15*time.Second, func() bool { return usage(few) == 0 })
}
