package executor

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Supervised programs outlive the agent that started them, as a batch
// script outlives slurmd's restart under slurmstepd. The agent re-executes
// its own binary as a supervisor (SuperviseArg) in a session of its own;
// the supervisor starts the program (Start, the direct path), records the
// program's process group in its directory, waits for it, and writes the
// Result there before it exits. The agent signals the program's process
// group directly and learns of the end from the supervisor's exit; an
// agent started afresh finds the supervisor by its directory (Reattach)
// and waits on it through a pidfd, since it is no longer its parent.
//
// Files in the directory: super.json (the spec), super.pid (the
// supervisor), pgid (the program's group), result.json (how it ended).

// SuperviseArg is argv[1] of a supervisor; see SuperviseMain.
const SuperviseArg = "__supervise"

type superSpec struct {
	Path   string   `json:"path"`
	Args   []string `json:"args"`
	Env    []string `json:"env"`
	Dir    string   `json:"dir"`
	UID    uint32   `json:"uid"`
	GID    uint32   `json:"gid"`
	Groups []uint32 `json:"groups"`
	Stdin  string   `json:"stdin"`
	Stdout string   `json:"stdout"`
	Stderr string   `json:"stderr"`
	Append bool     `json:"append"`
}

type superResult struct {
	ExitCode int    `json:"exit_code"`
	Signal   int    `json:"signal"`
	Err      string `json:"err,omitempty"`
}

// StartSupervised starts spec's program under a supervisor whose files go
// in dir (which must exist and belong to root). Only file stdio is
// possible: the program must not depend on the agent's pipes.
func StartSupervised(dir string, spec *Spec) (Process, error) {
	if spec.StdinR != nil || spec.StdoutW != nil || spec.StderrW != nil {
		return nil, errors.New("executor: a supervised program takes its stdio from files")
	}
	ss := superSpec{Path: spec.Path, Args: spec.Args, Env: spec.Env, Dir: spec.Dir, UID: spec.UID, GID: spec.GID,
		Groups: spec.Groups, Stdin: spec.Stdin, Stdout: spec.Stdout, Stderr: spec.Stderr, Append: spec.Append}
	b, err := json.Marshal(&ss)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "super.json"), b, 0o600); err != nil {
		return nil, err
	}
	ready, readyW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		ready.Close()
		readyW.Close()
		return nil, err
	}
	proc, err := os.StartProcess(SelfPath, []string{SelfPath, SuperviseArg, dir}, &os.ProcAttr{
		Env:   []string{}, // the user's GOGC & co must not steer the supervisor
		Files: []*os.File{null, null, null, readyW},
		// A session of its own: nothing aimed at the agent (its process
		// group, its terminal) reaches the supervisor.
		Sys: &syscall.SysProcAttr{Setsid: true},
	})
	null.Close()
	readyW.Close()
	if err != nil {
		ready.Close()
		return nil, fmt.Errorf("executor: start supervisor: %w", err)
	}
	// The supervisor answers with the program's group, or why it failed.
	ready.SetReadDeadline(time.Now().Add(30 * time.Second))
	buf := make([]byte, 512)
	n, _ := ready.Read(buf)
	ready.Close()
	_ = os.WriteFile(filepath.Join(dir, "super.pid"), []byte(strconv.Itoa(proc.Pid)), 0o644)
	s := &supervised{dir: dir, super: proc, child: true, exited: make(chan struct{})}
	if pgid, err := strconv.Atoi(strings.TrimSpace(string(buf[:n]))); err == nil && pgid > 0 {
		s.pgid = pgid
	}
	return s, nil
}

// Reattach finds the supervisor of dir after an agent restart. It fails
// when the supervisor is gone and left no result (a crash of the whole
// node, say).
func Reattach(dir string) (Process, error) {
	s := &supervised{dir: dir, exited: make(chan struct{})}
	if b, err := os.ReadFile(filepath.Join(dir, "pgid")); err == nil {
		s.pgid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
	}
	b, err := os.ReadFile(filepath.Join(dir, "super.pid"))
	if err != nil {
		return nil, err
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if pid > 0 && isSupervisor(pid, dir) {
		fd, err := unix.PidfdOpen(pid, 0)
		if err == nil {
			s.pidfd = fd
			return s, nil
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "result.json")); err == nil {
		return s, nil // ended while no agent watched
	}
	return nil, fmt.Errorf("executor: supervisor of %s is gone without a result", dir)
}

// isSupervisor guards against a recycled pid.
func isSupervisor(pid int, dir string) bool {
	cmd, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return false
	}
	args := strings.Split(strings.TrimRight(string(cmd), "\x00"), "\x00")
	return len(args) == 3 && args[1] == SuperviseArg && args[2] == dir
}

