package sacct

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/drover-hpc/drover/internal/acct"
	"github.com/drover-hpc/drover/internal/cli"
	"github.com/drover-hpc/drover/internal/cli/clitest"
)

type fake struct {
	clitest.Unimplemented
	jobs []*acct.Job
	q    acct.Query
	err  error
}

// AcctJobs filters by job id only: enough for these tests, which check
// the query separately.
func (f *fake) AcctJobs(_ context.Context, q acct.Query, fn func([]*acct.Job) error) error {
	f.q = q
	if f.err != nil {
		return f.err
	}
	return fn(f.jobs)
}

var now = time.Date(2026, 11, 22, 5, 20, 0, 0, time.Local)

func run(f *fake, env map[string]string, args ...string) (string, string, int) {
	return runAs(0, f, env, args...)
}

// runAs runs sacct as the user uid.
func runAs(uid int, f *fake, env map[string]string, args ...string) (string, string, int) {
	var out, errb bytes.Buffer
	e := &cli.Env{Prog: "sacct", Stdout: &out, Stderr: &errb, Now: func() time.Time { return now }, Version: "22.05.8",
		Dial: func() (cli.Client, error) { return f, nil }, Host: &cli.Host{Getuid: func() int { return uid }}}
	for k, v := range env {
		e.Environ = append(e.Environ, k+"="+v)
	}
	code := Run(context.Background(), e, args)
	return out.String(), errb.String(), code
}

func ts(s string) int64 {
	t, err := time.ParseInLocation("2006-01-02T15:04:05", s, time.Local)
	if err != nil {
		panic(err)
	}
	return t.Unix()
}

// job is a record like those of the reference run (shared/reference/
// slurm-22.05-outputs/sacct.txt), with a batch step.
func job(id uint32, name, state string, status, signal int32, cpus int32, batchState string, bstatus, bsignal int32) *acct.Job {
	j := &acct.Job{Cluster: "drover", JobID: id, ArrayTaskID: -1, Name: name, User: "root", Group: "root",
		Account: "root", Partition: "debug", QOS: "normal", State: state, ExitStatus: status, ExitSignal: signal,
		Submit: ts("2026-11-22T05:10:00"), Eligible: ts("2026-11-22T05:10:00"), Start: ts("2026-11-22T05:10:06"),
		End: ts("2026-11-22T05:11:07"), NNodes: 1, NCPUs: cpus, NodeList: "vm",
		ReqTRES:   fmt.Sprintf("billing=%d,cpu=%d,mem=%dM,node=1", cpus, cpus, 250*cpus),
		AllocTRES: fmt.Sprintf("billing=%d,cpu=%d,mem=%dM,node=1", cpus, cpus, 250*cpus)}
	if batchState != "" {
		j.Steps = []*acct.Step{{StepID: acct.StepBatch, Name: "batch", State: batchState, ExitStatus: bstatus, ExitSignal: bsignal,
			Start: j.Start, End: j.End, NNodes: 1, NTasks: 1, NCPUs: cpus, NodeList: "vm", MaxRSS: 20264 * 1024, UserCPU: 12000, SystemCPU: 3000}}
	}
	return j
}

