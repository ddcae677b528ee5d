//go:build linux

package executor

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestSuperBinRoundTrip(t *testing.T) {
	umask := 0o27
	msgs := []*superMsg{
		{Op: "start", Dir: "/spool/super/job7", Pipes: [3]bool{true, false, true}, Spec: &superSpec{
			Path: "/spool/job7/slurm_script", Args: []string{"a", "", "b c"},
			Env: []string{"A=1", "NL=x\ny", "HTML=<&>", "BAD=\xff\xfe", "Q=\"'\\"},
			Dir: "/home/u", UID: 1000, GID: 1000, Groups: []uint32{1000, 4294967295}, Stdin: "/dev/null",
			Stdout: "/o", Stderr: "/e", Append: true, Umask: &umask, CgV1: []string{"/sys/fs/cgroup/memory/x"},
			CgV2: "/sys/fs/cgroup/x", Hold: true}},
		{Op: "ended", Dir: "d", Result: &superResult{ExitCode: -1, Signal: 9, Err: "boom"}, PGID: -5},
		{Op: "running", Dirs: []string{"a", "b"}},
		{Op: "list"},
	}
	for _, m := range msgs {
		b := encodeSuperBin(m)
		if b[0] != superBinTag {
			t.Fatalf("tag %x", b[0])
		}
		got, err := decodeSuperBin(b)
		if err != nil {
			t.Fatalf("%s: %v", m.Op, err)
		}
		if !reflect.DeepEqual(&got, m) {
			t.Fatalf("round trip:\n got %+v %+v\nwant %+v %+v", got, got.Spec, m, m.Spec)
		}
		// Every cut, and any trailing byte, is refused, never a panic.
		for i := 0; i < len(b); i++ {
			if _, err := decodeSuperBin(b[:i]); err == nil {
				t.Fatalf("%s: cut at %d of %d accepted", m.Op, i, len(b))
			}
		}
		if _, err := decodeSuperBin(append(b[:len(b):len(b)], 0)); err == nil {
			t.Fatalf("%s: trailing byte accepted", m.Op)
		}
		// Any byte changed: an error or some message, never a panic.
		for i := 2; i < len(b); i++ {
			c := append([]byte(nil), b...)
			c[i] ^= 0xff
			_, _ = decodeSuperBin(c)
		}
	}
	if _, err := decodeSuperBin([]byte{superBinTag, superBinVersion + 1}); err == nil {
		t.Fatal("another version accepted")
	}
}

