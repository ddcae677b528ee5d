package stepenv

import (
	"strings"
	"testing"

	"github.com/drover-hpc/drover/internal/model"
)

// plain is a batch step of job 128 that is not an array task.
var plain = Fields{
	JobID: 128, ArrayTaskID: model.NoArrayTask,
	User: "alice", JobName: "sim", Node: "node07.cluster.example",
	StepID: -1, StepName: "batch",
}

// task is array task 13 of array 120, job id 133, in srun step 2, rank 5 on
// node 1.
var task = Fields{
	JobID: 133, ArrayJobID: 120, ArrayTaskID: 13,
	User: "bob", JobName: "sweep", Node: "gpu01",
	NodeRank: 1, TaskRank: 5, StepID: 2,
}

func TestExpandPattern(t *testing.T) {
	tests := []struct {
		pattern string
		f       Fields
		want    string
	}{
		{"", plain, ""},
		{"out.txt", plain, "out.txt"},
		{"slurm-%j.out", plain, "slurm-128.out"},
		{"%%", plain, "%"},
		{"100%%-%j", plain, "100%-128"},
		{"%%j", plain, "%j"},
		{"%%%j", plain, "%128"},
		// Outside arrays %A is the job id and %a Slurm's NO_VAL.
		{"slurm-%A_%a.out", plain, "slurm-128_4294967294.out"},
		{"%b", plain, "4"},
		{"slurm-%A_%a.out", task, "slurm-120_13.out"},
		{"%b", task, "3"},
		{"%j", task, "133"},
		// %J: job id alone for the batch step, jobid.stepid otherwise.
		{"job%J.out", plain, "job128.out"},
		{"job%J.out", task, "job133.2.out"},
		{"%s", plain, "batch"},
		{"%s", task, "2"},
		{"%N", plain, "node07"},
		{"%N", task, "gpu01"},
		{"%n-%t", task, "1-5"},
		{"%n-%t", plain, "0-0"},
		{"%u/%x", task, "bob/sweep"},
		// Zero padding applies to numbers only and is clamped to 10.
		{"job%4j.out", plain, "job0128.out"},
		{"job%2j-%2t.out", task, "job133-05.out"},
		{"%1j", plain, "128"},
		{"%0j", plain, "128"},
		{"%05a", task, "00013"},
		{"%10j", plain, "0000000128"},
		{"%12j", plain, "0000000128"},
		{"%99999999999999999999j", plain, "0000000128"},
		{"%4J", task, "0133.2"},
		{"%3s", task, "002"},
		{"%5s", plain, "batch"},
		{"%8N|%8u|%8x", task, "gpu01|bob|sweep"},
		// Unknown specifiers and a trailing % are kept as written.
		{"%q", plain, "%q"},
		{"%5q.out", plain, "%5q.out"},
		{"a%", plain, "a%"},
		{"a%12", plain, "a%12"},
		{"%5%", plain, "%5%"},
		{"%r%S", plain, "%r%S"},
		// A backslash turns substitution off and is removed.
		{`slurm\-%j.out`, plain, "slurm-%j.out"},
		{`%j\`, plain, "%j"},
		{`a\\b-%j`, plain, `a\b-%j`},
		{`\\\`, plain, `\`},
		{`\%%`, plain, "%%"},
		// Multi-byte text passes through untouched.
		{"résumé-%j-ß", plain, "résumé-128-ß"},
	}
	for _, tc := range tests {
		if got := ExpandPattern(tc.pattern, tc.f); got != tc.want {
			t.Errorf("ExpandPattern(%q) = %q, want %q", tc.pattern, got, tc.want)
		}
	}
}

func TestNegativeRanksKeepSign(t *testing.T) {
	f := plain
	f.NodeRank = -3
	if got := ExpandPattern("%3n", f); got != "-003" {
		t.Fatalf("got %q", got)
	}
}

func TestBatchFields(t *testing.T) {
	job := &model.Job{
		ID: 133, ArrayJobID: 120, ArrayTaskID: 13, UserName: "bob",
		Spec: &model.JobSpec{Name: "from-spec"},
	}
	f := BatchFields(job, "gpu01")
	if got := ExpandPattern("%A_%a-%j-%J-%s-%x-%u-%N-%n-%t", f); got != "120_13-133-133-batch-from-spec-bob-gpu01-0-0" {
		t.Fatalf("got %q", got)
	}
	job.Name = "record"
	if f := BatchFields(job, "n1"); f.JobName != "record" {
		t.Fatalf("job name %q, want the record's", f.JobName)
	}
}

func TestDefaultOutput(t *testing.T) {
	single := &model.Job{ID: 7, ArrayTaskID: model.NoArrayTask}
	if got := DefaultOutput(single); got != "slurm-%j.out" {
		t.Errorf("plain job: %q", got)
	}
	arr := &model.Job{ID: 9, ArrayJobID: 7, ArrayTaskID: 2}
	if got := DefaultOutput(arr); got != "slurm-%A_%a.out" {
		t.Errorf("array task: %q", got)
	}
	if got := ExpandPattern(DefaultOutput(arr), BatchFields(arr, "n")); got != "slurm-7_2.out" {
		t.Errorf("expanded: %q", got)
	}
}

func TestResolvePath(t *testing.T) {
	tests := []struct{ dir, p, want string }{
		{"/home/a", "out.txt", "/home/a/out.txt"},
		{"/home/a", "sub/../out.txt", "/home/a/out.txt"},
		{"/home/a/", "./x", "/home/a/x"},
		{"/home/a", "/tmp/out", "/tmp/out"},
		{"/home/a", "/dev/null", "/dev/null"},
		{"/home/a", "", ""},
		{"", "rel", "rel"},
	}
	for _, tc := range tests {
		if got := ResolvePath(tc.dir, tc.p); got != tc.want {
			t.Errorf("ResolvePath(%q, %q) = %q, want %q", tc.dir, tc.p, got, tc.want)
		}
	}
}

func FuzzExpandPattern(f *testing.F) {
	for _, s := range []string{
		"", "slurm-%j.out", "%A_%a", "%4j%%%", `a\%j`, "%10N", "%99999999999x", "%", "%%%", "%J.%s.%t",
	} {
		f.Add(s, uint32(128), 13, "node1")
	}
	f.Fuzz(func(t *testing.T, pattern string, id uint32, taskID int, node string) {
		fields := Fields{
			JobID: id, ArrayJobID: id / 2, ArrayTaskID: taskID, User: "u", JobName: "n",
			Node: node, NodeRank: taskID, TaskRank: -taskID, StepID: taskID, StepName: "batch",
		}
		got := ExpandPattern(pattern, fields)
		if got != ExpandPattern(pattern, fields) {
			t.Fatal("not deterministic")
		}
		switch {
		case strings.Contains(pattern, `\`):
			// Substitution off: only backslashes go, nothing else changes.
			if got != unescape(pattern) || len(got) > len(pattern) {
				t.Fatalf("escaped pattern %q gave %q", pattern, got)
			}
			if strings.ReplaceAll(got, `\`, "") != strings.ReplaceAll(pattern, `\`, "") {
				t.Fatalf("escaped pattern %q lost text: %q", pattern, got)
			}
		case !strings.Contains(pattern, "%"):
			if got != pattern {
				t.Fatalf("pattern without %% changed: %q -> %q", pattern, got)
			}
		}
		// A pattern built only of specifiers and text without % never
		// leaves a % behind, except through %%.
		if !strings.ContainsAny(node, "%\\") && !strings.Contains(pattern, `\`) {
			clean := strings.NewReplacer("%%", "", "%j", "", "%A", "", "%a", "", "%N", "").Replace(pattern)
			if !strings.Contains(clean, "%") && strings.Count(got, "%") != strings.Count(pattern, "%%") {
				t.Fatalf("pattern %q gave %q: stray %%", pattern, got)
			}
		}
	})
}
