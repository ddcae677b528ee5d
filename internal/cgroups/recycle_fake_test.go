package cgroups

import (
	"path/filepath"
	"testing"
)

// TestV1RecycleSeesEveryTask: a tree is kept only when no thread of any
// process is left anywhere in its freezer group, on layouts and kernels
// this machine may not have (a fake tree):
//   - memory and freezer in one hierarchy: the batch step then has a
//     freezer directory of its own (its memory one cannot be shared), so
//     a process the batch script left behind is in step_batch, not in the
//     job's directory;
//   - a kernel that hides from cgroup.procs a process whose leader thread
//     exited while its other threads run (before 5.3): only tasks lists
//     them.
//
// Kept, such a process would sit in the next job's group (another user's)
// and outlive its own job's end.
func TestV1RecycleSeesEveryTask(t *testing.T) {
	for _, tc := range []struct {
		name       string
		jobTasks   string // the job's freezer directory's tasks
		jobProcs   string // ... and cgroup.procs
		stepTasks  string // step_batch's, where it has a freezer directory
		stepProcs  string
		wantKeptOK bool
	}{
		{name: "empty", wantKeptOK: true},
		{name: "left in the batch step", stepTasks: "4242\n", stepProcs: "4242\n"},
		{name: "exited leader hidden from cgroup.procs", jobTasks: "4243\n"},
		{name: "step exited leader hidden", stepTasks: "4244\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := t.TempDir()
			root := "drover/n1"
			for _, h := range []string{"cpuacct", "memory,freezer"} {
				fakeWrite(t, filepath.Join(base, h, root), "cgroup.procs", "")
			}
			m, err := NewAt(LayoutV1, base, root)
			if err != nil {
				t.Fatal(err)
			}
			job, err := m.Create("job_1", Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := m.Create("job_1/step_batch", Limits{InParentFreezer: true}); err != nil {
				t.Fatal(err)
			}
			mf := filepath.Join(base, "memory,freezer", root, "job_1")
			ms := filepath.Join(mf, batchStepName)
			if !exists(ms, "") {
				t.Fatal("the batch step has no directory of its own in memory,freezer")
			}
			for d, files := range map[string]map[string]string{
				mf: {"tasks": tc.jobTasks, "cgroup.procs": tc.jobProcs, "freezer.state": "THAWED\n"},
				ms: {"tasks": tc.stepTasks, "cgroup.procs": tc.stepProcs, "freezer.state": "THAWED\n"},
			} {
				for f, v := range files {
					fakeWrite(t, d, f, v)
				}
				fakeWrite(t, d, "memory.usage_in_bytes", "0\n")
				fakeWrite(t, d, "memory.max_usage_in_bytes", "0\n")
				fakeWrite(t, d, "memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 0\n")
			}
			for _, d := range []string{"", batchStepName} {
				fakeWrite(t, filepath.Join(base, "cpuacct", root, "job_1", d), "cpuacct.usage", "0\n")
			}
			if kept := job.(Recycler).Recycle(); kept != tc.wantKeptOK {
				t.Errorf("kept %v, want %v", kept, tc.wantKeptOK)
			}
		})
	}
}
