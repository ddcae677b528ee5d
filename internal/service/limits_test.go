package service

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/drover-hpc/drover/internal/api"
	"github.com/drover-hpc/drover/internal/model"
)

func TestSubmitSizeCaps(t *testing.T) {
	svc, _, _ := setup(t)
	long := func(n int) string { return strings.Repeat("x", n) }
	cases := []struct {
		name string
		edit func(*model.JobSpec)
	}{
		{"name", func(s *model.JobSpec) { s.Name = long(MaxStringLen + 1) }},
		{"comment", func(s *model.JobSpec) { s.Comment = long(1 << 20) }},
		{"account", func(s *model.JobSpec) { s.Account = long(MaxStringLen + 1) }},
		{"stdout path", func(s *model.JobSpec) { s.StdOut = "/tmp/" + long(MaxPathLen) }},
		{"workdir", func(s *model.JobSpec) { s.WorkDir = "/" + long(MaxPathLen) }},
		{"script", func(s *model.JobSpec) { s.Script = "#!/bin/sh\n" + long(defaultMaxScriptSize) }},
		{"environment", func(s *model.JobSpec) { s.Env = []string{"X=" + long(MaxExecBytes)} }},
		{"gres type", func(s *model.JobSpec) { s.GPUs = &model.GPUReq{Type: long(MaxStringLen + 1)} }},
	}
	for _, tc := range cases {
		s := spec()
		tc.edit(s)
		if _, err := svc.SubmitJob(as(1000), s); err == nil || err.Error() != msgTooLong {
			t.Errorf("%s: err %v, want %q", tc.name, err, msgTooLong)
		}
	}
	// At the caps exactly, a job is accepted.
	s := spec()
	s.Name, s.Comment = long(MaxStringLen), long(MaxStringLen)
	s.Script = "#!/bin/sh\n" + long(defaultMaxScriptSize-10)
	if _, err := svc.SubmitJob(as(1000), s); err != nil {
		t.Fatalf("at the caps: %v", err)
	}
	// scontrol update is bounded the same way.
	res, err := svc.UpdateJob(as(1000), api.JobSelection{Targets: []api.JobTarget{{ID: 1}}, UID: -1}, map[string]string{"Comment": long(MaxStringLen + 1)})
	if err == nil || err.Error() != msgTooLong {
		t.Errorf("update comment: %v %v", res, err)
	}
	// The script cap follows max_script_size.
	st := *svc.Settings()
	st.MaxScriptSize = 100
	svc.SetSettings(&st)
	s = spec()
	s.Script = "#!/bin/sh\n" + long(100)
	if _, err := svc.SubmitJob(as(1000), s); err == nil || err.Error() != msgTooLong {
		t.Errorf("max_script_size=100: %v", err)
	}
}

func TestSubmitPrivilegedFields(t *testing.T) {
	svc, _, _ := setup(t)
	s := spec()
	s.Nice = -5
	if _, err := svc.SubmitJob(as(1000), s); err == nil || err.Error() != "Invalid --nice value" {
		t.Errorf("negative nice from a user: %v", err)
	}
	s = spec()
	s.Nice = -5
	if _, err := svc.SubmitJob(as(0), s); err != nil {
		t.Errorf("negative nice from root: %v", err)
	}
	uid := uint32(0)
	s = spec()
	s.UID = &uid
	if _, err := svc.SubmitJob(as(1000), s); !errors.Is(err, errDenied) {
		t.Errorf("--uid=0 from a user: %v", err)
	}
	// --priority from a user is dropped (Slurm 22.05 does the same);
	// from root it is the job's priority.
	prio := uint32(777)
	s = spec()
	s.Priority = &prio
	id, err := svc.SubmitJob(as(1000), s)
	if err != nil {
		t.Fatal(err)
	}
	if j := svc.store.Snapshot().Job(id); j.Priority == 777 {
		t.Errorf("a user's --priority was applied")
	}
	s = spec()
	s.Priority = &prio
	if id, err = svc.SubmitJob(as(0), s); err != nil {
		t.Fatal(err)
	}
	if j := svc.store.Snapshot().Job(id); j.Priority != 777 {
		t.Errorf("root's --priority: %d", j.Priority)
	}
	// Root may submit as another user.
	nobody := uint32(65534)
	s = spec()
	s.UID = &nobody
	if id, err = svc.SubmitJob(as(0), s); err != nil {
		t.Fatal(err)
	}
	if j := svc.store.Snapshot().Job(id); j.UserID != 65534 || j.UserName != "nobody" {
		t.Errorf("root --uid=65534: uid %d user %q", j.UserID, j.UserName)
	}
}

