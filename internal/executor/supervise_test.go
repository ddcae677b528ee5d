//go:build linux

package executor

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestSupervisorOutlivesItsAgent: a piped program started through one
// connection keeps running when that connection (the agent) goes away; a
// new connection takes it back with its pipes, its output (written in
// between) and its result.
func TestSupervisorOutlivesItsAgent(t *testing.T) {
	dir := testDir(t, false)
	sock := filepath.Join(dir, "super.sock")
	sup, err := ConnectSupervisor(sock)
	if err != nil {
		t.Fatal(err)
	}
	job := filepath.Join(dir, "job1")
	if err := os.Mkdir(job, 0o700); err != nil {
		t.Fatal(err)
	}
	spec := &Spec{Path: "/bin/sh", Args: []string{"-c", "read x; echo got $x; sleep 1; echo after; exit 3"},
		Env: []string{"PATH=/usr/bin:/bin"}, Dir: dir, Umask: -1}
	p, pipes, err := sup.StartPiped(job, spec, [3]bool{true, true, false})
	if err != nil {
		t.Fatal(err)
	}
	if p.Pid() <= 0 || pipes.Stdin == nil || pipes.Stdout == nil || pipes.Stderr != nil {
		t.Fatalf("pid %d pipes %+v", p.Pid(), pipes)
	}
	pipes.Stdin.WriteString("hello\n")
	pipes.Stdin.Close()
	sup.CloseStdin(job)
	line, _ := bufio.NewReader(pipes.Stdout).ReadString('\n')
	if line != "got hello\n" {
		t.Fatalf("first line %q", line)
	}
	// The agent goes away; the program does not.
	pipes.Stdout.Close()
	sup.Close()
	time.Sleep(100 * time.Millisecond)
	if err := syscall.Kill(-p.Pid(), 0); err != nil {
		t.Fatalf("program gone with its agent: %v", err)
	}

	sup2, err := ConnectSupervisor(sock)
	if err != nil {
		t.Fatal(err)
	}
	defer sup2.Close()
	if _, _, err := sup2.ReattachPiped(filepath.Join(dir, "nope"), [3]bool{}); err == nil {
		t.Error("reattached a program the supervisor never ran")
	}
	p2, pipes2, err := sup2.ReattachPiped(job, [3]bool{true, true, false})
	if err != nil {
		t.Fatal(err)
	}
	if pipes2.Stdout == nil || pipes2.Stdin != nil {
		t.Fatalf("pipes after reattach: %+v (stdin was closed)", pipes2)
	}
	rest := make(chan string, 1)
	go func() {
		b := make([]byte, 100)
		n, _ := pipes2.Stdout.Read(b)
		rest <- string(b[:n])
	}()
	res := p2.Wait()
	if res.ExitCode != 3 || res.Err != nil {
		t.Errorf("result %+v", res)
	}
	if got := <-rest; !strings.Contains(got, "after") {
		t.Errorf("output after the reattach: %q", got)
	}
	// A finished program is taken back from its result alone.
	p3, err := sup2.Reattach(job)
	if err != nil || p3.Wait().ExitCode != 3 {
		t.Errorf("reattach after the end: %v", err)
	}
}

