package accttest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/drover-hpc/drover/internal/acct"
)

// Job is a finished job record with every field set (distinct values, so
// a column mixed up with another shows), and a batch step and step 0.
func Job(cluster string, id uint32, submit int64) *acct.Job {
	return &acct.Job{
		Cluster: cluster, JobID: id, ArrayTaskID: -1, Name: fmt.Sprintf("job-%d", id),
		User: "alice", UID: 1000 + id%3, Group: "lab", GID: 2000, Account: "physics", Partition: "debug", QOS: "normal",
		State: "COMPLETED", Reason: "None", ExitStatus: 3, ExitSignal: 9, CancelledBy: 17,
		DerivedExitStatus: 4, DerivedExitSignal: 2, Restarts: 0, Priority: 4294901760,
		Submit: submit, Eligible: submit + 1, Start: submit + 2, End: submit + 100, Suspended: 5, TimeLimit: 3600,
		NNodes: 2, NCPUs: 8, ReqCPUs: 8, ReqNodes: 2, ReqMem: 4000, ReqMemPerCPU: true,
		ReqTRES: "billing=8,cpu=8,mem=4000M,node=2", AllocTRES: "billing=8,cpu=8,gres/gpu=2,mem=4000M,node=2",
		NodeList: "node[1-2]", WorkDir: "/home/alice/run", Comment: `it's a "test" — ünïcode`,
		SubmitLine: "sbatch -N2 job.sh", StdOut: "/home/alice/slurm-%j.out", StdErr: "/home/alice/err", StdIn: "/dev/null",
		Constraints: "intel&ib",
		Steps: []*acct.Step{
			{StepID: acct.StepBatch, Name: "batch", State: "COMPLETED", ExitStatus: 3, Start: submit + 2, End: submit + 100,
				NNodes: 1, NTasks: 1, NCPUs: 4, NodeList: "node1", AllocTRES: "cpu=4,mem=2000M,node=1",
				MaxRSS: 1 << 30, MaxRSSNode: "node1", MaxRSSTask: 0, AveRSS: 1 << 29, UserCPU: 1234567, SystemCPU: 7654321},
			{StepID: 0, Name: "hostname", State: "FAILED", ExitStatus: 1, ExitSignal: 0, CancelledBy: 0, Start: submit + 3, End: submit + 50,
				NNodes: 2, NTasks: 8, NCPUs: 8, NodeList: "node[1-2]", AllocTRES: "cpu=8,mem=4000M,node=2",
				MaxRSS: 5 << 20, MaxRSSNode: "node2", MaxRSSTask: 7, AveRSS: 3 << 20, UserCPU: 99, SystemCPU: 1, Suspended: 6},
		},
	}
}

// Diff lists the fields in which got differs from want ("" when none):
// field by field, steps included, so a failure names the column.
func Diff(got, want *acct.Job) string {
	var d []string
	diffFields(&d, "", reflect.ValueOf(got).Elem(), reflect.ValueOf(want).Elem())
	gs, ws := got.Steps, want.Steps
	if (gs == nil) != (ws == nil) || len(gs) != len(ws) {
		d = append(d, fmt.Sprintf("Steps: %d steps (nil %v), want %d (nil %v)", len(gs), gs == nil, len(ws), ws == nil))
	}
	for i := range min(len(gs), len(ws)) {
		diffFields(&d, fmt.Sprintf("Steps[%d].", i), reflect.ValueOf(gs[i]).Elem(), reflect.ValueOf(ws[i]).Elem())
	}
	return strings.Join(d, "; ")
}

func diffFields(d *[]string, prefix string, got, want reflect.Value) {
	for i := range got.NumField() {
		f := got.Type().Field(i)
		if f.Name == "Steps" {
			continue
		}
		if g, w := got.Field(i).Interface(), want.Field(i).Interface(); !reflect.DeepEqual(g, w) {
			gs, ws := fmt.Sprintf("%#v", g), fmt.Sprintf("%#v", w)
			if len(gs) > 60 || len(ws) > 60 {
				gs, ws = fmt.Sprintf("%d bytes %.40q", len(gs), gs), fmt.Sprintf("%d bytes %.40q", len(ws), ws)
			}
			*d = append(*d, fmt.Sprintf("%s%s: got %s, want %s", prefix, f.Name, gs, ws))
		}
	}
}