func reference() []*acct.Job {
	arr := job(41935, "sample_array", "CANCELLED", 0, 0, 1, "CANCELLED", 0, 15)
	arr.JobID, arr.ArrayJobID, arr.ArrayTaskID = 41947, 41935, 7
	pend := job(41941, "sample_toobig", "CANCELLED", 0, 0, 100, "", 0, 0)
	pend.Start, pend.End, pend.NodeList = 0, ts("2026-11-22T05:10:05"), ""
	srun := job(41958, "hostname", "COMPLETED", 0, 0, 2, "", 0, 0)
	srun.Steps = []*acct.Step{{StepID: 0, Name: "hostname", State: "COMPLETED", NCPUs: 2, NNodes: 1, NTasks: 2, NodeList: "vm"}}
	return []*acct.Job{
		job(41932, "sample_sleep", "COMPLETED", 0, 0, 1, "COMPLETED", 0, 0),
		job(41938, "sample_big", "COMPLETED", 0, 0, 64, "COMPLETED", 0, 0),
		pend,
		arr,
		job(41948, "sample_cancel_running", "CANCELLED", 0, 0, 1, "CANCELLED", 0, 15),
		job(41949, "sample_exit3", "FAILED", 3, 0, 1, "FAILED", 3, 0),
		job(41950, "sample_kill9", "FAILED", 0, 9, 1, "CANCELLED", 0, 9),
		job(41951, "sample_timeout", "TIMEOUT", 0, 0, 1, "CANCELLED", 0, 15),
		srun,
		job(41962, "sample_oom", "OUT_OF_MEMORY", 0, 125, 1, "OUT_OF_MEMORY", 0, 125),
	}
}

// TestDefaultFormat: the rows of Slurm 22.05's sacct for the same jobs,
// byte for byte (sacct.txt).
func TestDefaultFormat(t *testing.T) {
	f := &fake{jobs: reference()}
	out, errOut, code := run(f, nil, "-S", "2026-11-22T05:09:59")
	want := `JobID           JobName  Partition    Account  AllocCPUS      State ExitCode 
------------ ---------- ---------- ---------- ---------- ---------- -------- 
41932        sample_sl+      debug       root          1  COMPLETED      0:0 
41932.batch       batch                  root          1  COMPLETED      0:0 
41938        sample_big      debug       root         64  COMPLETED      0:0 
41938.batch       batch                  root         64  COMPLETED      0:0 
41941        sample_to+      debug       root        100 CANCELLED+      0:0 
41935_7      sample_ar+      debug       root          1 CANCELLED+      0:0 
41935_7.bat+      batch                  root          1  CANCELLED     0:15 
41948        sample_ca+      debug       root          1 CANCELLED+      0:0 
41948.batch       batch                  root          1  CANCELLED     0:15 
41949        sample_ex+      debug       root          1     FAILED      3:0 
41949.batch       batch                  root          1     FAILED      3:0 
41950        sample_ki+      debug       root          1     FAILED      0:9 
41950.batch       batch                  root          1  CANCELLED      0:9 
41951        sample_ti+      debug       root          1    TIMEOUT      0:0 
41951.batch       batch                  root          1  CANCELLED     0:15 
41958          hostname      debug       root          2  COMPLETED      0:0 
41958.0        hostname                  root          2  COMPLETED      0:0 
41962        sample_oom      debug       root          1 OUT_OF_ME+    0:125 
41962.batch       batch                  root          1 OUT_OF_ME+    0:125 
`
	if code != 0 || errOut != "" || out != want {
		t.Errorf("exit %d %q\n%s\nwant:\n%s", code, errOut, out, want)
	}
	if f.q.Start != ts("2026-11-22T05:09:59") || f.q.End != now.Unix() || f.q.NoSteps {
		t.Errorf("query %+v", f.q)
	}
}

func TestParsable(t *testing.T) {
	f := &fake{jobs: reference()[2:5]}
	out, _, _ := run(f, nil, "-X", "--parsable2", "-o", "JobID,JobName,Partition,Account,AllocCPUS,State,ExitCode")
	want := "JobID|JobName|Partition|Account|AllocCPUS|State|ExitCode\n" +
		"41941|sample_toobig|debug|root|100|CANCELLED by 0|0:0\n" +
		"41935_7|sample_array|debug|root|1|CANCELLED by 0|0:0\n" +
		"41948|sample_cancel_running|debug|root|1|CANCELLED by 0|0:0\n"
	if out != want {
		t.Errorf("-X -P:\n%s\nwant:\n%s", out, want)
	}
	if !f.q.NoSteps || len(f.q.Fields) == 0 {
		t.Errorf("-X reads steps or every field: %+v", f.q)
	}
	out, _, _ = run(f, nil, "-X", "-p", "-o", "jobid,state,exitcode")
	if !strings.HasPrefix(out, "JobID|State|ExitCode|\n41941|CANCELLED by 0|0:0|\n") {
		t.Errorf("-p: %q", out)
	}
	out, _, _ = run(f, nil, "-X", "-n", "-P", "--delimiter=,", "-o", "JobID,Start,End,Elapsed,NodeList,ReqTRES,AllocTRES", "-j", "41941")
	if want := "41941,None,2026-11-22T05:10:05,00:00:00,None assigned,billing=100,cpu=100,mem=25000M,node=1,\n"; !strings.HasPrefix(out, want) {
		t.Errorf("pending cancelled job: %q, want %q", out, want)
	}
}