// TestSupervisorInheritsNoDescriptor: a descriptor the agent inherited
// without close-on-exec (a shell's redirection, flock(1)'s lock) does not
// reach the supervisor, which may outlive the agent by hours.
func TestSupervisorInheritsNoDescriptor(t *testing.T) {
	dir := testDir(t, false)
	f, err := os.Create(filepath.Join(dir, "inherited"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := unix.FcntlInt(f.Fd(), unix.F_SETFD, 0); err != nil { // as if inherited
		t.Fatal(err)
	}
	sup, err := ConnectSupervisor(filepath.Join(dir, "super.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer sup.Close()
	raw, err := sup.conn.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var cred *unix.Ucred
	_ = raw.Control(func(fd uintptr) { cred, err = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED) })
	if err != nil {
		t.Fatal(err)
	}
	fds := fmt.Sprintf("/proc/%d/fd", cred.Pid)
	ents, err := os.ReadDir(fds)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if target, _ := os.Readlink(filepath.Join(fds, e.Name())); target == f.Name() {
			t.Errorf("the supervisor (pid %d) holds the agent's descriptor %s open as its fd %s", cred.Pid, f.Name(), e.Name())
		}
	}
}

// TestConnectPastALeavingSupervisor: a supervisor that is leaving (idle)
// may accept a connection and close it unanswered. The agent then starts
// a new one instead of going on without any.
func TestConnectPastALeavingSupervisor(t *testing.T) {
	dir := testDir(t, false)
	sock := filepath.Join(dir, "super.sock")
	ln, err := net.ListenUnix("unixpacket", &net.UnixAddr{Name: sock, Net: "unixpacket"})
	if err != nil {
		t.Fatal(err)
	}
	go func() { // the leaving supervisor: takes the connection, then quits
		if c, err := ln.AcceptUnix(); err == nil {
			c.Close()
		}
		ln.Close()
	}()
	sup, err := ConnectSupervisor(sock)
	if err != nil {
		t.Fatalf("no supervisor after meeting a leaving one: %v", err)
	}
	defer sup.Close()
	job := filepath.Join(dir, "job1")
	if err := os.Mkdir(job, 0o700); err != nil {
		t.Fatal(err)
	}
	p, err := sup.Start(job, &Spec{Path: "/bin/sh", Args: []string{"-c", "exit 4"}, Env: []string{"PATH=/usr/bin:/bin"},
		Dir: dir, Stdout: os.DevNull, Stderr: os.DevNull, Umask: -1})
	if err != nil {
		t.Fatal(err)
	}
	if res := p.Wait(); res.ExitCode != 4 {
		t.Errorf("result under the new supervisor: %+v", res)
	}
}

// TestConnectSupervisorBounded: a supervisor that accepts the connection
// but never answers (stuck, or serving another agent) makes
// ConnectSupervisor fail after SupervisorAnswerTimeout instead of hanging
// the agent; a supervisor that cannot bind its socket fails it at once.
// Lost is closed when a connected supervisor goes away.
func TestConnectSupervisorBounded(t *testing.T) {
	old := SupervisorAnswerTimeout
	SupervisorAnswerTimeout = 300 * time.Millisecond
	defer func() { SupervisorAnswerTimeout = old }()
	dir := testDir(t, false)

	mute := filepath.Join(dir, "mute.sock")
	ln, err := net.ListenUnix("unixpacket", &net.UnixAddr{Name: mute, Net: "unixpacket"})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	// The retry with a fresh supervisor must not win: a real one would
	// replace the mute socket, and on a loaded machine it can do so before
	// the retry dials. A helper that exits at once leaves the mute
	// listener as the only one to answer.
	oldSelf := SelfPath
	defer func() { SelfPath = oldSelf }()
	SelfPath = "/bin/true"
	done := make(chan error, 1)
	go func() { _, err := ConnectSupervisor(mute); done <- err }()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("connected to a supervisor that never answered")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("ConnectSupervisor still waits for a mute supervisor after 30 s")
	}

	blocked := filepath.Join(dir, "blocked.sock")
	if err := os.MkdirAll(filepath.Join(blocked, "x"), 0o700); err != nil {
		t.Fatal(err)
	}
	SelfPath = oldSelf
	SupervisorAnswerTimeout = time.Minute // must not be waited out
	go func() { _, err := ConnectSupervisor(blocked); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "exited before it listened") {
			t.Fatalf("blocked socket path: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("ConnectSupervisor waits for a supervisor that exited")
	}

	sup, err := ConnectSupervisor(filepath.Join(dir, "super.sock"))
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-sup.Lost():
		t.Fatal("Lost closed on a live connection")
	default:
	}
	sup.Close()
	select {
	case <-sup.Lost():
	case <-time.After(30 * time.Second):
		t.Fatal("Lost not closed 30 s after the connection ended")
	}
}