func TestMaxJobCount(t *testing.T) {
	svc, _, _ := setup(t)
	st := *svc.Settings()
	st.MaxJobCount = 3
	svc.SetSettings(&st)
	for i := 0; i < 3; i++ {
		if _, err := svc.SubmitJob(as(1000), spec()); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := svc.SubmitJob(as(1000), spec()); err != ErrQueueFull {
		t.Errorf("fourth job with MaxJobCount=3: %v", err)
	}
	s := spec()
	s.Array = &model.ArraySpec{Raw: "0-1", TaskIDs: []int{0, 1}}
	st.MaxJobCount = 4
	svc.SetSettings(&st)
	if _, err := svc.SubmitJob(as(1000), s); err != ErrQueueFull {
		t.Errorf("a 2-task array into 1 free place: %v", err)
	}
}

// A user's jobs in memory hold at most MaxUserJobBytes of scripts, argv,
// environments and submit lines: past it a submission is refused for now
// (sbatch retries). An array's tasks share one spec and count once, other
// users and root are not held back.
func TestMaxUserJobBytes(t *testing.T) {
	svc, _, _ := setup(t)
	st := *svc.Settings()
	st.MaxUserJobBytes = 3 << 20
	if err := svc.InstallConfig(&st); err != nil {
		t.Fatal(err)
	}
	big := func(tag string) *model.JobSpec {
		s := spec()
		s.Hold = true
		s.Env = []string{"BIG=" + tag + strings.Repeat("x", 1<<20)}
		return s
	}
	arr := big("array")
	arr.Array = &model.ArraySpec{Raw: "0-99", TaskIDs: seq(100)}
	if _, err := svc.SubmitJob(as(1000), arr); err != nil {
		t.Fatalf("a 100-task array of 1 MiB: %v", err)
	}
	if _, err := svc.SubmitJob(as(1000), big("a")); err != nil {
		t.Fatalf("second MiB: %v", err)
	}
	if _, err := svc.SubmitJob(as(1000), big("b")); !errors.Is(err, api.ErrTryAgain) {
		t.Fatalf("fourth MiB past a 3 MiB bound: %v, want try again", err)
	}
	if _, err := svc.SubmitJob(as(1001), big("c")); err != nil {
		t.Fatalf("another user: %v", err)
	}
	for _, tag := range []string{"r1", "r2", "r3", "r4"} {
		if _, err := svc.SubmitJob(as(0), big(tag)); err != nil {
			t.Fatalf("root: %v", err)
		}
	}
}

func seq(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// The running steps of one user's jobs hold at most MaxUserJobBytes of
// argv and environment, counted apart from the jobs' own: the per-job
// step budget alone let a user with many running jobs hold GiBs.
func TestMaxUserStepBytes(t *testing.T) {
	svc, d, _ := setup(t)
	st := *svc.Settings()
	st.MaxUserJobBytes = 3<<20 + 4096
	if err := svc.InstallConfig(&st); err != nil {
		t.Fatal(err)
	}
	step := func(uid uint32, job model.JobID, tag string) error {
		_, _, err := svc.CreateStep(as(uid), job, stepSpec(func(s *model.StepSpec) {
			s.Overlap = true
			s.Env = []string{"BIG=" + tag + strings.Repeat("x", 1<<20)}
		}))
		return err
	}
	a := running(t, svc, d, 1000, model.NodeAlloc{Node: "n1", CPUs: 1})
	b := running(t, svc, d, 1000, model.NodeAlloc{Node: "n2", CPUs: 1})
	for i, job := range []model.JobID{a, b, a} {
		if err := step(1000, job, strconv.Itoa(i)); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	if err := step(1000, b, "over"); err == nil || !strings.Contains(err.Error(), "Step limit reached") {
		t.Fatalf("a fourth MiB over two jobs under a 3 MiB bound: %v", err)
	}
	c := running(t, svc, d, 1001, model.NodeAlloc{Node: "n2", CPUs: 1})
	if err := step(1001, c, "other"); err != nil {
		t.Fatalf("another user's step: %v", err)
	}
}