// supervised is the agent's handle on a supervised program.
type supervised struct {
	dir    string
	pgid   int
	super  *os.Process // when the agent started it (its parent)
	child  bool
	pidfd  int // otherwise, a pidfd on it (0 = none: it already ended)
	exited chan struct{}
	once   sync.Once
	res    Result
}

func (s *supervised) Pid() int { return s.pgid }

func (s *supervised) Signal(sig syscall.Signal) error {
	select {
	case <-s.exited:
		return os.ErrProcessDone
	default:
	}
	if s.pgid <= 0 {
		return os.ErrProcessDone
	}
	if err := syscall.Kill(-s.pgid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	return nil
}

func (s *supervised) Terminate(killWait time.Duration) {
	_ = s.Signal(syscall.SIGCONT)
	_ = s.Signal(syscall.SIGTERM)
	go func() {
		t := time.NewTimer(killWait)
		defer t.Stop()
		select {
		case <-s.exited:
		case <-t.C:
			_ = s.Signal(syscall.SIGKILL)
		}
	}()
}

func (s *supervised) Wait() Result {
	s.once.Do(s.wait)
	return s.res
}

func (s *supervised) wait() {
	switch {
	case s.child:
		_, _ = s.super.Wait()
	case s.pidfd > 0:
		fds := []unix.PollFd{{Fd: int32(s.pidfd), Events: unix.POLLIN}}
		for {
			if _, err := unix.Poll(fds, -1); err == nil || !errors.Is(err, unix.EINTR) {
				break
			}
		}
		unix.Close(s.pidfd)
	}
	close(s.exited)
	res := Result{ExitCode: 1, Err: errors.New("the job's supervisor ended without a result")}
	if b, err := os.ReadFile(filepath.Join(s.dir, "result.json")); err == nil {
		var r superResult
		if json.Unmarshal(b, &r) == nil {
			res = Result{ExitCode: r.ExitCode, Signal: r.Signal}
			if r.Err != "" {
				res.Err = errors.New(r.Err)
			}
		}
	}
	s.res = res
}

// SuperviseMain is the supervisor: argv is [dir]. It starts the program,
// reports its group on fd 3, and writes the result when it ends.
func SuperviseMain(args []string) int {
	if len(args) != 1 {
		return 2
	}
	dir := args[0]
	ready := os.NewFile(3, "ready")
	// Signals meant for the job go to its group; the supervisor stays.
	signal.Ignore(syscall.SIGHUP, syscall.SIGINT, syscall.SIGTERM, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2)
	writeResult := func(r superResult) {
		b, _ := json.Marshal(&r)
		tmp := filepath.Join(dir, "result.json.tmp")
		if os.WriteFile(tmp, b, 0o644) == nil {
			_ = os.Rename(tmp, filepath.Join(dir, "result.json"))
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "super.json"))
	var ss superSpec
	if err == nil {
		err = json.Unmarshal(b, &ss)
	}
	if err != nil {
		writeResult(superResult{ExitCode: 1, Err: "bad supervisor spec: " + err.Error()})
		ready.Close()
		return 1
	}
	proc, err := Start(&Spec{Path: ss.Path, Args: ss.Args, Env: ss.Env, Dir: ss.Dir, UID: ss.UID, GID: ss.GID,
		Groups: ss.Groups, Stdin: ss.Stdin, Stdout: ss.Stdout, Stderr: ss.Stderr, Append: ss.Append, Umask: -1})
	if err != nil {
		writeResult(superResult{ExitCode: 1, Err: err.Error()})
		ready.Close()
		return 1
	}
	pgid := proc.Pid()
	_ = os.WriteFile(filepath.Join(dir, "pgid"), []byte(strconv.Itoa(pgid)), 0o644)
	fmt.Fprintf(ready, "%d\n", pgid)
	ready.Close()
	res := proc.Wait()
	r := superResult{ExitCode: res.ExitCode, Signal: res.Signal}
	if res.Err != nil {
		r.Err = res.Err.Error()
	}
	writeResult(r)
	return 0
}