func TestFields(t *testing.T) {
	j := reference()[0]
	j.TimeLimit = 3600
	f := &fake{jobs: []*acct.Job{j}}
	out, _, _ := run(f, nil, "-n", "-P", "-o", "jobidraw,user,timelimit,totalcpu,maxrss,reqmem,cputime,cputimeraw,elapsedraw,derivedexitcode")
	want := "41932|root|01:00:00|00:00.015||250M|00:01:01|61|61|0:0\n" +
		"41932.batch|||00:00.015|20264K|250M|00:01:01|61|61|\n"
	if out != want {
		t.Errorf("got:\n%s\nwant:\n%s", out, want)
	}
	out, _, _ = run(f, nil, "-n", "-P", "-o", "maxrss", "--units=M", "-j", "41932.batch")
	if out != "19.79M\n" {
		t.Errorf("--units=M on a step: %q", out)
	}
	out, _, _ = run(f, nil, "-n", "-o", "jobid%20,jobname%5", "-X")
	if out != "41932                sampl+ \n" && out != "41932                samp+ \n" {
		t.Errorf("widths: %q", out)
	}
}

func TestSelection(t *testing.T) {
	f := &fake{jobs: reference()}
	if _, _, code := runAs(1000, f, nil, "-j", "41935_7,41949.batch", "-s", "CA,F"); code != 0 {
		t.Fatal("exit", code)
	}
	q := f.q
	if q.Start != 0 || len(q.Jobs) != 2 || q.Jobs[0] != (acct.JobSel{JobID: 41935, ArrayTask: 7}) ||
		strings.Join(q.States, ",") != "CANCELLED,FAILED" || len(q.UIDs) != 1 || q.UIDs[0] != 1000 {
		t.Errorf("query %+v", q)
	}
	out, _, _ := runAs(1000, f, nil, "-n", "-P", "-o", "jobid", "-j", "41949.batch,41935_7")
	if out != "41935_7\n41935_7.batch\n41949.batch\n" {
		t.Errorf("step selection: %q", out)
	}
	// Default window: today since midnight; -s alone: now.
	runAs(1000, f, nil)
	if y, m, d := now.Date(); f.q.Start != time.Date(y, m, d, 0, 0, 0, 0, time.Local).Unix() {
		t.Errorf("default start %d", f.q.Start)
	}
	runAs(1000, f, nil, "-s", "R", "-a", "-M", "all")
	if f.q.Start != now.Unix() || f.q.UIDs != nil || f.q.Clusters[0] != "all" {
		t.Errorf("-s R -a: %+v", f.q)
	}
	runAs(1000, f, nil, "-S", "now-1hour", "-E", "2026-11-22T06:00", "-u", "0,root", "-A", "a,b", "--name=x", "-r", "debug", "-q", "normal")
	if f.q.Start != now.Add(-time.Hour).Unix() || f.q.End != ts("2026-11-22T06:00:00") || len(f.q.UIDs) != 2 ||
		len(f.q.Accounts) != 2 || f.q.Names[0] != "x" || f.q.Partitions[0] != "debug" || f.q.QOS[0] != "normal" {
		t.Errorf("filters: %+v", f.q)
	}
	out, _, _ = runAs(1000, f, nil, "-n", "-X", "-P", "-o", "jobid", "-N", "vm", "-S", "2026-11-22")
	if strings.Count(out, "\n") != 9 {
		t.Errorf("-N vm kept %q", out)
	}
}

