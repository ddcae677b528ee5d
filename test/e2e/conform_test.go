package e2e

import (
	"os"
	"sort"
	"strings"
	"testing"
	"time"
)

// TestKillInvalidDep checks issue 17 item 1: a job whose dependency can
// never be satisfied is cancelled at once under --kill-on-invalid-dep=yes
// or DependencyParameters=kill_invalid_depend, and kept pending under
// --kill-on-invalid-dep=no.
func TestKillInvalidDep(t *testing.T) {
	t.Parallel()
	c := startUp(t, 1, "--conf", "DependencyParameters=kill_invalid_depend")
	failed := c.sbatch("-o", "/dev/null", "--wrap", "exit 3")
	c.waitState(failed, "FAILED", 30*time.Second)

	yes := c.sbatch("-o", "/dev/null", "-d", "afterok:"+failed, "--kill-on-invalid-dep=yes", "--wrap", "true")
	byConf := c.sbatch("-o", "/dev/null", "-d", "afterok:"+failed, "--wrap", "true")
	no := c.sbatch("-o", "/dev/null", "-d", "afterok:"+failed, "--kill-on-invalid-dep=no", "--wrap", "true")
	for _, id := range []string{yes, byConf} {
		c.waitState(id, "CANCELLED", 20*time.Second)
		if r := c.jobField(id, "Reason"); r != "DependencyNeverSatisfied" {
			t.Errorf("job %s: reason %q, want DependencyNeverSatisfied", id, r)
		}
	}
	c.waitFor("reason of the job that stays", 20*time.Second, func() bool {
		return c.jobField(no, "Reason") == "DependencyNeverSatisfied"
	})
	if s := c.jobField(no, "JobState"); s != "PENDING" {
		t.Errorf("--kill-on-invalid-dep=no: state %s, want PENDING", s)
	}
	c.waitFor("sacct rows", 20*time.Second, func() bool {
		out, _, _ := c.run("sacct", "-n", "-X", "-P", "-o", "jobid,state", "-j", yes+","+byConf)
		return strings.Count(out, "|CANCELLED") == 2
	})
	_, errOut, code := c.run("sbatch", "--kill-on-invalid-dep=maybe", "--wrap", "true")
	if code != 255 || !strings.Contains(errOut, "Invalid --kill-on-invalid-dep specification") {
		t.Errorf("bad value: exit %d, stderr %q", code, errOut)
	}
	c.must("scancel", no)
}

// TestRequeueLikeSlurm checks issue 17 item 3: --no-requeue jobs refuse
// scontrol requeue with Slurm's words; a requeued job waits pending
// (BeginTime) and sacct -D shows its earlier run as REQUEUED.
func TestRequeueLikeSlurm(t *testing.T) {
	t.Parallel()
	c := startUp(t, 1)
	fixed := c.sbatch("--no-requeue", "-o", "/dev/null", "--wrap", "sleep 300")
	c.waitState(fixed, "RUNNING", 30*time.Second)
	_, errOut, code := c.run("scontrol", "requeue", fixed)
	if code != 1 || !strings.Contains(errOut, "Requested operation is presently disabled for job "+fixed) {
		t.Errorf("requeue of --no-requeue job: exit %d, stderr %q", code, errOut)
	}
	if s := c.jobField(fixed, "JobState"); s != "RUNNING" {
		t.Errorf("--no-requeue job after refused requeue: %s", s)
	}
	c.must("scancel", fixed)

	id := c.sbatch("-o", "/dev/null", "--wrap", "sleep 300")
	c.waitState(id, "RUNNING", 30*time.Second)
	c.must("scontrol", "requeue", id)
	c.waitState(id, "PENDING", 30*time.Second)
	if r := c.jobField(id, "Reason"); r != "BeginTime" {
		t.Errorf("requeued job reason %q, want BeginTime", r)
	}
	if r := c.jobField(id, "Restarts"); r != "1" {
		t.Errorf("Restarts=%s, want 1", r)
	}
	c.waitFor("sacct -D rows", 20*time.Second, func() bool {
		out, _, _ := c.run("sacct", "-D", "-X", "-n", "-P", "-o", "jobid,state", "-j", id)
		return out == id+"|REQUEUED\n"+id+"|PENDING\n"
	})
	out := c.must("sacct", "-X", "-n", "-P", "-o", "jobid,state", "-j", id)
	if out != id+"|PENDING\n" {
		t.Errorf("sacct without -D: %q", out)
	}
	out = c.must("sacct", "-D", "-X", "-n", "-P", "-o", "state,start,end", "-j", id)
	if f := strings.Split(strings.Split(out, "\n")[0], "|"); len(f) != 3 || f[1] == "Unknown" || f[2] == "Unknown" {
		t.Errorf("REQUEUED row without its own start and end: %q", out)
	}
	c.must("scancel", id)
}