// Run is the conformance suite: every subtest opens a fresh, empty store.
func Run(t *testing.T, open func(t *testing.T) acct.Store) {
	ctx := context.Background()
	put := func(t *testing.T, st acct.Store, jobs ...*acct.Job) {
		t.Helper()
		if err := st.PutJobs(ctx, jobs); err != nil {
			t.Fatalf("PutJobs: %v", err)
		}
	}
	get := func(t *testing.T, st acct.Store, q acct.Query) []*acct.Job {
		t.Helper()
		jobs, err := st.Jobs(ctx, q)
		if err != nil {
			t.Fatalf("Jobs(%+v): %v", q, err)
		}
		return jobs
	}
	ids := func(jobs []*acct.Job) string {
		s := ""
		for _, j := range jobs {
			s += fmt.Sprintf("%s/%d ", j.Cluster, j.JobID)
		}
		return s
	}

	t.Run("round trip keeps every field", func(t *testing.T) {
		st := open(t)
		want := Job("c1", 7, 1_800_000_000)
		put(t, st, want)
		got := get(t, st, acct.Query{})
		if len(got) != 1 {
			t.Fatalf("%d records", len(got))
		}
		if !reflect.DeepEqual(got[0], want) {
			t.Errorf("round trip: %s", Diff(got[0], want))
		}
		if err := st.Ping(ctx); err != nil {
			t.Errorf("Ping: %v", err)
		}
	})

	t.Run("a record replaces its earlier version exactly once", func(t *testing.T) {
		st := open(t)
		j := Job("c1", 1, 1000)
		j.State, j.End, j.Steps = "RUNNING", 0, j.Steps[:1]
		j.Steps[0].State, j.Steps[0].End = "RUNNING", 0
		put(t, st, j)
		j2 := Job("c1", 1, 1000)
		put(t, st, j2)
		put(t, st, j2) // the outbox may send a record again
		got := get(t, st, acct.Query{})
		if len(got) != 1 || !reflect.DeepEqual(got[0], j2) {
			t.Fatalf("after update: %s %+v", ids(got), got)
		}
		// The same key twice in one batch: the last wins.
		a, b := Job("c1", 2, 1000), Job("c1", 2, 1000)
		a.State, b.State = "RUNNING", "FAILED"
		put(t, st, a, b)
		if got := get(t, st, acct.Query{Jobs: []acct.JobSel{{JobID: 2, ArrayTask: -1}}}); len(got) != 1 || got[0].State != "FAILED" {
			t.Fatalf("duplicate in a batch: %+v", got)
		}
	})

	t.Run("steps of the current run are kept, of earlier runs dropped", func(t *testing.T) {
		st := open(t)
		j := Job("c1", 3, 1000)
		put(t, st, j)
		// The controller trims step lists: a step missing from a newer
		// record of the same run stays.
		j2 := Job("c1", 3, 1000)
		j2.Steps = j2.Steps[:1]
		put(t, st, j2)
		if got := get(t, st, acct.Query{}); len(got[0].Steps) != 2 {
			t.Fatalf("trimmed record lost a step: %d steps", len(got[0].Steps))
		}
		// Requeued: a new start; the old run's steps go.
		j3 := Job("c1", 3, 1000)
		j3.Restarts, j3.Start, j3.End = 1, 2000, 2100
		j3.Steps = []*acct.Step{{StepID: acct.StepBatch, Name: "batch", State: "COMPLETED", Start: 2000, End: 2100, MaxRSSTask: -1}}
		j3.Runs = []acct.Run{{Submit: 1000, Eligible: 1000, Start: 1001, End: 1500, NodeList: "n[1-2]", NCPUs: 4, ExitSignal: 15}}
		put(t, st, j3)
		got := get(t, st, acct.Query{})
		if len(got[0].Steps) != 1 || got[0].Steps[0].Start != 2000 {
			t.Fatalf("after requeue: %+v", got[0].Steps)
		}
		if fmt.Sprint(got[0].Runs) != fmt.Sprint(j3.Runs) {
			t.Fatalf("earlier runs: %+v, want %+v", got[0].Runs, j3.Runs)
		}
		// What counts is the start, not the restart count; and a
		// record's own steps are stored whatever their times.
		k := Job("c1", 4, 1000) // steps start at 1002 and 1003
		put(t, st, k)
		k2 := Job("c1", 4, 1000)
		k2.Start, k2.Steps = 1003, k2.Steps[:0]
		k2.Steps = append(k2.Steps, &acct.Step{StepID: 1, Name: "early", Start: 900, MaxRSSTask: -1})
		put(t, st, k2)
		got = get(t, st, acct.Query{Jobs: []acct.JobSel{{JobID: 4, ArrayTask: -1}}})
		var kept []string
		for _, s := range got[0].Steps {
			kept = append(kept, fmt.Sprintf("%d@%d", s.StepID, s.Start))
		}
		if fmt.Sprint(kept) != "[0@1003 1@900]" {
			t.Errorf("steps after the start moved to 1003: %v, want [0@1003 1@900]", kept)
		}
		// A record with no start (pending again) drops nothing.
		k3 := Job("c1", 4, 1000)
		k3.Start, k3.End, k3.Steps = 0, 0, nil
		put(t, st, k3)
		if got := get(t, st, acct.Query{Jobs: []acct.JobSel{{JobID: 4, ArrayTask: -1}}}); len(got[0].Steps) != 2 {
			t.Errorf("a record without a start dropped steps: %d left", len(got[0].Steps))
		}
	})

	t.Run("odd strings and extreme numbers come back as they went", func(t *testing.T) {
		st := open(t)
		odd := []string{"", " ", "it's", `say "hi"`, `back\slash\`, "'; DROP TABLE jobs; --", "%_*?", "a:1,b:2",
			"line\nbreak\ttab", "ünïcødé", "日本語", "emoji 🚀 four bytes", "\u00a0nbsp", "trailing  "}
		var jobs []*acct.Job
		for i, s := range odd {
			j := Job("odd", uint32(i+1), 100)
			j.Name, j.User, j.Group, j.Account, j.Partition, j.QOS = s, s, s, s, s, s
			j.Reason, j.ReqTRES, j.AllocTRES, j.NodeList, j.WorkDir, j.Comment = s, s, s, s, s, s
			j.SubmitLine, j.StdOut, j.StdErr, j.StdIn, j.Constraints = s, s, s, s, s
			j.Steps[1].Name, j.Steps[1].NodeList, j.Steps[1].AllocTRES, j.Steps[1].MaxRSSNode = s, s, s, s
			jobs = append(jobs, j)
		}
		long := Job("odd", 100, 100)
		long.Name = strings.Repeat("n", 1000)          // longer than any VARCHAR key
		long.SubmitLine = strings.Repeat("x", 100_000) // longer than a 64 KiB TEXT
		long.Comment = strings.Repeat("ß", 40_000)
		ext := Job("odd", 4294967295, math.MaxInt32) // the largest ids and values
		ext.ArrayJobID, ext.ArrayTaskID = 4294967295, math.MaxInt32
		ext.UID, ext.GID, ext.CancelledBy, ext.Priority = 4294967294, 4294967295, 4294967295, 4294967295
		ext.ExitStatus, ext.ExitSignal, ext.DerivedExitStatus, ext.DerivedExitSignal = 255, math.MinInt32, math.MaxInt32, -1
		ext.Restarts, ext.NNodes, ext.NCPUs, ext.ReqCPUs, ext.ReqNodes = math.MaxInt32, math.MaxInt32, math.MinInt32, -1, 0
		ext.Submit, ext.Eligible, ext.Start, ext.End = math.MaxInt32, math.MaxInt32, 1<<40, math.MaxInt64
		ext.Suspended, ext.TimeLimit, ext.ReqMem, ext.ReqMemPerCPU = math.MaxInt64, -2, math.MaxInt64, false
		ext.Steps[0].StepID, ext.Steps[1].StepID = acct.StepInteractive, math.MaxInt32
		for _, s := range ext.Steps {
			s.Start, s.End, s.MaxRSS, s.AveRSS = 1<<40, math.MaxInt64, math.MaxInt64, math.MinInt64
			s.UserCPU, s.SystemCPU, s.MaxRSSTask, s.CancelledBy = math.MaxInt64, 0, math.MinInt32, 4294967295
		}
		zero := &acct.Job{Cluster: "odd", JobID: 200} // every other field zero, no steps
		jobs = append(jobs, long, zero, ext)          // in id order
		put(t, st, jobs...)
		got := get(t, st, acct.Query{Clusters: []string{"odd"}})
		if len(got) != len(jobs) {
			t.Fatalf("%d records, want %d", len(got), len(jobs))
		}
		for i, want := range jobs {
			if !reflect.DeepEqual(got[i], want) {
				t.Errorf("record %d (%q): %s", want.JobID, want.Name[:min(len(want.Name), 20)], Diff(got[i], want))
			}
		}
		for _, s := range odd[1:] {
			if got := get(t, st, acct.Query{Names: []string{s}, NoSteps: true}); len(got) != 1 || got[0].Name != s {
				t.Errorf("Names [%q]: %d records", s, len(got))
			}
		}
	})

	t.Run("text that is not UTF-8 is stored with U+FFFD", func(t *testing.T) {
		st := open(t)
		j := Job("c", 1, 10)
		j.Name, j.WorkDir, j.Steps[0].NodeList = "bad\xff\xfename", "/home/\xe9t\xe9", "nul\x00byte"
		put(t, st, j)
		got := get(t, st, acct.Query{})
		if len(got) != 1 || got[0].Name != "bad\ufffdname" || got[0].WorkDir != "/home/\ufffdt\ufffd" ||
			got[0].Steps[0].NodeList != "nul\ufffdbyte" {
			t.Errorf("got %q %q %q", got[0].Name, got[0].WorkDir, got[0].Steps[0].NodeList)
		}
	})

	t.Run("order of records and steps", func(t *testing.T) {
		st := open(t)
		j := Job("b", 5, 1000)
		j.Steps = nil
		for _, id := range []int32{2, 0, acct.StepExtern, 10, acct.StepInteractive, acct.StepBatch, 1} {
			j.Steps = append(j.Steps, &acct.Step{StepID: id, Name: fmt.Sprint(id), Start: 1500})
		}
		put(t, st, Job("b", 9, 10), j, Job("a", 100, 10), Job("b", 1, 10), Job("B", 7, 10), Job("b", 1<<31, 10))
		got := get(t, st, acct.Query{})
		// Bytewise, whatever the database's locale: "B" < "a" < "b".
		if s := ids(got); s != "B/7 a/100 b/1 b/5 b/9 b/2147483648 " {
			t.Errorf("records in order %s", s)
		}
		var order []int32
		for _, s := range got[3].Steps {
			order = append(order, s.StepID)
		}
		if fmt.Sprint(order) != fmt.Sprint([]int32{acct.StepBatch, acct.StepExtern, acct.StepInteractive, 0, 1, 2, 10}) {
			t.Errorf("steps in order %v", order)
		}
	})

	t.Run("queries", func(t *testing.T) {
		st := open(t)
		var all []*acct.Job
		for i := uint32(1); i <= 12; i++ {
			j := Job("c1", i, int64(i)*100)
			j.Steps = nil
			if i%2 == 0 {
				j.Cluster = "c2"
			}
			j.Account = []string{"physics", "bio", "chem"}[i%3]
			j.Partition = []string{"debug", "gpu"}[i%2]
			j.QOS = []string{"normal", "high", "low", "normal"}[i%4]
			j.State = []string{"COMPLETED", "FAILED", "RUNNING"}[(i/2)%3]
			if j.State == "RUNNING" {
				j.End = 0
			}
			j.Name = fmt.Sprintf("n%d", i%5)
			all = append(all, j)
		}
		// An array: tasks 20 (task 0, the array's own id) 21, 22.
		for k := uint32(0); k < 3; k++ {
			j := Job("c1", 20+k, 5000)
			j.Steps, j.ArrayJobID, j.ArrayTaskID = nil, 20, int32(k)
			all = append(all, j)
		}
		put(t, st, all...)
		match := func(f func(j *acct.Job) bool) string {
			var m []*acct.Job
			for _, j := range all {
				if f(j) {
					m = append(m, j)
				}
			}
			// ids in (cluster, id) order
			var s []*acct.Job
			for _, c := range []string{"c1", "c2"} {
				for _, j := range m {
					if j.Cluster == c {
						s = append(s, j)
					}
				}
			}
			return ids(s)
		}
		has := func(list []string, v string) bool {
			for _, x := range list {
				if x == v {
					return true
				}
			}
			return false
		}
		for _, tc := range []struct {
			name string
			q    acct.Query
			f    func(j *acct.Job) bool
		}{
			{"all", acct.Query{}, func(*acct.Job) bool { return true }},
			{"cluster", acct.Query{Clusters: []string{"c2"}}, func(j *acct.Job) bool { return j.Cluster == "c2" }},
			{"uid", acct.Query{UIDs: []uint32{1001}}, func(j *acct.Job) bool { return j.UID == 1001 }},
			{"accounts", acct.Query{Accounts: []string{"bio", "chem"}}, func(j *acct.Job) bool { return has([]string{"bio", "chem"}, j.Account) }},
			{"partition", acct.Query{Partitions: []string{"gpu"}}, func(j *acct.Job) bool { return j.Partition == "gpu" }},
			{"qos", acct.Query{QOS: []string{"high"}}, func(j *acct.Job) bool { return j.QOS == "high" }},
			{"names", acct.Query{Names: []string{"n1", "n3"}}, func(j *acct.Job) bool { return j.Name == "n1" || j.Name == "n3" }},
			{"states", acct.Query{States: []string{"FAILED", "RUNNING"}}, func(j *acct.Job) bool { return j.State != "COMPLETED" }},
			{"job ids", acct.Query{Jobs: []acct.JobSel{{JobID: 3, ArrayTask: -1}, {JobID: 4, ArrayTask: -1}}},
				func(j *acct.Job) bool { return j.JobID == 3 || j.JobID == 4 }},
			{"an array by its id", acct.Query{Jobs: []acct.JobSel{{JobID: 20, ArrayTask: -1}}},
				func(j *acct.Job) bool { return j.ArrayJobID == 20 }},
			{"one array task", acct.Query{Jobs: []acct.JobSel{{JobID: 20, ArrayTask: 2}}},
				func(j *acct.Job) bool { return j.JobID == 22 }},
			{"window", acct.Query{Start: 450, End: 800},
				func(j *acct.Job) bool { return j.Submit <= 800 && (j.End == 0 || j.End >= 450) }},
			{"start only", acct.Query{Start: 1000},
				func(j *acct.Job) bool { return j.End == 0 || j.End >= 1000 }},
			{"end only", acct.Query{End: 300}, func(j *acct.Job) bool { return j.Submit <= 300 }},
			{"bounds are inclusive", acct.Query{Start: 500, End: 500}, // job 4 ends at 500, job 5 is submitted at 500
				func(j *acct.Job) bool { return j.Submit <= 500 && (j.End == 0 || j.End >= 500) }},
			{"array tasks and plain jobs", acct.Query{Jobs: []acct.JobSel{{JobID: 21, ArrayTask: -1}, {JobID: 20, ArrayTask: 0}, {JobID: 7, ArrayTask: 0}}},
				func(j *acct.Job) bool { return j.JobID == 21 || j.JobID == 20 }},
			{"ids and other criteria", acct.Query{Jobs: []acct.JobSel{{JobID: 20, ArrayTask: -1}, {JobID: 2, ArrayTask: -1}}, Clusters: []string{"c1"}},
				func(j *acct.Job) bool { return j.ArrayJobID == 20 }},
			{"several criteria lists", acct.Query{UIDs: []uint32{1000, 1002}, Partitions: []string{"debug"}, QOS: []string{"normal", "low"}},
				func(j *acct.Job) bool {
					return (j.UID == 1000 || j.UID == 1002) && j.Partition == "debug" && (j.QOS == "normal" || j.QOS == "low")
				}},
			{"criteria combine", acct.Query{Clusters: []string{"c1"}, States: []string{"COMPLETED"}, End: 1000},
				func(j *acct.Job) bool { return j.Cluster == "c1" && j.State == "COMPLETED" && j.Submit <= 1000 }},
			{"nothing", acct.Query{Names: []string{"none"}}, func(*acct.Job) bool { return false }},
		} {
			got := get(t, st, tc.q)
			if g, w := ids(got), match(tc.f); g != w {
				t.Errorf("%s: got %s\nwant %s", tc.name, g, w)
			}
		}
	})

	t.Run("steps only unless NoSteps", func(t *testing.T) {
		st := open(t)
		put(t, st, Job("c", 1, 10), Job("c", 2, 10))
		for _, j := range get(t, st, acct.Query{NoSteps: true}) {
			if j.Steps != nil {
				t.Errorf("NoSteps: job %d has %d steps", j.JobID, len(j.Steps))
			}
		}
		got := get(t, st, acct.Query{Jobs: []acct.JobSel{{JobID: 2, ArrayTask: -1}}})
		if len(got) != 1 || len(got[0].Steps) != 2 {
			t.Errorf("steps of job 2: %+v", got)
		}
	})

	t.Run("fields asked for come whole", func(t *testing.T) {
		st := open(t)
		want := Job("c", 8, 10)
		want.ArrayJobID, want.ArrayTaskID = 8, 0
		put(t, st, want)
		got := get(t, st, acct.Query{Fields: []string{"state", "exit_status", "user", "end"}, NoSteps: true})
		if len(got) != 1 {
			t.Fatalf("%d records", len(got))
		}
		g := got[0]
		if g.Cluster != want.Cluster || g.JobID != want.JobID || g.ArrayJobID != 8 || g.ArrayTaskID != 0 ||
			g.State != want.State || g.ExitStatus != want.ExitStatus || g.User != want.User || g.End != want.End {
			t.Errorf("got %+v", g)
		}
	})

	t.Run("a large batch", func(t *testing.T) {
		st := open(t)
		var jobs []*acct.Job
		for i := uint32(1); i <= 5000; i++ {
			jobs = append(jobs, Job("big", i, int64(i)))
		}
		put(t, st, jobs...)
		got := get(t, st, acct.Query{NoSteps: true})
		if len(got) != 5000 || got[0].JobID != 1 || got[4999].JobID != 5000 {
			t.Fatalf("%d records", len(got))
		}
		got = get(t, st, acct.Query{Jobs: []acct.JobSel{{JobID: 4321, ArrayTask: -1}}})
		if len(got) != 1 || !reflect.DeepEqual(got[0], jobs[4320]) {
			t.Errorf("job 4321 of the batch: %+v", got)
		}
	})

	t.Run("close", func(t *testing.T) {
		st := open(t)
		put(t, st, Job("c", 1, 10))
		if err := st.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		if err := st.PutJobs(ctx, []*acct.Job{Job("c", 2, 10)}); err == nil {
			t.Error("PutJobs after Close succeeded")
		}
		if _, err := st.Jobs(ctx, acct.Query{}); err == nil {
			t.Error("Jobs after Close succeeded")
		}
	})

	t.Run("errors are not unavailability", func(t *testing.T) {
		st := open(t)
		if err := st.PutJobs(ctx, nil); err != nil {
			t.Errorf("empty PutJobs: %v", err)
		}
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := st.Jobs(cctx, acct.Query{}); err == nil {
			t.Error("Jobs with a cancelled context succeeded")
		}
		if err := st.Ping(ctx); errors.Is(err, acct.ErrUnavailable) || err != nil {
			t.Errorf("Ping after a cancelled call: %v", err)
		}
	})
}