// TestSupervisorStartForms: a supervisor says it reads the binary form,
// the agent's side then sends "start" in it, and an environment JSON would
// mangle (bytes that are not UTF-8) reaches the program as it was; a
// "start" in JSON (an agent of an earlier build) still works.
func TestSupervisorStartForms(t *testing.T) {
	dir := testDir(t, false)
	sup, err := ConnectSupervisor(filepath.Join(dir, "super.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer sup.Close()
	if !sup.bin {
		t.Fatal("the supervisor did not say it reads the binary form")
	}
	for _, bin := range []bool{true, false} {
		sup.mu.Lock()
		sup.bin = bin
		sup.mu.Unlock()
		name := map[bool]string{true: "bin", false: "json"}[bin]
		job := filepath.Join(dir, "job-"+name)
		if err := os.Mkdir(job, 0o700); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, name+".out")
		val := "x\xffy<&>\"\n" + name
		spec := &Spec{Path: "/bin/sh", Args: []string{"-c", `printf '%s' "$V"`},
			Env: []string{"PATH=/usr/bin:/bin", "V=" + val}, Dir: dir, Stdout: out, Stderr: out, Umask: -1}
		p, err := sup.StartHeld(job, spec)
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan Result, 1)
		go func() { done <- p.Wait() }()
		select {
		case res := <-done:
			if res.Err != nil || res.ExitCode != 0 {
				t.Fatalf("%s: %+v", name, res)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: the program did not end within 30 s", name)
		}
		sup.Forget(job)
		b, _ := os.ReadFile(out)
		want := val
		if !bin {
			want = strings.ReplaceAll(val, "\xff", "\ufffd") // JSON's reading of a byte that is not UTF-8
		}
		if string(b) != want {
			t.Fatalf("%s: the program saw %q, want %q", name, b, want)
		}
	}
}

// BenchmarkSuperStart: one "start" written and read, JSON against the
// binary form, with an environment of 75 variables (sbatch exports the
// caller's).
func BenchmarkSuperStart(b *testing.B) {
	env := os.Environ()
	for i := len(env); i < 75; i++ {
		env = append(env, "SLURM_VARIABLE_"+strings.Repeat("x", i%20)+"=some value")
	}
	m := &superMsg{Op: "start", Dir: "/var/spool/drover/super/job12345", Spec: &superSpec{
		Path: "/var/spool/drover/job12345/slurm_script", Env: env[:75], Dir: "/home/user", Stdout: "/dev/null",
		Stderr: "/dev/null", CgV1: []string{"/sys/fs/cgroup/cpuset/drover/n1/job_1", "/sys/fs/cgroup/memory/drover/n1/job_1/step_batch"},
		Hold: true}}
	b.Run("json", func(b *testing.B) {
		for range b.N {
			var buf strings.Builder
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			_ = enc.Encode(m)
			var got superMsg
			if err := json.Unmarshal([]byte(buf.String()), &got); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("bin", func(b *testing.B) {
		for range b.N {
			if _, err := decodeSuperBin(encodeSuperBin(m)); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestSupervisorAnswersInTheAgentsForm: the supervisor answers an agent
// that has sent something in the binary form in that form ("started",
// "ended": an agent decoding two JSON answers per job spent ~50 us on
// them), and one that speaks JSON only (an agent of an earlier build, after
// a downgrade that left this supervisor running) in JSON.
func TestSupervisorAnswersInTheAgentsForm(t *testing.T) {
	dir := testDir(t, false)
	sock := filepath.Join(dir, "super.sock")
	sup, err := ConnectSupervisor(sock)
	if err != nil {
		t.Fatal(err)
	}
	// A program that keeps the supervisor from its idle exit while the
	// test connects on its own.
	keep := filepath.Join(dir, "keep")
	if err := os.Mkdir(keep, 0o700); err != nil {
		t.Fatal(err)
	}
	p, err := sup.StartHeld(keep, &Spec{Path: "/bin/sleep", Args: []string{"60"}, Env: []string{"PATH=/bin"}, Dir: dir,
		Stdout: os.DevNull, Stderr: os.DevNull, Umask: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Kill(-p.Pid(), syscall.SIGKILL)
	sup.Close()

	for _, bin := range []bool{false, true} {
		name := map[bool]string{true: "bin", false: "json"}[bin]
		c, err := dialSuper(sock)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.SetDeadline(time.Now().Add(30 * time.Second)); err != nil {
			t.Fatal(err)
		}
		job := filepath.Join(dir, "job-"+name)
		if err := os.Mkdir(job, 0o700); err != nil {
			t.Fatal(err)
		}
		start := &superMsg{Op: "start", Dir: job, Spec: &superSpec{Path: "/bin/true", Env: []string{"PATH=/bin"}, Dir: dir,
			Stdout: os.DevNull, Stderr: os.DevNull, Hold: true}}
		write := writeMsg
		if bin {
			write = writeBinMsg
		}
		if err := write(c, start); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 1<<16)
		for _, op := range []string{"started", "ended"} {
			n, _, _, _, err := c.ReadMsgUnix(buf, nil)
			if err != nil {
				t.Fatalf("%s: waiting for %q: %v", name, op, err)
			}
			var m superMsg
			switch {
			case bin && buf[0] == superBinTag:
				m, err = decodeSuperBin(buf[:n])
			case !bin && buf[0] == '{':
				err = json.Unmarshal(buf[:n], &m)
			default:
				t.Fatalf("%s agent: %q came as %q", name, op, buf[:min(n, 20)])
			}
			if err != nil || m.Op != op || m.Dir != job {
				t.Fatalf("%s agent: want %q for %s, got %+v (%v)", name, op, job, m, err)
			}
		}
		if err := write(c, &superMsg{Op: "forget", Dir: job}); err != nil {
			t.Fatal(err)
		}
		c.Close()
	}
}
