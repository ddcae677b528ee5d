package e2e

import (
	"strings"
	"testing"
	"time"
)

// acctRow is `sacct -X -n -P -o <fields> -j id`: the job's own row.
func (c *cluster) acctRow(id, fields string) string {
	out, _, code := c.run("sacct", "-X", "-n", "-P", "-o", fields, "-j", id)
	if code != 0 {
		return ""
	}
	line, _, _ := strings.Cut(out, "\n")
	return line
}

// waitAcct waits until sacct shows the job in state (its first word:
// "CANCELLED by 0" is CANCELLED).
func (c *cluster) waitAcct(id, state string, limit time.Duration) {
	c.t.Helper()
	c.waitFor("job "+id+" "+state+" in sacct", limit, func() bool {
		f := strings.Fields(c.acctRow(id, "State"))
		return len(f) > 0 && f[0] == state
	})
}

// TestAccounting runs the common job outcomes on a cluster with the
// default embedded database and compares what sacct shows with what Slurm
// 22.05 shows for the same jobs (shared/reference/slurm-22.05-outputs):
// rows for jobs, batch steps, srun steps and array tasks, Slurm's exit
// codes and states, and records that outlive MinJobAge.
func TestAccounting(t *testing.T) {
	t.Parallel()
	c := startUp(t, 1, "--conf", "MinJobAge=2")
	since := time.Now().Add(-time.Minute).Format("2006-01-02T15:04:05")

	ok := c.sbatch("-J", "acct_ok", "-o", "/dev/null", "--wrap", "true")
	fail := c.sbatch("-J", "acct_exit3", "-o", "/dev/null", "--wrap", "exit 3")
	kill := c.sbatch("-J", "acct_kill9", "-o", "/dev/null", "--wrap", "kill -9 $$")
	timeout := c.sbatch("-J", "acct_timeout", "-t", "0:02", "-o", "/dev/null", "--wrap", "sleep 60")
	running := c.sbatch("-J", "acct_cancel", "-o", "/dev/null", "--wrap", "sleep 300")
	held := c.sbatch("-J", "acct_held", "-H", "-o", "/dev/null", "--wrap", "true")
	array := c.sbatch("-J", "acct_array", "-a", "1-3", "-o", "/dev/null", "--wrap", "true")
	c.must("srun", "-J", "acct_srun", "-n1", "true")

	c.waitAcct(running, "RUNNING", 30*time.Second)
	c.waitAcct(held, "PENDING", 10*time.Second)
	c.must("scancel", running, held)
	for id, state := range map[string]string{ok: "COMPLETED", fail: "FAILED", kill: "FAILED",
		timeout: "TIMEOUT", running: "CANCELLED", held: "CANCELLED", array + "_3": "COMPLETED"} {
		c.waitAcct(id, state, 60*time.Second)
	}
	srun := strings.TrimSpace(c.must("sacct", "-X", "-n", "-P", "-o", "JobID", "--name=acct_srun"))
	c.waitAcct(srun, "COMPLETED", 30*time.Second)

	t.Run("parsable rows match Slurm's", func(t *testing.T) {
		got := c.must("sacct", "-P", "-S", since, "-o", "JobID,JobName,State,ExitCode",
			"--name=acct_ok,acct_exit3,acct_kill9,acct_timeout,acct_cancel,acct_held,acct_array,acct_srun")
		want := strings.Join([]string{
			"JobID|JobName|State|ExitCode",
			ok + "|acct_ok|COMPLETED|0:0",
			ok + ".batch|batch|COMPLETED|0:0",
			fail + "|acct_exit3|FAILED|3:0",
			fail + ".batch|batch|FAILED|3:0",
			kill + "|acct_kill9|FAILED|0:9",
			kill + ".batch|batch|CANCELLED|0:9",
			timeout + "|acct_timeout|TIMEOUT|0:0",
			timeout + ".batch|batch|CANCELLED|0:15",
			running + "|acct_cancel|CANCELLED by 0|0:0",
			running + ".batch|batch|CANCELLED|0:15",
			held + "|acct_held|CANCELLED by 0|0:0",
			array + "_1|acct_array|COMPLETED|0:0",
			array + "_1.batch|batch|COMPLETED|0:0",
			array + "_2|acct_array|COMPLETED|0:0",
			array + "_2.batch|batch|COMPLETED|0:0",
			array + "_3|acct_array|COMPLETED|0:0",
			array + "_3.batch|batch|COMPLETED|0:0",
			srun + "|acct_srun|COMPLETED|0:0",
			// srun -J names the step too.
			srun + ".0|acct_srun|COMPLETED|0:0",
		}, "\n") + "\n"
		if got != want {
			t.Errorf("sacct -P:\n%s\nwant:\n%s", got, want)
		}
	})

	t.Run("default format", func(t *testing.T) {
		got := c.must("sacct", "-j", fail)
		want := "JobID           JobName  Partition    Account  AllocCPUS      State ExitCode \n" +
			"------------ ---------- ---------- ---------- ---------- ---------- -------- \n" +
			pad(fail, 12) + " acct_exit3      debug       root          1     FAILED      3:0 \n" +
			pad(fail+".batch", 12) + "      batch                  root          1     FAILED      3:0 \n"
		if got != want {
			t.Errorf("sacct -j:\n%s\nwant:\n%s", got, want)
		}
	})

	t.Run("fields of a finished job", func(t *testing.T) {
		node := strings.TrimSpace(c.must("sinfo", "-h", "-N", "-o", "%N"))
		row := c.acctRow(ok, "JobIDRaw,User,UID,Group,Account,Partition,QOS,NNodes,AllocCPUS,ReqTRES,NodeList,WorkDir,Reason")
		want := ok + "|root|0|root|root|debug|normal|1|1|"
		if !strings.HasPrefix(row, want) || !strings.Contains(row, "|"+node+"|"+c.dir+"|None") {
			t.Errorf("row %q, want %q...%s|%s|None", row, want, node, c.dir)
		}
		if row := c.acctRow(held, "JobID,Start,NodeList"); row != held+"|None|None assigned" {
			t.Errorf("cancelled pending job: %q", row)
		}
		out := c.must("sacct", "-n", "-P", "-j", ok, "-o", "JobID,Elapsed,TotalCPU,Start,End")
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			f := strings.Split(l, "|")
			if len(f) != 5 || !strings.HasPrefix(f[1], "00:00:") || f[3] == "Unknown" || f[4] == "Unknown" {
				t.Errorf("times row %q", l)
			}
		}
	})

	t.Run("finished jobs leave squeue after MinJobAge and stay in sacct", func(t *testing.T) {
		c.waitFor("job purged from the controller", 30*time.Second, func() bool {
			_, errOut, code := c.run("scontrol", "show", "job", ok)
			return code != 0 && strings.Contains(errOut, "Invalid job id specified")
		})
		if row := c.acctRow(ok, "JobID,State"); row != ok+"|COMPLETED" {
			t.Errorf("sacct after purge: %q", row)
		}
	})

	t.Run("sreport counts the jobs' CPU time", func(t *testing.T) {
		out := c.must("sreport", "-nP", "-t", "seconds", "cluster", "utilization", "start="+since, "end=now+1hour")
		f := strings.Split(strings.TrimSpace(out), "|")
		if len(f) != 7 || f[0] != "drover" || f[1] == "0" || f[6] == "0" {
			t.Errorf("sreport cluster utilization: %q", out)
		}
		out = c.must("sreport", "-nP", "-t", "seconds", "user", "TopUsage", "start="+since, "end=now+1hour")
		if !strings.HasPrefix(out, "drover|root|") {
			t.Errorf("sreport user TopUsage: %q", out)
		}
	})

	t.Run("filters", func(t *testing.T) {
		out := c.must("sacct", "-X", "-n", "-P", "-o", "JobID", "-S", since, "-s", "F,TO")
		ids := strings.Fields(out)
		if strings.Join(ids, " ") != strings.Join([]string{fail, kill, timeout}, " ") {
			t.Errorf("-s F,TO: %v", ids)
		}
		out = c.must("sacct", "-X", "-n", "-P", "-o", "JobID", "-j", array+"_2")
		if strings.TrimSpace(out) != array+"_2" {
			t.Errorf("-j %s_2: %q", array, out)
		}
		out = c.must("sacct", "-X", "-n", "-P", "-o", "JobID", "-j", array)
		if strings.Fields(out)[0] != array+"_1" || len(strings.Fields(out)) != 3 {
			t.Errorf("-j %s: %q", array, out)
		}
		if out := c.must("sacct", "-n", "-X", "-S", "now+1hour", "-E", "now+2hours"); strings.TrimSpace(out) != "" {
			t.Errorf("a window in the future: %q", out)
		}
	})

	// Slurm keeps an array's tasks in one record until they start: sacct
	// prints the waiting ones as one row "ID_[1,3-5]", started tasks on
	// rows of their own.
	t.Run("pending array tasks print as one row", func(t *testing.T) {
		parr := c.sbatch("-J", "acct_parr", "-H", "-a", "1-5", "-o", "/dev/null", "--wrap", "true")
		rows := func(args ...string) string {
			return c.must("sacct", append([]string{"-X", "-j", parr, "-P", "-o", "JobID,JobName,State"}, args...)...)
		}
		want := "JobID|JobName|State\n" + parr + "_[1-5]|acct_parr|PENDING\n"
		// The records reach the database shortly after sbatch returns.
		got := rows()
		for deadline := time.Now().Add(30 * time.Second); got != want && time.Now().Before(deadline); got = rows() {
			time.Sleep(50 * time.Millisecond)
		}
		if got != want {
			t.Fatalf("held array:\n%s\nwant\n%s", got, want)
		}
		if got := rows("--array", "-n"); strings.Count(got, "|PENDING\n") != 5 || !strings.HasPrefix(got, parr+"_1|") {
			t.Errorf("--array: %q", got)
		}
		if got := rows("-n", "-j", parr+"_3"); got != parr+"_3|acct_parr|PENDING\n" {
			t.Errorf("-j %s_3: %q", parr, got)
		}
		c.must("scontrol", "release", parr+"_2")
		c.waitAcct(parr+"_2", "COMPLETED", 60*time.Second)
		// submitit's poll: it reads ID_[ranges] rows as those tasks.
		out := c.must("sacct", "-j", parr, "-o", "JobID,State", "--parsable2")
		if want := "JobID|State\n" + parr + "_[1,3-5]|PENDING\n" + parr + "_2|COMPLETED\n" +
			parr + "_2.batch|COMPLETED\n"; out != want {
			t.Errorf("after task 2 ran:\n%s\nwant\n%s", out, want)
		}
		c.must("scancel", parr)
		c.waitAcct(parr+"_5", "CANCELLED", 30*time.Second)
		if got := rows("-n"); strings.Contains(got, "PENDING") || !strings.Contains(got, parr+"_2|acct_parr|COMPLETED\n") {
			t.Errorf("cancelled array: %q", got)
		}
	})
}

func pad(s string, w int) string {
	for len(s) < w {
		s += " "
	}
	return s
}
