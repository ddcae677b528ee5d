package sacct

import (
	"context"
	"encoding/json"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/drover-hpc/drover/internal/acct"
	"github.com/drover-hpc/drover/internal/cli"
)

// array is the records of array 100 with tasks 1..n (job ids 100..),
// all pending and held, as Drover stores them.
func array(n int) []*acct.Job {
	var out []*acct.Job
	for i := 1; i <= n; i++ {
		j := job(uint32(99+i), "arr", "PENDING", 0, 0, 1, "", 0, 0)
		j.ArrayJobID, j.ArrayTaskID = 100, int32(i)
		j.Start, j.End, j.NodeList, j.Reason = 0, 0, "", "JobHeldUser"
		out = append(out, j)
	}
	return out
}

func TestPendingArrayOneRow(t *testing.T) {
	jobs := array(5)
	f := &fake{jobs: jobs}
	out, errs, code := run(f, nil, "-X", "-j", "100", "-P", "-o", "JobID,JobIDRaw,ArrayTaskID,State,Reason")
	want := "JobID|JobIDRaw|ArrayTaskID|State|Reason\n100_[1-5]|100|1-5|PENDING|JobHeldUser\n"
	if code != 0 || out != want {
		t.Fatalf("held array: code %d, stderr %q, out\n%s\nwant\n%s", code, errs, out, want)
	}
	for _, n := range []string{"state", "start", "restarts"} {
		if !slices.Contains(f.q.Fields, n) {
			t.Errorf("query fields %v lack %q, which tell a task that never ran", f.q.Fields, n)
		}
	}

	// Task 2 started, task 4 was released (a reason of its own, no longer
	// held), task 5 was requeued and waits again (it ran: own row).
	jobs[1].State, jobs[1].Start, jobs[1].Reason = "RUNNING", ts("2026-11-22T05:10:06"), "None"
	jobs[3].Reason = "Priority"
	jobs[4].Restarts = 1
	out, _, _ = run(&fake{jobs: jobs}, nil, "-X", "-j", "100", "-P", "-o", "JobID,State")
	want = "JobID|State\n100_[1,3]|PENDING\n100_2|RUNNING\n100_4|PENDING\n100_5|PENDING\n"
	if out != want {
		t.Errorf("partly started array:\n%s\nwant\n%s", out, want)
	}

	// A task named itself keeps its row; --array prints one row a task.
	out, _, _ = run(&fake{jobs: array(5)}, nil, "-X", "-j", "100_3", "-n", "-P", "-o", "JobID,State")
	if out != "100_3|PENDING\n" {
		t.Errorf("-j 100_3: %q", out)
	}
	f = &fake{jobs: array(3)}
	out, _, _ = run(f, nil, "-X", "--array", "-n", "-p", "-o", "JobID")
	if out != "100_1|\n100_2|\n100_3|\n" {
		t.Errorf("--array: %q", out)
	}
	if slices.Contains(f.q.Fields, "restarts") {
		t.Errorf("--array reads fields it does not print: %v", f.q.Fields)
	}
}

func TestPendingArrayBitstrLen(t *testing.T) {
	var jobs []*acct.Job
	for i, j := range array(100) {
		if i%2 == 0 {
			jobs = append(jobs, j) // tasks 1,3,5,...: no ranges
		}
	}
	out, _, _ := run(&fake{jobs: jobs}, nil, "-X", "-n", "-P", "-o", "JobID")
	id := strings.TrimSpace(out)
	if !strings.HasPrefix(id, "100_[1,3,5,") || !strings.HasSuffix(id, "...]") || len(id) != len("100_[]")+63 {
		t.Errorf("default SLURM_BITSTR_LEN: %q", id)
	}
	out, _, _ = run(&fake{jobs: jobs}, map[string]string{"SLURM_BITSTR_LEN": "0"}, "-X", "-n", "-P", "-o", "JobID")
	if id := strings.TrimSpace(out); strings.Contains(id, "...") || !strings.HasSuffix(id, ",99]") {
		t.Errorf("SLURM_BITSTR_LEN=0: %q", id)
	}
	// Aligned, the JobID column cuts the text as any value ('+').
	out, _, _ = run(&fake{jobs: array(5)}, nil, "-X", "-n", "-o", "JobID%7,State")
	if out != "100_[1+    PENDING \n" {
		t.Errorf("aligned: %q", out)
	}
}

func TestPendingArrayJSON(t *testing.T) {
	jobs := array(4)
	jobs[2].State, jobs[2].Start = "RUNNING", ts("2026-11-22T05:10:06")
	out, errs, code := run(&fake{jobs: jobs}, nil, "--json", "-j", "100")
	if code != 0 {
		t.Fatalf("--json: code %d, %s", code, errs)
	}
	var doc struct {
		Jobs []struct {
			JobID uint32 `json:"job_id"`
			Array struct {
				JobID  uint32 `json:"job_id"`
				Task   string `json:"task"`
				TaskID *int32 `json:"task_id"`
			} `json:"array"`
			State struct {
				Current string `json:"current"`
			} `json:"state"`
		} `json:"jobs"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(doc.Jobs) != 2 {
		t.Fatalf("want the remainder and task 3, got %d jobs:\n%s", len(doc.Jobs), out)
	}
	r, t3 := doc.Jobs[0], doc.Jobs[1]
	if r.JobID != 100 || r.Array.JobID != 100 || r.Array.Task != "1-2,4" || r.Array.TaskID != nil || r.State.Current != "PENDING" {
		t.Errorf("remainder: %+v", r)
	}
	if t3.Array.TaskID == nil || *t3.Array.TaskID != 3 || t3.Array.Task != "" || t3.State.Current != "RUNNING" {
		t.Errorf("task 3: %+v", t3)
	}
}

// BenchmarkPendingArray100k is sacct -P over a 100,000-task array that
// waits: one output row.
func BenchmarkPendingArray100k(b *testing.B) {
	jobs := array(100_000)
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
