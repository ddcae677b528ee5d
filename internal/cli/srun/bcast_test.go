package srun

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/drover-hpc/drover/internal/cli"
	"github.com/drover-hpc/drover/internal/cli/bcast"
	"github.com/drover-hpc/drover/internal/cli/clitest"
	"github.com/drover-hpc/drover/internal/jobspec"
	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/stepio"
)

func TestBcastDest(t *testing.T) {
	for _, tc := range []struct{ dest, want string }{
		{"", "/work/slurm_bcast_7_a.out"},
		{"/tmp/mine", "/tmp/mine"},
		{"/tmp/", "/tmp/slurm_bcast_7_a.out"},
		{"sub/copy", "/work/sub/copy"},
		{"sub/", "/work/sub/slurm_bcast_7_a.out"},
	} {
		if got := bcastDest(tc.dest, "/work", 7, "/home/u/a.out"); got != tc.want {
			t.Errorf("bcastDest(%q) = %q, want %q", tc.dest, got, tc.want)
		}
	}
}

func TestFindProgram(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	work := filepath.Join(dir, "work")
	for _, d := range []string{bin, work, filepath.Join(work, "sub")} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p string, mode os.FileMode) {
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), mode); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(bin, "tool"), 0o755)
	write(filepath.Join(bin, "plain"), 0o644) // not executable: skipped
	write(filepath.Join(work, "plain"), 0o755)
	write(filepath.Join(work, "local"), 0o755)
	write(filepath.Join(work, "sub", "x"), 0o755)
	path := "/nonexistent:" + bin
	for _, tc := range []struct{ name, want string }{
		{"tool", filepath.Join(bin, "tool")},
		{"plain", filepath.Join(work, "plain")}, // PATH's copy cannot run; the working directory comes last
		{"local", filepath.Join(work, "local")},
		{"./local", filepath.Join(work, "local")},
		{"sub/x", filepath.Join(work, "sub", "x")},
		{filepath.Join(bin, "tool"), filepath.Join(bin, "tool")},
		{"missing", ""},
		{"sub", ""}, // a directory
		{filepath.Join(bin, "plain"), ""},
	} {
		if got := findProgram(tc.name, work, path); got != tc.want {
			t.Errorf("findProgram(%q) = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// fakeNodes answers Broadcast as a job's agents do: each node dials back,
// reads the file, and answers with refuse[node] ("" accepts). Nodes in
// silent never dial.
type fakeNodes struct {
	clitest.Unimplemented
	nodes  []string
	refuse map[string]string
	silent map[string]bool
	req    chan cli.BroadcastRequest
	got    chan string // the file as each accepting node received it
}

func (f *fakeNodes) Broadcast(_ context.Context, req cli.BroadcastRequest) ([]string, error) {
	f.req <- req
	for i, n := range f.nodes {
		if f.silent[n] {
			continue
		}
		go func() {
			conn, err := stepio.Dial(req.Addr, req.Key, stepio.Hello{Job: uint32(req.Job), Step: -1, Node: i})
			if err != nil {
				return
			}
			defer conn.Close()
			var data []byte
			for {
				t, _, p, err := conn.Recv()
				if err != nil {
					return
				}
				if t == stepio.DataEnd {
					break
				}
				data = append(data, p...)
			}
			if msg := f.refuse[n]; msg != "" {
				_ = conn.Send(stepio.Exit, 0, stepio.FormatExit(1, 0, msg))
				return
			}
			f.got <- string(data)
			_ = conn.Send(stepio.Exit, 0, stepio.FormatExit(0, 0, ""))
		}()
	}
	return f.nodes, nil
}

func newFake(nodes ...string) *fakeNodes {
	return &fakeNodes{nodes: nodes, refuse: map[string]string{}, silent: map[string]bool{},
		req: make(chan cli.BroadcastRequest, 1), got: make(chan string, len(nodes))}
}

func TestBcastExecutable(t *testing.T) {
	work := t.TempDir()
	prog := filepath.Join(work, "a.out")
	if err := os.WriteFile(prog, []byte("program bytes"), 0o755); err != nil {
		t.Fatal(err)
	}
	run := func(f *fakeNodes, bcast string, argv0 string) (string, bool, string) {
		var errb bytes.Buffer
		env := &cli.Env{Prog: "srun", Stderr: &errb, Environ: []string{"PATH=/nonexistent"}}
		opts := &jobspec.Options{Spec: &model.JobSpec{Argv: []string{argv0, "arg"}, WorkDir: work}, Bcast: bcast, BcastSet: true}
		dest, ok := bcastExecutable(context.Background(), env, f, opts, 42)
		return dest, ok, errb.String()
	}

	f := newFake("n1", "n2")
	dest, ok, errs := run(f, "", "a.out")
	if want := filepath.Join(work, "slurm_bcast_42_a.out"); !ok || dest != want || errs != "" {
		t.Fatalf("bcast: %q %v %q, want %q", dest, ok, errs, want)
	}
	req := <-f.req
	if req.Job != 42 || req.Dest != dest || req.Mode != 0o700 || !req.Force || req.Size != int64(len("program bytes")) {
		t.Errorf("request: %+v", req)
	}
	for range 2 {
		if got := <-f.got; got != "program bytes" {
			t.Errorf("a node received %q", got)
		}
	}

	f = newFake("n1", "n2", "n3")
	f.refuse["n2"] = "Permission denied"
	_, ok, errs = run(f, "/tmp/x", "./a.out")
	if ok || !strings.Contains(errs, "srun: error: REQUEST_FILE_BCAST(n2): Permission denied\n") ||
		!strings.Contains(errs, "srun: error: Failed to broadcast '"+prog+"'. Step launch aborted.\n") {
		t.Errorf("a refusing node: %v %q", ok, errs)
	}

	_, ok, errs = run(newFake("n1"), "", "no-such-program")
	if ok || errs != "srun: error: Can not execute no-such-program\n" {
		t.Errorf("missing program: %v %q", ok, errs)
	}
}

func TestBroadcastFileMissingNode(t *testing.T) {
	f := newFake("n1", "n2")
	f.silent["n2"] = true
	failures, err := bcast.Send(context.Background(), f, bcast.File{
		Job: 5, LaunchHost: "127.0.0.1", Data: []byte("x"), Dest: "/tmp/x", Timeout: 300 * time.Millisecond,
	})
	if len(failures) != 0 || err == nil || err.Error() != "1 of 2 nodes did not fetch the file" {
		t.Errorf("one silent node: %v %v", failures, err)
	}
	if got := <-f.got; got != "x" {
		t.Errorf("n1 received %q", got)
	}
}