// TestUpdateJobFields checks issue 17 item 2: scontrol update of the fields
// users change on pending jobs, with Slurm's refusals for running jobs,
// other users' jobs and fields Drover cannot change.
func TestUpdateJobFields(t *testing.T) {
	t.Parallel()
	c := startUp(t, 2, "--cpus", "2")
	later := c.sbatch("--begin=now+1hour", "-o", "/dev/null", "--wrap", "true")
	c.waitFor("BeginTime reason", 20*time.Second, func() bool { return c.jobField(later, "Reason") == "BeginTime" })
	c.must("scontrol", "update", "JobId="+later, "StartTime=now")
	c.waitState(later, "COMPLETED", 30*time.Second)

	held := c.sbatch("-H", "-o", "/dev/null", "--wrap", "true")
	c.must("scontrol", "update", "JobId="+held, "NumTasks=2", "NumNodes=1-2", "TimeLimit=10", "Name=renamed",
		"Comment=why", "ExcNodeList="+c.node(2), "Nice=5", "ArrayTaskThrottle=0")
	for k, want := range map[string]string{"NumTasks": "2", "TimeLimit": "00:10:00", "JobName": "renamed",
		"Comment": "why", "ExcNodeList": c.node(2), "Nice": "5"} {
		if got := c.jobField(held, k); got != want {
			t.Errorf("after update %s=%q, want %q", k, got, want)
		}
	}
	c.must("scontrol", "update", "JobId="+held, "Dependency=afterok:"+later)
	if d := c.jobField(held, "Dependency"); !strings.HasPrefix(d, "afterok:"+later) {
		t.Errorf("Dependency=%q", d)
	}
	c.must("scontrol", "update", "JobId="+held, "Dependency=")
	for _, tc := range []struct{ field, words string }{
		{"NumNodes=0", "Node count specification invalid for job " + held},
		{"NumTasks=0", "Task count specification invalid for job " + held},
		{"Gres=gpu:1", "Requested node configuration is not available for job " + held},
		{"ReqNodeList=nosuch", "Invalid node name specified for job " + held},
		{"Partition=nosuch", "Invalid partition name specified for job " + held},
		{"Dependency=afterok:999999", "Job dependency problem for job " + held},
		{"TRES=cpu=2", "Update of this parameter is not supported: TRES=cpu=2"},
	} {
		_, errOut, code := c.run("scontrol", "update", "JobId="+held, tc.field)
		if code != 1 || !strings.Contains(errOut, tc.words) {
			t.Errorf("update %s: exit %d, stderr %q, want %q", tc.field, code, errOut, tc.words)
		}
	}
	c.must("scontrol", "release", held)
	c.waitState(held, "COMPLETED", 30*time.Second)
	if n := c.jobField(held, "NodeList"); n != c.node(1) {
		t.Errorf("job updated with ExcNodeList=%s ran on %q", c.node(2), n)
	}

	run := c.sbatch("-o", "/dev/null", "--wrap", "sleep 300")
	c.waitState(run, "RUNNING", 30*time.Second)
	for _, f := range []string{"StartTime=now", "NumTasks=2", "Account=other", "Dependency=afterany:1"} {
		_, errOut, code := c.run("scontrol", "update", "JobId="+run, f)
		if code != 1 || !strings.Contains(errOut, "Job is no longer pending execution for job "+run) {
			t.Errorf("running job, update %s: exit %d, stderr %q", f, code, errOut)
		}
	}
	c.must("scontrol", "update", "JobId="+run, "Comment=fine", "TimeLimit=20")
	u := testUser(t, "drovere2e")
	_, errOut, code := c.runAs(u, "", "scontrol", "update", "JobId="+run, "Comment=mine")
	if code != 1 || !strings.Contains(errOut, "Access/permission denied") {
		t.Errorf("other user's update: exit %d, stderr %q", code, errOut)
	}
	c.must("scancel", run)
}

