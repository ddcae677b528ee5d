//go:build linux

package executor

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drover-hpc/drover/internal/cgroups"
)

// TestStartInCgroup: on both launch paths the program is in the spec's
// groups from its first instruction (it reads its own cgroup file).
func TestStartInCgroup(t *testing.T) {
	layout := cgroups.Detect()
	if os.Geteuid() != 0 || layout == cgroups.LayoutNone {
		t.Skip("needs root and cgroups")
	}
	root := fmt.Sprintf("drover-exec-test-%d", os.Getpid())
	m, err := cgroups.New(layout, root+"/n1")
	if err != nil {
		t.Fatal(err)
	}
	for _, helper := range []bool{false, true} {
		g, err := m.Create(fmt.Sprintf("job_%v", helper), cgroups.Limits{CPUs: "0"})
		if err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(t.TempDir(), "out")
		v1, v2 := g.Targets()
		p, err := Start(&Spec{Path: "/bin/cat", Args: []string{"/proc/self/cgroup"}, Stdout: out, Umask: -1,
			Helper: helper, CgroupV1Dirs: v1, CgroupV2Dir: v2})
		if err != nil {
			t.Fatal(err)
		}
		if r := p.Wait(); r.ExitCode != 0 || r.Err != nil {
			t.Fatalf("helper=%v: %+v", helper, r)
		}
		b, _ := os.ReadFile(out)
		want := []string{"memory:/" + root + "/n1/" + g.Rel(), "cpuset:/" + root + "/n1/" + g.Rel()}
		if layout == cgroups.LayoutV2 {
			want = []string{"0::/" + root + "/n1/" + g.Rel()}
		}
		if !strings.Contains(string(b), want[0]) || !strings.Contains(string(b), want[len(want)-1]) {
			t.Errorf("helper=%v: program not in its group:\n%s", helper, b)
		}
		if err := g.Delete(); err != nil {
			t.Error(err)
		}
	}
	for _, d := range []string{"memory", "cpuset", "cpu", "cpuacct", "devices", "freezer", "pids", ""} {
		_ = os.Remove(filepath.Join("/sys/fs/cgroup", d, root, "n1"))
		_ = os.Remove(filepath.Join("/sys/fs/cgroup", d, root))
	}
}

// BenchmarkLaunchInCgroup is what confinement adds to a job's launch: a
// job group and its batch-step group created with limits, /bin/true
// started inside, waited for, and both groups killed and removed. Compare
// with BenchmarkLaunchInCgroup/none (the same launch without groups).
func BenchmarkLaunchInCgroup(b *testing.B) {
	layout := cgroups.Detect()
	if os.Geteuid() != 0 || layout == cgroups.LayoutNone {
		b.Skip("needs root and cgroups")
	}
	root := fmt.Sprintf("drover-exec-bench-%d", os.Getpid())
	m, err := cgroups.New(layout, root+"/n1")
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		for _, d := range []string{"memory", "cpuset", "cpu", "cpuacct", "devices", "freezer", "pids", ""} {
			_ = os.Remove(filepath.Join("/sys/fs/cgroup", d, root, "n1"))
			_ = os.Remove(filepath.Join("/sys/fs/cgroup", d, root))
		}
	}()
	out := filepath.Join(b.TempDir(), "out")
	for _, confined := range []bool{false, true} {
		name := map[bool]string{false: "none", true: "cgroups"}[confined]
		b.Run(name, func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				spec := &Spec{Path: "/bin/true", Stdout: out, Umask: -1}
				var job cgroups.Group
				if confined {
					job, err = m.Create(fmt.Sprintf("job_%d", i), cgroups.Limits{CPUs: "0", MemoryBytes: 256 << 20,
						MemSwapBytes: 256 << 20, DenyDevices: []cgroups.Device{{Type: 'c', Major: 195, Minor: 1}}})
					if err != nil {
						b.Fatal(err)
					}
					g, err := m.Create(fmt.Sprintf("job_%d/step_batch", i), cgroups.Limits{InParentFreezer: true}) // as the agent does
					if err != nil {
						b.Fatal(err)
					}
					spec.CgroupV1Dirs, spec.CgroupV2Dir = g.Targets()
				}
				p, err := Start(spec)
				if err != nil {
					b.Fatal(err)
				}
				if r := p.Wait(); r.ExitCode != 0 {
					b.Fatalf("%+v", r)
				}
				if job != nil {
					if err := job.Delete(); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

// TestNoDescriptorLeaksInCgroup: cgroups.EnterThread keeps the v1 tasks
// files it joined open for the next launch; a program started in a job's
// groups (on either path, and again once descriptors are kept) still gets
// only its stdio. A writable tasks descriptor reaching a job would let it
// move any of its processes into another group.
func TestNoDescriptorLeaksInCgroup(t *testing.T) {
	if os.Geteuid() != 0 || cgroups.Detect() != cgroups.LayoutV1 {
		t.Skip("needs root and v1 cgroups (EnterThread)")
	}
	root := fmt.Sprintf("drover-exec-fd-%d", os.Getpid())
	m, err := cgroups.New(cgroups.LayoutV1, root+"/n1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, d := range []string{"memory", "cpuset", "cpu", "cpuacct", "devices", "freezer", "pids", ""} {
			_ = os.Remove(filepath.Join("/sys/fs/cgroup", d, root, "n1"))
			_ = os.Remove(filepath.Join("/sys/fs/cgroup", d, root))
		}
	})
	g, err := m.Create("job_1", cgroups.Limits{MemoryBytes: 64 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := g.Delete(); err != nil {
			t.Error(err)
		}
	}()
	v1, _ := g.Targets()
	for i := range 2 {
		bothPaths(t, func(t *testing.T, helper bool) {
			dir := testDir(t, false)
			spec := scriptSpec(t, helper, dir, "")
			spec.Path, spec.Args = "ls", []string{"/proc/self/fd"}
			spec.Stdout, spec.Stderr = "out", "err"
			spec.CgroupV1Dirs = v1
			if r := run(t, spec); r.Err != nil || r.ExitCode != 0 {
				t.Fatalf("launch %d: %+v: %s", i, r, readFile(t, filepath.Join(dir, "err")))
			}
			// stdin is /dev/null, ls opens the fourth to read the directory.
			if got := strings.Fields(readFile(t, filepath.Join(dir, "out"))); strings.Join(got, " ") != "0 1 2 3" {
				t.Fatalf("launch %d: descriptors %q, want 0 1 2 3", i, got)
			}
		})
	}
	// The case above is the one that matters only if this process does
	// hold a joined group's tasks file open now.
	if !holdsTasksFile(t, root) {
		t.Fatal("no tasks file of the job's groups held open: nothing was tested")
	}
}

func holdsTasksFile(t *testing.T, root string) bool {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if l, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil &&
			strings.Contains(l, "/"+root+"/") && strings.HasSuffix(l, "/tasks") {
			return true
		}
	}
	return false
}
