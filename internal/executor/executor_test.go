//go:build unix

package executor

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// TestMain lets the test binary double as the step helper, the way the
// drover binary does in production.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == StepExecArg {
		os.Exit(StepExecMain(os.Args[2:]))
	}
	if len(os.Args) > 1 && os.Args[1] == SuperviseArg {
		os.Exit(SuperviseMain(os.Args[2:]))
	}
	SelfPath = os.Args[0]
	if !filepath.IsAbs(SelfPath) {
		if p, err := os.Executable(); err == nil {
			SelfPath = p
		}
	}
	os.Exit(m.Run())
}

// testDir is a fresh directory; open enables others to traverse it (for
// steps that run as another user).
func testDir(t testing.TB, open bool) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "drover-exec-*")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if open {
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// launchPaths are the two ways Start launches a program; every behaviour
// test runs on both, since callers must not be able to tell them apart.
var launchPaths = []struct {
	name   string
	helper bool
}{{"direct", false}, {"helper", true}}

// bothPaths runs f as a subtest per launch path; helper is Spec.Helper.
func bothPaths(t *testing.T, f func(t *testing.T, helper bool)) {
	for _, lp := range launchPaths {
		t.Run(lp.name, func(t *testing.T) { f(t, lp.helper) })
	}
}

// scriptSpec writes body as a /bin/sh script into dir and returns a spec
// that runs it as the current user, on the given launch path, with outputs
// discarded.
func scriptSpec(t testing.TB, helper bool, dir, body string) *Spec {
	t.Helper()
	path := filepath.Join(dir, "script.sh")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return &Spec{
		Path:   path,
		Env:    []string{"PATH=/usr/local/bin:/usr/bin:/bin"},
		Dir:    dir,
		UID:    uint32(os.Getuid()),
		GID:    uint32(os.Getgid()),
		Umask:  -1,
		Helper: helper,
	}
}

func run(t *testing.T, spec *Spec) Result {
	t.Helper()
	p, err := Start(spec)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	done := make(chan Result, 1)
	go func() { done <- p.Wait() }()
	select {
	case r := <-done:
		return r
	case <-time.After(30 * time.Second):
		p.Terminate(0)
		t.Fatal("step did not finish within 30s")
		return Result{}
	}
}

// waitFor polls cond every few milliseconds until it holds or 10s pass.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func fileExists(path string) func() bool {
	return func() bool {
		b, err := os.ReadFile(path)
		return err == nil && len(b) > 0
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// alive reports whether pid exists and is not a zombie.
func alive(pid int) bool {
	state, _, ok := procStat(strconv.Itoa(pid))
	return ok && state != 'Z' && state != 'X'
}

func TestExitCodes(t *testing.T) {
	bothPaths(t, func(t *testing.T, helper bool) {
		for _, code := range []int{0, 1, 3, 42, 127, 255} {
			t.Run(strconv.Itoa(code), func(t *testing.T) {
				r := run(t, scriptSpec(t, helper, testDir(t, false), "exit "+strconv.Itoa(code)))
				// 127 from the script itself is an exit code, not a
				// launch failure: the status pipe (helper) or fork/exec
				// (direct) is what tells them apart.
				if r.Err != nil || r.ExitCode != code || r.Signal != 0 {
					t.Fatalf("got %+v, want exit %d", r, code)
				}
			})
		}
	})
}

func TestKilledBySignal(t *testing.T) {
	bothPaths(t, func(t *testing.T, helper bool) {
		r := run(t, scriptSpec(t, helper, testDir(t, false), "kill -9 $$"))
		if r.Err != nil || r.Signal != int(syscall.SIGKILL) || r.ExitCode != 0 {
			t.Fatalf("got %+v, want signal 9", r)
		}
	})
}

func TestSignalReachesGroup(t *testing.T) {
	bothPaths(t, func(t *testing.T, helper bool) {
		dir := testDir(t, false)
		// The child, not the shell, records the signal: proof that the
		// whole group gets it.
		spec := scriptSpec(t, helper, dir, `sh -c 'trap "echo usr1 > got; exit 0" USR1; echo x > ready1; while :; do sleep 0.05; done' &
trap '' USR1
echo x > ready2
wait`)
		p, err := Start(spec)
		if err != nil {
			t.Fatal(err)
		}
		waitFor(t, "child ready", fileExists(filepath.Join(dir, "ready1")))
		waitFor(t, "shell ready", fileExists(filepath.Join(dir, "ready2")))
		if err := p.Signal(syscall.SIGUSR1); err != nil {
			t.Fatal(err)
		}
		r := p.Wait()
		if r.Err != nil || r.ExitCode != 0 {
			t.Fatalf("got %+v", r)
		}
		if got := readFile(t, filepath.Join(dir, "got")); got != "usr1\n" {
			t.Fatalf("child saw %q", got)
		}
		if err := p.Signal(syscall.SIGTERM); !errors.Is(err, os.ErrProcessDone) {
			t.Fatalf("Signal after Wait: %v, want ErrProcessDone", err)
		}
	})
}

func TestTerminateGraceful(t *testing.T) {
	bothPaths(t, func(t *testing.T, helper bool) {
		dir := testDir(t, false)
		spec := scriptSpec(t, helper, dir, "echo x > ready; exec sleep 1000")
		p, err := Start(spec)
		if err != nil {
			t.Fatal(err)
		}
		waitFor(t, "ready", fileExists(filepath.Join(dir, "ready")))
		start := time.Now()
		p.Terminate(time.Minute)
		r := p.Wait()
		if r.Signal != int(syscall.SIGTERM) {
			t.Fatalf("got %+v, want SIGTERM", r)
		}
		if d := time.Since(start); d > 30*time.Second {
			t.Fatalf("graceful stop took %v: escalation should not have been needed", d)
		}
	})
}

func TestTerminateEscalatesToKill(t *testing.T) {
	bothPaths(t, func(t *testing.T, helper bool) {
		dir := testDir(t, false)
		spec := scriptSpec(t, helper, dir, "trap '' TERM; echo x > ready; while :; do sleep 0.05; done")
		p, err := Start(spec)
		if err != nil {
			t.Fatal(err)
		}
		waitFor(t, "ready", fileExists(filepath.Join(dir, "ready")))
		const killWait = 300 * time.Millisecond
		start := time.Now()
		p.Terminate(killWait)
		r := p.Wait()
		if r.Signal != int(syscall.SIGKILL) {
			t.Fatalf("got %+v, want SIGKILL", r)
		}
		if d := time.Since(start); d < killWait {
			t.Fatalf("SIGKILL came after %v, before KillWait %v", d, killWait)
		}
	})
}

func TestLeftoverProcessesKilled(t *testing.T) {
	bothPaths(t, func(t *testing.T, helper bool) {
		dir := testDir(t, false)
		// One direct child and one orphaned grandchild, both in the group.
		spec := scriptSpec(t, helper, dir, `sleep 1000 & echo $! > pid1
sh -c 'sleep 1000 & echo $! > pid2'
exit 0`)
		r := run(t, spec)
		if r.Err != nil || r.ExitCode != 0 {
			t.Fatalf("got %+v", r)
		}
		for _, f := range []string{"pid1", "pid2"} {
			pid, err := strconv.Atoi(strings.TrimSpace(readFile(t, filepath.Join(dir, f))))
			if err != nil {
				t.Fatal(err)
			}
			if alive(pid) {
				syscall.Kill(pid, syscall.SIGKILL)
				t.Errorf("%s: process %d survived the step", f, pid)
			}
		}
	})
}

// A step that leaves nothing behind costs Wait one kill(2), no /proc scan.
func TestKillGroupCommonCaseNoScan(t *testing.T) {
	var scans atomic.Int32
	old := groupHasLiveMember
	groupHasLiveMember = func(pgid int) bool {
		scans.Add(1)
		return old(pgid)
	}
	defer func() { groupHasLiveMember = old }()
	bothPaths(t, func(t *testing.T, helper bool) {
		scans.Store(0)
		spec := scriptSpec(t, helper, testDir(t, false), "sleep 0.01 & wait; exit 0")
		if r := run(t, spec); r.Err != nil || r.ExitCode != 0 {
			t.Fatalf("got %+v", r)
		}
		if n := scans.Load(); n != 0 {
			t.Fatalf("%d /proc scans for an empty group", n)
		}
	})
}

func TestOutputFiles(t *testing.T) {
	const body = "echo out; echo err >&2"
	tests := []struct {
		name             string
		append           bool
		same             bool // Stderr names the Stdout file
		sameViaOtherName bool // ... through a different (relative) name
		wantOut, wantErr string
	}{
		{name: "truncate", wantOut: "out\n", wantErr: "err\n"},
		{name: "append", append: true, wantOut: "old\nout\n", wantErr: "old\nerr\n"},
		{name: "same file", same: true, wantOut: "out\nerr\n"},
		{name: "same file append", same: true, append: true, wantOut: "old\nout\nerr\n"},
		{name: "same file other name", sameViaOtherName: true, wantOut: "out\nerr\n"},
	}
	bothPaths(t, func(t *testing.T, helper bool) {
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				dir := testDir(t, false)
				spec := scriptSpec(t, helper, dir, body)
				spec.Stdout = filepath.Join(dir, "job.out")
				spec.Stderr = filepath.Join(dir, "job.err")
				switch {
				case tc.same:
					spec.Stderr = spec.Stdout
				case tc.sameViaOtherName:
					spec.Stderr = "./job.out"
				}
				spec.Append = tc.append
				for _, f := range []string{spec.Stdout, filepath.Join(dir, "job.err")} {
					if err := os.WriteFile(f, []byte("old\n"), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				if r := run(t, spec); r.Err != nil || r.ExitCode != 0 {
					t.Fatalf("got %+v", r)
				}
				if got := readFile(t, spec.Stdout); got != tc.wantOut {
					t.Errorf("stdout file = %q, want %q", got, tc.wantOut)
				}
				if tc.wantErr != "" {
					if got := readFile(t, spec.Stderr); got != tc.wantErr {
						t.Errorf("stderr file = %q, want %q", got, tc.wantErr)
					}
				}
			})
		}
	})
}

// FIFOs as stdio files: opening one blocks until the other end shows up.
// Start must not (the direct path hands such launches to the helper).
func TestFIFOStdio(t *testing.T) {
	bothPaths(t, func(t *testing.T, helper bool) {
		dir := testDir(t, false)
		in, out := filepath.Join(dir, "in.fifo"), filepath.Join(dir, "out.fifo")
		for _, f := range []string{in, out} {
			if err := syscall.Mkfifo(f, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		spec := scriptSpec(t, helper, dir, "cat")
		spec.Stdin, spec.Stdout = in, out
		started := make(chan Process, 1)
		go func() {
			p, err := Start(spec)
			if err != nil {
				t.Error(err)
			}
			started <- p
		}()
		var p Process
		select {
		case p = <-started:
		case <-time.After(10 * time.Second):
			t.Fatal("Start blocked on a FIFO")
		}
		if p == nil {
			return
		}
		// Now play the other ends.
		go func() {
			if err := os.WriteFile(in, []byte("through fifos\n"), 0); err != nil {
				t.Error(err)
			}
		}()
		got, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if r := p.Wait(); r.Err != nil || r.ExitCode != 0 {
			t.Fatalf("got %+v", r)
		}
		if string(got) != "through fifos\n" {
			t.Fatalf("got %q", got)
		}
	})
}

func TestStdinArgsEnv(t *testing.T) {
	bothPaths(t, func(t *testing.T, helper bool) {
		dir := testDir(t, false)
		spec := scriptSpec(t, helper, dir, `read line; echo "$line|$1|$2|$FOO|$(pwd)"`)
		spec.Args = []string{"a b", "c"}
		spec.Env = append(spec.Env, "FOO=bar")
		spec.Stdin = "in.txt" // relative: resolved in Dir
		spec.Stdout = "out.txt"
		if err := os.WriteFile(filepath.Join(dir, "in.txt"), []byte("hello\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if r := run(t, spec); r.Err != nil || r.ExitCode != 0 {
			t.Fatalf("got %+v", r)
		}
		out := filepath.Join(dir, "out.txt")
		if got, want := readFile(t, out), "hello|a b|c|bar|"+dir+"\n"; got != want {
			t.Errorf("output %q, want %q", got, want)
		}
	})
}

// Only the program's three stdio descriptors reach it (ls opens the fourth
// to read the directory).
func TestNoDescriptorLeaks(t *testing.T) {
	bothPaths(t, func(t *testing.T, helper bool) {
		dir := testDir(t, false)
		spec := scriptSpec(t, helper, dir, "")
		spec.Path, spec.Args = "ls", []string{"/proc/self/fd"}
		spec.Stdin = "in"
		spec.Stdout, spec.Stderr = "out", "err"
		if err := os.WriteFile(filepath.Join(dir, "in"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if r := run(t, spec); r.Err != nil || r.ExitCode != 0 {
			t.Fatalf("got %+v: %s", r, readFile(t, filepath.Join(dir, "err")))
		}
		if got := strings.Fields(readFile(t, filepath.Join(dir, "out"))); strings.Join(got, " ") != "0 1 2 3" {
			t.Fatalf("descriptors %q, want 0 1 2 3", got)
		}
	})
}

// Umask is honoured by the helper only (the direct path leaves the agent's).
func TestUmaskHelper(t *testing.T) {
	dir := testDir(t, false)
	spec := scriptSpec(t, true, dir, "echo x")
	spec.Stdout = "out.txt"
	spec.Umask = 0o077
	if r := run(t, spec); r.Err != nil || r.ExitCode != 0 {
		t.Fatalf("got %+v", r)
	}
	st, err := os.Stat(filepath.Join(dir, "out.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600 under umask 077", st.Mode().Perm())
	}
}

// With SwapUmask (the supervisor) the direct path gives the program its
// umask too, and the process keeps its own.
func TestUmaskSwapDirect(t *testing.T) {
	SwapUmask = true
	defer func() { SwapUmask = false }()
	want := 0o077
	if ownUmask == want {
		want = 0o027
	}
	dir := testDir(t, false)
	spec := scriptSpec(t, false, dir, "umask > umask.txt; echo x")
	spec.Stdout = "out.txt"
	spec.Umask = want
	if r := run(t, spec); r.Err != nil || r.ExitCode != 0 {
		t.Fatalf("got %+v", r)
	}
	if got := strings.TrimSpace(readFile(t, filepath.Join(dir, "umask.txt"))); got != fmt.Sprintf("%04o", want) {
		t.Errorf("the program's umask is %s, want %04o", got, want)
	}
	st, err := os.Stat(filepath.Join(dir, "out.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != os.FileMode(0o666&^want) {
		t.Errorf("output mode %v, want %v", st.Mode().Perm(), os.FileMode(0o666&^want))
	}
	own := syscall.Umask(0)
	syscall.Umask(own)
	if own != ownUmask {
		t.Errorf("the process's umask is %04o after the launch, want %04o", own, ownUmask)
	}
}

// PidEnv is honoured by the helper only: the direct path leaves Env as is.
func TestPidEnv(t *testing.T) {
	bothPaths(t, func(t *testing.T, helper bool) {
		dir := testDir(t, false)
		spec := scriptSpec(t, helper, dir, `echo "$SLURM_TASK_PID $$"`)
		spec.Env = append(spec.Env, "SLURM_TASK_PID=stale")
		spec.PidEnv = []string{"SLURM_TASK_PID"}
		spec.Stdout = "out"
		p, err := Start(spec)
		if err != nil {
			t.Fatal(err)
		}
		if r := p.Wait(); r.Err != nil || r.ExitCode != 0 {
			t.Fatalf("got %+v", r)
		}
		want := fmt.Sprintf("%d %d\n", p.Pid(), p.Pid())
		if !helper {
			want = fmt.Sprintf("stale %d\n", p.Pid())
		}
		if got := readFile(t, filepath.Join(dir, "out")); got != want {
			t.Fatalf("got %q, want %q", got, want)
		}
	})
}

func TestPathSearch(t *testing.T) {
	bothPaths(t, func(t *testing.T, helper bool) {
		var out bytes.Buffer
		spec := &Spec{
			Path: "sh", Args: []string{"-c", "echo $0"},
			Env: []string{"PATH=/nonexistent:/usr/bin:/bin"},
			UID: uint32(os.Getuid()), GID: uint32(os.Getgid()), Umask: -1,
			StdoutW: &out, Helper: helper,
		}
		if r := run(t, spec); r.Err != nil || r.ExitCode != 0 {
			t.Fatalf("got %+v", r)
		}
		if out.String() != "sh\n" {
			t.Fatalf("argv[0] = %q, want sh", out.String())
		}
	})
}

// Candidates that cannot be executed are passed over; a relative PATH entry
// is relative to Dir; with nothing runnable, "permission denied" beats "not
// found".
func TestPathSearchCandidates(t *testing.T) {
	bothPaths(t, func(t *testing.T, helper bool) {
		dir := testDir(t, false)
		for _, d := range []string{"a", "b/tool", "c", "d"} {
			if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		write := func(name, body string, mode os.FileMode) {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(body), mode); err != nil {
				t.Fatal(err)
			}
		}
		write("a/tool", "#!/bin/sh\necho a\n", 0o644) // not executable
		// b/tool is a directory
		write("c/tool", "#!/bin/sh\necho c\n", 0o755)
		write("d/other", "#!/bin/sh\necho d\n", 0o644)

		var out syncBuffer
		spec := scriptSpec(t, helper, dir, "")
		spec.Path = "tool"
		spec.Env = []string{"PATH=" + filepath.Join(dir, "a") + ":b:c"}
		spec.StdoutW = &out
		if r := run(t, spec); r.Err != nil || r.ExitCode != 0 || out.String() != "c\n" {
			t.Fatalf("got %+v, output %q, want c/tool run", r, out.String())
		}

		spec = scriptSpec(t, helper, dir, "")
		spec.Path = "other"
		spec.Env = []string{"PATH=/nonexistent:d"}
		r := run(t, spec)
		if r.Err == nil || r.Err.Error() != "cannot execute other: permission denied" {
			t.Fatalf("got %+v, want permission denied", r)
		}
	})
}

func TestLaunchFailures(t *testing.T) {
	dir := testDir(t, false)
	notExec := filepath.Join(dir, "notexec.sh")
	if err := os.WriteFile(notExec, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		mutate   func(*Spec)
		wantErr  string
		needRoot bool
	}{
		{name: "chdir", mutate: func(s *Spec) { s.Dir = "/nonexistent/dir" }, wantErr: "cannot change directory to /nonexistent/dir: no such file or directory"},
		{name: "chdir not a dir", mutate: func(s *Spec) { s.Dir = notExec }, wantErr: "cannot change directory to " + notExec + ": not a directory"},
		{name: "missing program", mutate: func(s *Spec) { s.Path = filepath.Join(dir, "missing") }, wantErr: "no such file or directory"},
		{name: "not executable", mutate: func(s *Spec) { s.Path = notExec }, wantErr: "permission denied"},
		{name: "not in PATH", mutate: func(s *Spec) { s.Path = "no-such-command-xyz" }, wantErr: "cannot execute no-such-command-xyz: command not found"},
		{name: "stdin missing", mutate: func(s *Spec) { s.Stdin = filepath.Join(dir, "nope") }, wantErr: "cannot open input file " + filepath.Join(dir, "nope") + ": no such file or directory"},
		{name: "output dir missing", mutate: func(s *Spec) { s.Stdout = "/nonexistent/out" }, wantErr: "cannot open output file /nonexistent/out: no such file or directory"},
		{name: "too many groups", mutate: func(s *Spec) {
			s.UID = 1 // not the caller: the switch happens
			s.Groups = make([]uint32, 1<<16+1)
		}, wantErr: "cannot set supplementary groups", needRoot: true},
	}
	bothPaths(t, func(t *testing.T, helper bool) {
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				if tc.needRoot && os.Geteuid() != 0 {
					t.Skip("needs root to switch users")
				}
				spec := scriptSpec(t, helper, testDir(t, false), "echo should not run")
				errFile := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+fmt.Sprint(helper)+".err")
				spec.Stderr = errFile
				tc.mutate(spec)
				p, err := Start(spec)
				if err != nil {
					t.Fatalf("Start: %v", err)
				}
				r := p.Wait()
				if r.Err == nil || !strings.Contains(r.Err.Error(), tc.wantErr) {
					t.Fatalf("got %+v, want launch error containing %q", r, tc.wantErr)
				}
				if r.ExitCode != launchFailedStatus || r.Signal != 0 {
					t.Errorf("exit code %d signal %d, want %d", r.ExitCode, r.Signal, launchFailedStatus)
				}
				if err := p.Signal(syscall.SIGTERM); !errors.Is(err, os.ErrProcessDone) {
					t.Errorf("Signal after Wait: %v, want ErrProcessDone", err)
				}
				// The user finds the reason in the job's own stderr file
				// (not after a failed privilege switch: no file is
				// opened as root).
				if tc.name != "output dir missing" && tc.name != "too many groups" {
					if got := readFile(t, errFile); !strings.Contains(got, stderrPrefix+r.Err.Error()) {
						t.Errorf("stderr file %q lacks the launch error", got)
					}
				}
			})
		}
	})
}

// syncBuffer is a bytes.Buffer safe for the copier goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestStreaming(t *testing.T) {
	bothPaths(t, func(t *testing.T, helper bool) {
		t.Run("separate", func(t *testing.T) {
			var out, errb syncBuffer
			spec := scriptSpec(t, helper, testDir(t, false), "cat; echo err >&2")
			spec.StdinR = strings.NewReader("line1\nline2\n")
			spec.StdoutW, spec.StderrW = &out, &errb
			spec.Stdout = "/should/be/ignored" // the writer wins over the path
			if r := run(t, spec); r.Err != nil || r.ExitCode != 0 {
				t.Fatalf("got %+v", r)
			}
			if out.String() != "line1\nline2\n" || errb.String() != "err\n" {
				t.Fatalf("stdout %q stderr %q", out.String(), errb.String())
			}
		})
		t.Run("shared writer keeps order", func(t *testing.T) {
			var all syncBuffer
			spec := scriptSpec(t, helper, testDir(t, false), "for i in 1 2 3; do echo o$i; echo e$i >&2; done")
			spec.StdoutW, spec.StderrW = &all, &all
			if r := run(t, spec); r.Err != nil || r.ExitCode != 0 {
				t.Fatalf("got %+v", r)
			}
			if got, want := all.String(), "o1\ne1\no2\ne2\no3\ne3\n"; got != want {
				t.Fatalf("got %q, want %q", got, want)
			}
		})
		t.Run("background child holding the pipe", func(t *testing.T) {
			var out syncBuffer
			spec := scriptSpec(t, helper, testDir(t, false), "sleep 1000 & echo done")
			spec.StdoutW = &out
			start := time.Now()
			if r := run(t, spec); r.Err != nil || r.ExitCode != 0 {
				t.Fatalf("got %+v", r)
			}
			if out.String() != "done\n" {
				t.Fatalf("got %q", out.String())
			}
			if d := time.Since(start); d >= IODrainTimeout {
				t.Fatalf("Wait took %v: the pipe holder was not killed", d)
			}
		})
		for _, tc := range []struct {
			name   string
			mutate func(*Spec)
		}{
			{"chdir", func(s *Spec) { s.Dir = "/nonexistent" }},
			{"exec", func(s *Spec) { s.Path = "/nonexistent/prog" }},
			{"not in PATH", func(s *Spec) { s.Path = "no-such-command-xyz" }},
		} {
			t.Run("launch error reaches the stream/"+tc.name, func(t *testing.T) {
				var errb syncBuffer
				spec := scriptSpec(t, helper, testDir(t, false), "true")
				tc.mutate(spec)
				spec.StderrW = &errb
				spec.StdinR = strings.NewReader("unread\n")
				r := run(t, spec)
				if r.Err == nil || errb.String() != stderrPrefix+r.Err.Error()+"\n" {
					t.Fatalf("result %+v, stream %q", r, errb.String())
				}
			})
		}
	})
}

func TestConcurrentWait(t *testing.T) {
	bothPaths(t, func(t *testing.T, helper bool) {
		for _, body := range []string{"exit 7", ""} {
			spec := scriptSpec(t, helper, testDir(t, false), body)
			want := Result{ExitCode: 7}
			if body == "" {
				spec.Dir = "/nonexistent" // a launch failure
				want = Result{ExitCode: launchFailedStatus}
			}
			p, err := Start(spec)
			if err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			results := make([]Result, 4)
			for i := range results {
				wg.Add(1)
				go func() {
					defer wg.Done()
					results[i] = p.Wait()
				}()
			}
			wg.Wait()
			for _, r := range results {
				if r.ExitCode != want.ExitCode || (r.Err != nil) != (body == "") || r.Err != results[0].Err {
					t.Fatalf("got %+v, want exit %d", r, want.ExitCode)
				}
			}
		}
	})
}

func TestStartErrors(t *testing.T) {
	bothPaths(t, func(t *testing.T, helper bool) {
		if _, err := Start(&Spec{Helper: helper}); err == nil {
			t.Fatal("empty path accepted")
		}
	})
	old := SelfPath
	SelfPath = "/nonexistent/helper"
	defer func() { SelfPath = old }()
	if _, err := Start(&Spec{Path: "/bin/true", Umask: -1, Helper: true}); err == nil {
		t.Fatal("missing helper binary accepted")
	}
	// The direct path does not need it.
	if r := run(t, &Spec{Path: "/bin/true", Umask: -1, UID: uint32(os.Getuid()), GID: uint32(os.Getgid())}); r.Err != nil || r.ExitCode != 0 {
		t.Fatalf("direct path without a helper binary: %+v", r)
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("consumer gone") }

func TestFailingWriterDoesNotBlockStep(t *testing.T) {
	bothPaths(t, func(t *testing.T, helper bool) {
		// 1 MiB is far more than a pipe buffers: without draining the
		// program would block forever on write.
		spec := scriptSpec(t, helper, testDir(t, false), "head -c 1048576 /dev/zero; exit 5")
		spec.StdoutW = failingWriter{}
		if r := run(t, spec); r.Err != nil || r.ExitCode != 5 {
			t.Fatalf("got %+v", r)
		}
	})
}

func TestHelperRefusesManualRun(t *testing.T) {
	cmd := exec.Command(SelfPath, StepExecArg)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != launchFailedStatus {
		t.Fatalf("err %v, want exit %d", err, launchFailedStatus)
	}
	if !strings.Contains(string(out), "started by the node agent only") {
		t.Fatalf("output %q", out)
	}
}

// BenchmarkStartWait measures a trivial step end to end, Start+Wait of
// /bin/true with stdout to a file, on both paths; "user" runs it as another
// user (the direct path then switches the thread's filesystem identity).
func BenchmarkStartWait(b *testing.B) {
	dir := testDir(b, true)
	users := []string{"self"}
	if os.Geteuid() == 0 {
		users = append(users, "user")
	}
	for _, lp := range launchPaths {
		for _, who := range users {
			b.Run(lp.name+"/"+who, func(b *testing.B) {
				spec := &Spec{
					Path: "/bin/true", Env: []string{"PATH=/usr/bin:/bin"}, Dir: dir,
					UID: uint32(os.Getuid()), GID: uint32(os.Getgid()), Umask: -1,
					Stdout: filepath.Join(dir, "bench.out"), Helper: lp.helper,
				}
				if who == "user" {
					spec.UID, spec.GID = needTestUser(b)
					spec.Dir = filepath.Join(dir, "user")
					if err := os.Mkdir(spec.Dir, 0o755); err != nil && !os.IsExist(err) {
						b.Fatal(err)
					}
					if err := os.Chown(spec.Dir, int(spec.UID), int(spec.GID)); err != nil {
						b.Fatal(err)
					}
					spec.Stdout = "bench.out"
				}
				b.ReportAllocs()
				self0, children0 := cpuTime(syscall.RUSAGE_SELF), cpuTime(syscall.RUSAGE_CHILDREN)
				for b.Loop() {
					p, err := Start(spec)
					if err != nil {
						b.Fatal(err)
					}
					if r := p.Wait(); r.Err != nil || r.ExitCode != 0 {
						b.Fatalf("got %+v", r)
					}
				}
				// CPU, not wall time, is what limits steps per second
				// on a busy node: the agent's, and the child's (the
				// helper's Go start-up, then the program's).
				n := float64(b.N)
				b.ReportMetric(float64(cpuTime(syscall.RUSAGE_SELF)-self0)/n, "agent-cpu-ns/op")
				b.ReportMetric(float64(cpuTime(syscall.RUSAGE_CHILDREN)-children0)/n, "child-cpu-ns/op")
			})
		}
	}
}

// cpuTime is the user+system CPU time of getrusage(who).
func cpuTime(who int) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(who, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Launches that keep the process's umask never fork while another launch
// has it swapped: run side by side, each program sees its own umask.
func TestUmaskSwapConcurrent(t *testing.T) {
	SwapUmask = true
	defer func() { SwapUmask = false }()
	other := 0o077
	if ownUmask == other {
		other = 0o027
	}
	// Every script is written before any launch forks: a fork while a
	// script is open for writing would make its exec fail (ETXTBSY).
	specs, dirs := make([]*Spec, 80), make([]string, 80)
	for i := range specs {
		dir := filepath.Join(testDir(t, false), strconv.Itoa(i))
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		specs[i], dirs[i] = scriptSpec(t, false, dir, "umask > umask.txt"), dir
	}
	var wg sync.WaitGroup
	errs := make(chan error, 80)
	for i := range specs {
		dir, name, spec := dirs[i], "umask.txt", specs[i]
		wg.Add(1)
		go func() {
			defer wg.Done()
			want := ownUmask
			if i%2 == 0 {
				spec.Umask, want = other, other
			} else {
				spec.Umask = -1
			}
			p, err := Start(spec)
			if err != nil {
				errs <- err
				return
			}
			if r := p.Wait(); r.Err != nil || r.ExitCode != 0 {
				errs <- fmt.Errorf("launch %d: %+v", i, r)
				return
			}
			b, _ := os.ReadFile(filepath.Join(dir, name))
			if got := strings.TrimSpace(string(b)); got != fmt.Sprintf("%04o", want) {
				errs <- fmt.Errorf("launch %d: umask %s, want %04o", i, got, want)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
