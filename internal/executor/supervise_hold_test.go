//go:build linux

package executor

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestSupervisorHeldResult: a held program's result reaches its agent in
// the "ended" message, not through its directory; an agent that goes
// without forgetting it leaves it on disk for the next one, and a
// forgotten one is gone for good.
func TestSupervisorHeldResult(t *testing.T) {
	dir := testDir(t, false)
	sock := filepath.Join(dir, "super.sock")
	spec := func(code string) *Spec {
		return &Spec{Path: "/bin/sh", Args: []string{"-c", "exit " + code}, Env: []string{"PATH=/usr/bin:/bin"},
			Dir: dir, Stdout: os.DevNull, Stderr: os.DevNull, Umask: -1}
	}
	mkjob := func(name string) string {
		job := filepath.Join(dir, name)
		if err := os.Mkdir(job, 0o700); err != nil {
			t.Fatal(err)
		}
		return job
	}
	noResultFile := func(job string) {
		t.Helper()
		if _, err := os.Stat(filepath.Join(job, "result.json")); err == nil {
			t.Errorf("%s: result.json written for a held result the agent had not given up", job)
		}
	}
	sup, err := ConnectSupervisor(sock)
	if err != nil {
		t.Fatal(err)
	}
	kept, forgot := mkjob("job1"), mkjob("job2")
	p1, err := sup.StartHeld(kept, spec("5"))
	if err != nil {
		t.Fatal(err)
	}
	p2, err := sup.StartHeld(forgot, spec("6"))
	if err != nil {
		t.Fatal(err)
	}
	if res := p1.Wait(); res.ExitCode != 5 || res.Err != nil {
		t.Errorf("held result: %+v", res)
	}
	if res := p2.Wait(); res.ExitCode != 6 || res.Err != nil {
		t.Errorf("held result: %+v", res)
	}
	noResultFile(kept)
	noResultFile(forgot)
	sup.Forget(forgot)
	sup.Close()

	// The next agent is served once the last one's results are settled
	// (ConnectSupervisor returns after its first reply).
	sup2, err := ConnectSupervisor(sock)
	if err != nil {
		t.Fatal(err)
	}
	defer sup2.Close()
	p, err := sup2.Reattach(kept)
	if err != nil {
		t.Fatalf("a result its agent never forgot is lost: %v", err)
	}
	if res := p.Wait(); res.ExitCode != 5 || res.Err != nil {
		t.Errorf("result taken back from disk: %+v", res)
	}
	if _, err := sup2.Reattach(forgot); err == nil {
		t.Error("a forgotten result came back")
	}
	noResultFile(forgot)

	// A held program that ends while no agent listens writes its result.
	late := mkjob("job3")
	if _, err := sup2.StartHeld(late, &Spec{Path: "/bin/sh", Args: []string{"-c", "sleep 0.3; exit 7"},
		Env: []string{"PATH=/usr/bin:/bin"}, Dir: dir, Stdout: os.DevNull, Stderr: os.DevNull, Umask: -1}); err != nil {
		t.Fatal(err)
	}
	sup2.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(late, "result.json")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no result.json 10 s after a held program ended with no agent connected")
		}
		time.Sleep(20 * time.Millisecond)
	}
	sup4, err := ConnectSupervisor(sock)
	if err != nil {
		t.Fatal(err)
	}
	defer sup4.Close()
	p5, err := sup4.Reattach(late)
	if err != nil {
		t.Fatal(err)
	}
	if res := p5.Wait(); res.ExitCode != 7 {
		t.Errorf("result of a held program that ended with no agent: %+v", res)
	}
}
