package cgroups

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestV1InParentFreezer: a batch step made with InParentFreezer has no
// freezer directory of its own (nor a pids one: no limit there); its
// processes are in its job's freezer group. It is still listed, counted, killed and removed as itself
// (through its memory group), never by freezing or listing its job's
// directory (a step beside it lives on, unfrozen); the job freezes and
// kills it; and a group opened again (an agent's restart) knows where it
// lives.
func TestV1InParentFreezer(t *testing.T) {
	m := testV1(t)
	m1, ok := m.(*v1Manager)
	if !ok {
		t.Skip("v1 only")
	}
	if m1.ctl["freezer"] == "" || m1.ctl["pids"] == "" {
		t.Skip("needs the freezer and pids hierarchies")
	}
	if _, err := m.Create("job_11", Limits{InParentFreezer: true}); err == nil {
		t.Error("a top-level group put in the node's freezer")
	}
	job, err := m.Create("job_11", Limits{MemoryBytes: 256 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer job.Delete()
	batch, err := m.Create("job_11/step_batch", Limits{InParentFreezer: true})
	if err != nil {
		t.Fatal(err)
	}
	own := func(c, rel string) string { return filepath.Join(m1.ctl[c], m1.root, rel) }
	targets, _ := batch.Targets()
	for i, mt := range m1.dirs {
		want := filepath.Join(mt, m1.root, "job_11/step_batch")
		if m1.shareable(mt, Limits{InParentFreezer: true}) {
			want = filepath.Join(mt, m1.root, "job_11")
			if !exists(want, "") { // the job too lives in the node's (cpuset, devices)
				want = filepath.Join(mt, m1.root)
			}
			if _, err := os.Stat(filepath.Join(mt, m1.root, "job_11/step_batch")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s: directory made for a group living in its parent's (%v)", mt, err)
			}
		}
		if targets[i] != want {
			t.Errorf("target %d = %s, want %s", i, targets[i], want)
		}
	}
	if !slices.Contains(targets, own("freezer", "job_11")) {
		t.Errorf("not in the job's freezer group: %v", targets)
	}
	if err := batch.Update(Limits{PidsMax: 10}); err == nil {
		t.Error("a pids limit set on a group in its parent's pids group")
	}
	if err := batch.Freeze(true); !errors.Is(err, ErrNoFreezer) {
		t.Errorf("Freeze of a group in its parent's freezer: %v", err)
	}

	// A step beside the batch step, with a freezer of its own.
	step, err := m.Create("job_11/step_0", Limits{})
	if err != nil {
		t.Fatal(err)
	}
	other := exec.Command("/bin/sleep", "300")
	startIn(t, step, other)
	defer other.Process.Kill()

	// The script and what it left: sh with two children (three threads).
	script := exec.Command("/bin/sh", "-c", "setsid sleep 300 & sleep 300 & wait")
	startIn(t, batch, script)
	defer script.Process.Kill()
	mine := waitProcs(t, batch, 3)
	if slices.Contains(mine, other.Process.Pid) {
		t.Errorf("the batch step lists its job's other step: %v", mine)
	}
	st, err := batch.Stats()
	if err != nil || st.Pids != 3 || st.MemoryCurrent <= 0 {
		t.Errorf("Stats = %+v %v, want 3 pids", st, err)
	}
	if all := waitProcs(t, job, 4); !slices.Contains(all, other.Process.Pid) {
		t.Errorf("job's processes: %v", all)
	}
	// Without a pids limit the job has no pids group of its own either:
	// its threads are counted through its freezer group, steps included.
	if st, err := job.Stats(); err != nil || st.Pids != 4 {
		t.Errorf("job Stats = %+v %v, want 4 pids", st, err)
	}

	// The job freezes the batch step's processes with its own.
	if err := job.Freeze(true); err != nil {
		t.Fatal(err)
	}
	// FROZEN (not FREEZING) once every task of its subtree is.
	waitFreezer(t, own("freezer", "job_11"), "FROZEN")
	if err := job.Freeze(false); err != nil {
		t.Fatal(err)
	}

	// An agent's restart: the group opened again lists the same.
	again, err := m.Open("job_11/step_batch")
	if err != nil {
		t.Fatal(err)
	}
	if p, _ := again.Procs(); len(p) != len(mine) {
		t.Errorf("reopened: Procs = %v, want %v", p, mine)
	}
	if err := again.Freeze(true); !errors.Is(err, ErrNoFreezer) {
		t.Errorf("reopened: Freeze = %v", err)
	}
	if err := again.Delete(); err != nil {
		t.Fatal(err)
	}
	if err := script.Wait(); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Errorf("script: %v", err)
	}
	if p, _ := batch.Procs(); len(p) != 0 {
		t.Errorf("left after Delete: %v", p)
	}
	for _, mt := range m1.dirs {
		if _, err := os.Stat(filepath.Join(mt, m1.root, "job_11/step_batch")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: step left (%v)", mt, err)
		}
	}
	// Its neighbour was neither killed nor left frozen.
	if fz, _ := readString(own("freezer", "job_11"), "freezer.state"); fz != "THAWED" {
		t.Errorf("job's freezer %s after the step's Delete", fz)
	}
	if err := syscall.Kill(other.Process.Pid, 0); err != nil {
		t.Errorf("the other step's process: %v", err)
	}
	if err := job.Delete(); err != nil {
		t.Fatal(err)
	}
	if err := other.Wait(); err == nil {
		t.Error("the job's Delete left its step's process")
	}
	assertGone(t, m, "job_11")
}

// TestV1InParentFreezerJobKill: the job's Kill ends the processes a batch
// step in its freezer left, forks included (the group is frozen while
// listed), though the step itself was never removed.
func TestV1InParentFreezerJobKill(t *testing.T) {
	m := testV1(t)
	if _, ok := m.(*v1Manager); !ok {
		t.Skip("v1 only")
	}
	// The job's pids limit (its own pids group, which the step shares)
	// bounds the loop below however slow this machine is to kill it.
	job, err := m.Create("job_12", Limits{PidsMax: 200})
	if err != nil {
		t.Fatal(err)
	}
	batch, err := m.Create("job_12/step_batch", Limits{InParentFreezer: true})
	if err != nil {
		t.Fatal(err)
	}
	// Forks for as long as it lives.
	cmd := exec.Command("/bin/sh", "-c", "while :; do sleep 300 & done 2>/dev/null")
	startIn(t, batch, cmd)
	defer cmd.Process.Kill()
	waitProcs(t, batch, 3)
	if err := job.Delete(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err == nil {
		t.Error("the loop survived its job's Delete")
	}
	assertGone(t, m, "job_12")
}

// waitFreezer waits (5 s at most) until the freezer group dir reads state.
func waitFreezer(t *testing.T, dir, state string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		s, err := readString(dir, "freezer.state")
		if s == state {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: freezer.state %q %v after 5 s, want %s", dir, s, err, state)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestV1InParentFreezerParentGone: a batch step made while its job's
// freezer directory is gone (the job torn down meanwhile) is refused,
// not put in the node's freezer, where the job's kill would miss it.
func TestV1InParentFreezerParentGone(t *testing.T) {
	m := testV1(t)
	m1, ok := m.(*v1Manager)
	if !ok {
		t.Skip("v1 only")
	}
	if m1.ctl["freezer"] == "" {
		t.Skip("needs the freezer hierarchy")
	}
	job, err := m.Create("job_12", Limits{MemoryBytes: 256 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer job.Delete()
	if err := os.Remove(filepath.Join(m1.ctl["freezer"], m1.root, "job_12")); err != nil {
		t.Fatal(err)
	}
	g, err := m.Create("job_12/step_batch", Limits{InParentFreezer: true})
	if err == nil {
		targets, _ := g.Targets()
		_ = g.Delete()
		t.Fatalf("batch step made without its job's freezer group: targets %v", targets)
	}
}

// TestSubGroupOfGoneParentLeavesNothing: a step made after its job's
// group was removed (the job torn down meanwhile) is refused, and neither
// it nor a new copy of its job's group is left behind: nobody would ever
// remove those (the job's end is past), and a node that runs for months
// would keep a group per such step.
func TestSubGroupOfGoneParentLeavesNothing(t *testing.T) {
	m := testV1(t)
	for _, l := range []Limits{{}, {InParentFreezer: true}, {CPUs: "0"}, {MemoryBytes: 64 << 20}} {
		job, err := m.Create("job_13", Limits{MemoryBytes: 256 << 20})
		if err != nil {
			t.Fatal(err)
		}
		if err := job.Delete(); err != nil {
			t.Fatal(err)
		}
		if g, err := m.Create("job_13/step_0", l); err == nil {
			_ = g.Delete()
			t.Errorf("%+v: a step of a removed job's group was made", l)
		}
		var left []string
		switch m := m.(type) {
		case *v1Manager:
			for _, d := range m.dirs {
				if dir := filepath.Join(d, m.root, "job_13"); exists(dir, "") {
					left = append(left, dir)
				}
			}
		case *v2Manager:
			if dir := filepath.Join(m.base, m.root, "job_13"); exists(dir, "") {
				left = append(left, dir)
			}
		}
		if len(left) > 0 {
			t.Errorf("%+v: left behind: %v", l, left)
			if g, err := m.Open("job_13"); err == nil {
				_ = g.Delete()
			}
			for _, d := range left {
				_ = removeTree(d)
			}
		}
	}
}

// TestV1CreateChild: a sub-group made from its parent group (CreateChild)
// is the one Create makes under the same name, its targets and own
// directories the same, for a fresh job group, a kept one renamed into
// place, and a step with limits of its own; a parent opened again (no
// Create behind it) is looked up as Create does; the child lives in its
// job's freezer and is removed with it.
func TestV1CreateChild(t *testing.T) {
	m := testV1(t)
	m1, ok := m.(*v1Manager)
	if !ok {
		t.Skip("v1 only")
	}
	jl := Limits{MemoryBytes: 256 << 20}
	cases := []struct {
		name string
		l    Limits
	}{{"step_batch", Limits{InParentFreezer: true}}, {"step_0", Limits{}}, {"step_1", Limits{PidsMax: 50}}}
	check := func(job Group, how string) {
		t.Helper()
		for _, c := range cases {
			child, err := m1.CreateChild(job, c.name, c.l)
			if err != nil {
				t.Fatalf("%s: CreateChild %s: %v", how, c.name, err)
			}
			got, _ := child.Targets()
			gotOwn := slices.Clone(child.(*v1Group).own)
			if err := child.Delete(); err != nil {
				t.Fatal(err)
			}
			again, err := m.Create(job.Rel()+"/"+c.name, c.l)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := again.Targets()
			if !slices.Equal(got, want) || !slices.Equal(gotOwn, again.(*v1Group).own) {
				t.Errorf("%s, %s: CreateChild %v %v, Create %v %v", how, c.name, got, gotOwn, want, again.(*v1Group).own)
			}
			if err := again.Delete(); err != nil {
				t.Fatal(err)
			}
		}
	}
	job, err := m.Create("job_21", jl)
	if err != nil {
		t.Fatal(err)
	}
	check(job, "fresh job group")
	// step_1 (pids) left job_21 a directory where the job has none of its
	// own, so that tree is not kept: another job's is.
	if err := job.Delete(); err != nil {
		t.Fatal(err)
	}
	kept, err := m.Create("job_20", jl)
	if err != nil {
		t.Fatal(err)
	}
	// Kept and renamed into place for the next job (the batch step's leaf
	// is what a kept tree may hold).
	if _, err := m1.CreateChild(kept, "step_batch", Limits{InParentFreezer: true}); err != nil {
		t.Fatal(err)
	}
	if !kept.(Recycler).Recycle() {
		t.Fatal("job_20's tree not kept")
	}
	next, err := m.Create("job_22", jl)
	if err != nil {
		t.Fatal(err)
	}
	defer next.Delete()
	if _, err := os.Stat(filepath.Join(m1.ctl["memory"], m1.root, "job_22")); err != nil {
		t.Fatalf("job_22 not made from the kept tree: %v", err)
	}
	check(next, "kept tree renamed")
	opened, err := m.Open("job_22")
	if err != nil {
		t.Fatal(err)
	}
	check(opened, "opened group")

	// The batch step made from its parent lives in the job's freezer and
	// goes with the job.
	batch, err := m1.CreateChild(next, "step_batch", Limits{InParentFreezer: true})
	if err != nil {
		t.Fatal(err)
	}
	targets, _ := batch.Targets()
	if fz := filepath.Join(m1.ctl["freezer"], m1.root, "job_22"); m1.ctl["freezer"] != "" && !slices.Contains(targets, fz) {
		t.Errorf("batch step not in its job's freezer group %s: %v", fz, targets)
	}
	if err := batch.Delete(); err != nil {
		t.Fatal(err)
	}
}