func TestErrors(t *testing.T) {
	f := &fake{}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--bogus"}, "unrecognized option '--bogus'"},
		{[]string{"-o", "JobID,Nope"}, `Invalid field requested: "Nope"`},
		{[]string{"-s", "XX"}, "Invalid state: XX"},
		{[]string{"-S", "yesterdayish"}, "Invalid time specification"},
		{[]string{"-j", "abc"}, "Invalid job id: abc"},
		{[]string{"--units=Q"}, "Invalid unit type"},
		{[]string{"-S", "now+2hours", "-E", "now"}, "is after end time"},
	} {
		if _, errOut, code := run(f, nil, tc.args...); code != 1 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d %q, want %q", tc.args, code, errOut, tc.want)
		}
	}
	f.err = fmt.Errorf("rpc: %w", cli.ErrAcctDisabled)
	if _, errOut, code := run(f, nil); code != 1 || errOut != "Slurm accounting storage is disabled\n" {
		t.Errorf("disabled: %d %q", code, errOut)
	}
}

func TestJSON(t *testing.T) {
	f := &fake{jobs: reference()}
	out, _, code := run(f, nil, "--json", "-j", "41950")
	var doc struct {
		Jobs []struct {
			JobID    uint32 `json:"job_id"`
			State    struct{ Current string }
			ExitCode struct {
				ReturnCode int32 `json:"return_code"`
				Signal     struct{ ID int32 }
			} `json:"exit_code"`
			Steps []struct{ Step struct{ ID string } }
		}
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != 0 {
		t.Fatalf("%v %d %s", err, code, out)
	}
	if len(doc.Jobs) != 1 || doc.Jobs[0].JobID != 41950 || doc.Jobs[0].State.Current != "FAILED" ||
		doc.Jobs[0].ExitCode.Signal.ID != 9 || doc.Jobs[0].Steps[0].Step.ID != "41950.batch" {
		t.Errorf("json: %+v", doc.Jobs)
	}
}

// BenchmarkFormat100k prints 100,000 job rows with -X -P, as in the
// issue's benchmark (without the database).
func BenchmarkFormat100k(b *testing.B) {
	jobs := make([]*acct.Job, 100_000)
	for i := range jobs {
		jobs[i] = job(uint32(i+1), "job", "COMPLETED", 0, 0, 2, "", 0, 0)
	}
	f := &fake{jobs: jobs}
	e := &cli.Env{Prog: "sacct", Stdout: io.Discard, Stderr: io.Discard, Now: func() time.Time { return now },
		Dial: func() (cli.Client, error) { return f, nil }}
	b.ResetTimer()
	for range b.N {
		if Run(context.Background(), e, []string{"-X", "-P", "-a"}) != 0 {
			b.Fatal("failed")
		}
	}
}

// Suspended time is left out of Elapsed on every row, as Slurm's sacct:
// the job's and its batch step's (the job's Suspended), an srun step's
// (its own, the part of the suspension it ran through).
func TestElapsedLeavesOutSuspended(t *testing.T) {
	j := job(41970, "suspended", "COMPLETED", 0, 0, 1, "COMPLETED", 0, 0) // 61 s of wall time
	j.Suspended = 20
	j.Steps = append(j.Steps, &acct.Step{StepID: 0, Name: "sleep", State: "COMPLETED", NCPUs: 1, NNodes: 1, NTasks: 1,
		NodeList: "vm", Start: j.Start + 1, End: j.End - 10, Suspended: 15})
	out, _, _ := run(&fake{jobs: []*acct.Job{j}}, nil, "-n", "-P", "-o", "JobID,ElapsedRaw,Suspended")
	want := "41970|41|00:00:20\n41970.batch|41|00:00:20\n41970.0|35|00:00:15\n"
	if out != want {
		t.Errorf("got:\n%s\nwant:\n%s", out, want)
	}
}