// TestSignalScope checks issue 17 item 4: scancel --signal reaches the
// steps only; --batch the batch shell only; --full both.
func TestSignalScope(t *testing.T) {
	t.Parallel()
	c := startUp(t, 1, "--cpus", "2")
	dir := worldDir(t)
	step := `trap "echo step-got-usr1; exit 0" USR1; touch ` + dir + `/ready.$SLURM_JOB_ID; while :; do sleep 0.1; done`
	script := "#!/bin/bash\nsrun -n1 bash -c '" + step + "'\necho batch-survived\n"
	run := func(extra string, script string) (string, string) {
		t.Helper()
		out := dir + "/out." + extra
		id := c.sbatch("-o", out, "--wrap", strings.TrimPrefix(script, "#!/bin/bash\n"))
		c.waitFor("job "+id+" ready", 30*time.Second, func() bool {
			_, err := os.Stat(dir + "/ready." + id)
			return err == nil
		})
		args := []string{"--signal=USR1", id}
		if extra != "" {
			args = append([]string{"--" + extra}, args...)
		}
		c.must("scancel", args...)
		c.waitFor("job "+id+" to end", 30*time.Second, func() bool {
			s := c.jobField(id, "JobState")
			return s != "RUNNING" && s != "PENDING" && s != ""
		})
		return c.jobField(id, "JobState"), readFile(t, out)
	}
	state, out := run("", script)
	if state != "COMPLETED" || !strings.Contains(out, "step-got-usr1") || !strings.Contains(out, "batch-survived") {
		t.Errorf("default scope: state %s, output %q", state, out)
	}
	batch := "#!/bin/bash\ntrap 'echo batch-got-usr1; exit 0' USR1\ntouch " + dir + "/ready.$SLURM_JOB_ID\nwhile :; do sleep 0.1; done\n"
	state, out = run("batch", batch)
	if state != "COMPLETED" || !strings.Contains(out, "batch-got-usr1") {
		t.Errorf("--batch: state %s, output %q", state, out)
	}
	full := "#!/bin/bash\ntrap 'echo batch-got-usr1' USR1\nsrun -n1 bash -c '" + step + "' &\nwait\nwait\necho batch-done\n"
	state, out = run("full", full)
	if !strings.Contains(out, "batch-got-usr1") || !strings.Contains(out, "step-got-usr1") {
		t.Errorf("--full: state %s, output %q", state, out)
	}
}

// TestSrunStdinAll checks issue 17 item 5: srun gives its stdin to every
// task by default (--input=all), and to one task with --input=N.
func TestSrunStdinAll(t *testing.T) {
	t.Parallel()
	c := startUp(t, 1, "--cpus", "2")
	lines := func(s string) string {
		l := strings.Split(strings.TrimSpace(s), "\n")
		sort.Strings(l)
		return strings.Join(l, ",")
	}
	out, errOut, code := c.runAs(nil, "x\n", "srun", "-n2", "-l", "cat")
	if code != 0 || lines(out) != "0: x,1: x" {
		t.Errorf("srun -n2 -l cat: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	out, errOut, code = c.runAs(nil, "y\n", "srun", "-n2", "-l", "--input=1", "cat")
	if code != 0 || lines(out) != "1: y" {
		t.Errorf("srun --input=1: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// TestEnforcePartLimits checks issue 17 item 6: with Slurm's default
// EnforcePartLimits=NO a job over its partition's size waits
// (PartitionNodeLimit); under ALL it is refused at submission.
func TestEnforcePartLimits(t *testing.T) {
	t.Parallel()
	c := startUp(t, 2, "--conf", "PartitionName=short Nodes=ALL MaxTime=10")
	id := c.sbatch("-N3", "-o", "/dev/null", "--wrap", "true")
	c.waitFor("PartitionNodeLimit", 20*time.Second, func() bool { return c.jobField(id, "Reason") == "PartitionNodeLimit" })
	long := c.sbatch("-p", "short", "-t", "60", "-o", "/dev/null", "--wrap", "true")
	c.waitFor("PartitionTimeLimit", 20*time.Second, func() bool { return c.jobField(long, "Reason") == "PartitionTimeLimit" })
	if out := c.must("scontrol", "show", "config"); !strings.Contains(out, "EnforcePartLimits       = NO") {
		t.Errorf("show config lacks EnforcePartLimits = NO")
	}
	c.must("scancel", id, long)
	c.stop()
	c = startUp(t, 2, "--conf", "EnforcePartLimits=ALL")
	_, errOut, code := c.run("sbatch", "-N3", "-o", "/dev/null", "--wrap", "true")
	if code != 1 || !strings.Contains(errOut, "Batch job submission failed: Node count specification invalid") {
		t.Errorf("-N3 under EnforcePartLimits=ALL: exit %d, %q", code, errOut)
	}
}

// TestAddUserAcrossClusters checks issue 17 item 8: a user is added on
// every cluster where the account exists; the others get Slurm's warning
// and the exit status is 1.
func TestAddUserAcrossClusters(t *testing.T) {
	t.Parallel()
	c := startUp(t, 1)
	c.must("sacctmgr", "-i", "add", "cluster", "other")
	c.must("sacctmgr", "-i", "add", "account", "elsewhere", "Cluster=other")
	out, errOut, code := c.run("sacctmgr", "-i", "add", "user", "someone", "Account=elsewhere")
	if code != 1 || !strings.Contains(errOut, "This account 'elsewhere' doesn't exist on cluster drover") ||
		!strings.Contains(out, "C = other") {
		t.Errorf("add user: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	got := c.must("sacctmgr", "-n", "-P", "show", "assoc", "where", "user=someone", "format=cluster,account,user")
	if got != "other|elsewhere|someone\n" {
		t.Errorf("associations: %q", got)
	}
	_, errOut, code = c.run("sacctmgr", "-i", "add", "user", "nobody2", "Account=nowhere")
	if code != 1 || !strings.Contains(errOut, "This account 'nowhere' doesn't exist") {
		t.Errorf("unknown account: exit %d, %q", code, errOut)
	}
}
