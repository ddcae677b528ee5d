package sim

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func tiny(t *testing.T) *Trace {
	t.Helper()
	tr, err := ReadFile("testdata/tiny.swf")
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func TestParse(t *testing.T) {
	tr := tiny(t)
	if tr.MaxProcs != 4 || len(tr.Jobs) != 4 || tr.Skipped != 1 {
		t.Fatalf("MaxProcs %d, %d jobs, %d skipped", tr.MaxProcs, len(tr.Jobs), tr.Skipped)
	}
	if j := tr.Jobs[2]; j != (Job{ID: 3, Submit: 2, Run: 50, Procs: 2, Limit: 50, User: 3}) {
		t.Errorf("job 3 = %+v", j)
	}
	for _, tc := range []struct{ text, want string }{
		{"1 2 3\n", "x.swf:1: want 18 fields, got 3"},
		{"; MaxProcs: 4\n\n1 0 -1 1 1 -1 -1 1 1 -1 1 1 -1 -1 -1 -1 -1 abc\n", `x.swf:3: field 18: "abc" is not a number`},
		{"1 -5 -1 1 1 -1 -1 1 1 -1 1 1 -1 -1 -1 -1 -1 -1\n", "x.swf:1: negative submit time -5"},
		{"1 0 -1 1 1 -1 -1 1 1 -1 1 1 -1 -1 -1 -1 -1 NaN\n", `x.swf:1: field 18: "NaN" is not a number`},
		{strings.Repeat("9", 70000) + "\n", "x.swf:1: bufio.Scanner: token too long"},
	} {
		_, err := Parse(strings.NewReader(tc.text), "x.swf")
		if err == nil || err.Error() != tc.want {
			t.Errorf("%.40q: err %v, want %s", tc.text, err, tc.want)
		}
	}
}

// On the tiny trace the policies differ exactly as backfill should:
// FIFO holds everything behind the 4-processor job; EASY and
// conservative backfill start the 50 s job (it ends before the 4-proc
// job can start) but not the 500 s one.
func TestRunPolicies(t *testing.T) {
	tr := tiny(t)
	for _, tc := range []struct {
		policy   string
		wait     float64 // mean wait
		makespan int64
	}{
		{"fifo", (0 + 99 + 198 + 197) / 4.0, 700},
		{"easy", (0 + 99 + 0 + 197) / 4.0, 700},
		{"backfill", (0 + 99 + 0 + 197) / 4.0, 700},
	} {
		r, err := Run(tr.Jobs, Options{Procs: 4, Sched: Policies[tc.policy]})
		if err != nil {
			t.Fatal(err)
		}
		if r.AvgWait != tc.wait || r.Makespan != tc.makespan {
			t.Errorf("%s: %s; want avg wait %.2f makespan %d", tc.policy, r, tc.wait, tc.makespan)
		}
	}
}

func TestMainErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.swf")
	if err := os.WriteFile(bad, []byte("; MaxProcs: 2\n1 0 -1 1 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errOut strings.Builder
	if code := Main([]string{"--trace", bad}, &out, &errOut); code != 1 || !strings.Contains(errOut.String(), bad+":2: want 18 fields") {
		t.Errorf("bad trace: exit %d, %q", code, errOut.String())
	}
	errOut.Reset()
	if code := Main([]string{"--trace", "testdata/tiny.swf", "--policy", "sjf"}, &out, &errOut); code != 2 {
		t.Errorf("unknown policy: exit %d, %q", code, errOut.String())
	}
	out.Reset()
	if code := Main([]string{"--trace", "testdata/tiny.swf", "--sequences", "3", "--length", "2"}, &out, &errOut); code != 0 ||
		strings.Count(out.String(), "sequence ") != 3 || !strings.Contains(out.String(), "mean_avg_bsld=") {
		t.Errorf("sequences: exit %d\n%s%s", code, out.String(), errOut.String())
	}
	for _, bad := range [][]string{{"--bf-window", "-1"}, {"--bf-window", "43201"}, {"--bf-resolution", "0"}, {"--bf-resolution", "3601"}} {
		errOut.Reset()
		if code := Main(append([]string{"--trace", "testdata/tiny.swf"}, bad...), &out, &errOut); code != 2 || !strings.Contains(errOut.String(), "--bf-window takes") {
			t.Errorf("%v: exit %d, %q", bad, code, errOut.String())
		}
	}
	out.Reset()
	if code := Main([]string{"--trace", "testdata/tiny.swf", "--bf-window", "1440", "--bf-resolution", "60"}, &out, &errOut); code != 0 || !strings.Contains(out.String(), "whole first=0 jobs=4") {
		t.Errorf("shipped window and resolution: exit %d\n%s%s", code, out.String(), errOut.String())
	}
}

func FuzzParse(f *testing.F) {
	f.Add("; MaxProcs: 4\n1 0 -1 100 2 -1 -1 2 100 -1 1 1 -1 -1 -1 -1 -1 -1\n")
	f.Add("1 0 -1 1e300 2 -1 -1 2 100 -1 1 1 -1 -1 -1 -1 -1 -1\n")
	f.Fuzz(func(t *testing.T, text string) {
		tr, err := Parse(strings.NewReader(text), "f.swf")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.swf:") {
				t.Fatalf("error without position: %v", err)
			}
			return
		}
		for _, j := range tr.Jobs {
			if j.Procs <= 0 || j.Run < 0 || j.Limit <= 0 && j.Run > 0 || j.Submit < 0 {
				t.Fatalf("bad job kept: %+v", j)
			}
		}
	})
}

func TestMultifactor(t *testing.T) {
	if m, err := ParseMultifactor("basic"); m != nil || err != nil {
		t.Errorf("basic: %v %v", m, err)
	}
	m, err := ParseMultifactor("age=10,jobsize=0,maxage=100,favorsmall=yes,smallreltime=no")
	if err != nil || *m != (Multifactor{WeightAge: 10, MaxAge: 100, FavorSmall: true}) {
		t.Fatalf("%+v %v", m, err)
	}
	f := m.Func(4)
	if got := f(&Job{Submit: 0, Procs: 1, Limit: 60}, 50); got != 5 {
		t.Errorf("half aged: %d, want 5", got)
	}
	d, _ := ParseMultifactor("multifactor")
	short, long := d.Func(128)(&Job{Procs: 8, Limit: 60}, 0), d.Func(128)(&Job{Procs: 8, Limit: 36000}, 0)
	if short <= long {
		t.Errorf("default multifactor: short job %d not above long %d", short, long)
	}
	for _, bad := range []string{"age=-1", "jobsize=4294967296", "maxage=0", "speed=3", "age"} {
		if _, err := ParseMultifactor(bad); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}
