//go:build unix

package executor

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// helperSpec is what the parent sends to StepExecMain: the file-path parts of
// Spec plus which stdio fds the parent already set up as pipes.
type helperSpec struct {
	Path   string   `json:"path"`
	Args   []string `json:"args,omitempty"`
	Env    []string `json:"env,omitempty"`
	PidEnv []string `json:"pid_env,omitempty"`
	Dir    string   `json:"dir,omitempty"`
	UID    uint32   `json:"uid"`
	GID    uint32   `json:"gid"`
	Groups []uint32 `json:"groups,omitempty"`
	Stdin  string   `json:"stdin,omitempty"`
	Stdout string   `json:"stdout,omitempty"`
	Stderr string   `json:"stderr,omitempty"`
	Append bool     `json:"append,omitempty"`
	// The step's cgroups (Spec.CgroupV1Dirs, CgroupV2Dir).
	CgroupV1Dirs []string `json:"cg_v1,omitempty"`
	CgroupV2Dir  string   `json:"cg_v2,omitempty"`
	Umask        int      `json:"umask"`
	// PipeStdin etc.: fd 0/1/2 is a pipe to the caller; open no file.
	PipeStdin  bool `json:"pipe_stdin,omitempty"`
	PipeStdout bool `json:"pipe_stdout,omitempty"`
	PipeStderr bool `json:"pipe_stderr,omitempty"`
}

// Extra file descriptors of the helper (exec.Cmd.ExtraFiles start at 3).
const (
	specFD   = 3 // read: the helperSpec as JSON, up to EOF
	statusFD = 4 // write: a launch error message; close-on-exec
)

type process struct {
	cmd  *exec.Cmd   // the helper path's command; nil on the direct path
	proc *os.Process // the program (on the helper path, cmd.Process)
	pgid int

	statusDone chan struct{} // closed once the status pipe reached EOF
	statusMsg  string        // launch error text; valid after statusDone

	ioDone []chan struct{} // one per output copier, closed at EOF
	ioRead []*os.File      // read ends of output pipes, closed by Wait
	stdinW *os.File        // write end of the stdin pipe, if any
	exited chan struct{}   // closed once the program was reaped
	mu     sync.Mutex      // guards reaped against Signal
	reaped bool
	once   sync.Once
	result Result
}

// Start launches spec's program and returns without waiting for it. A
// launch failure (working directory, stdio file, user switch, exec) shows
// up in Wait as Result.Err with exit code 127, on either path; the error
// here is only for failures of the agent itself (pipes, the helper binary).
func Start(spec *Spec) (Process, error) {
	if spec == nil || spec.Path == "" {
		return nil, errors.New("executor: empty program path")
	}
	sealInheritedFDs()
	if spec.Umask >= 0 && spec.Umask&0o777 != ownUmask && !spec.Terminal {
		if SwapUmask {
			return startDirectUmask(spec)
		}
		// fork/exec cannot give the child a umask of its own without
		// changing the agent's for every thread; the helper sets it.
		cp := *spec
		cp.Helper = true
		spec = &cp
	}
	if SwapUmask {
		// Not while another launch has the process's umask swapped: this
		// child (and its output files) would get that job's umask.
		umaskMu.RLock()
		defer umaskMu.RUnlock()
	}
	if spec.Helper {
		return startHelper(spec)
	}
	return startDirect(spec)
}

// streams holds the pipes of a launch: the child's ends go to the new
// process and are closed here once it has them; the parent's ends stay.
type streams struct {
	p                     *process
	childEnds, parentEnds []*os.File
	copiers               []func()
	// stdin, stdout, stderr: the child's ends of the StdinR/StdoutW/StderrW
	// pipes; nil for a stream the spec does not connect to the caller.
	stdin, stdout, stderr *os.File
}

func (s *streams) pipe(what string, childReads bool) (child, parent *os.File, err error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, nil, fmt.Errorf("executor: %s pipe: %w", what, err)
	}
	child, parent = w, r
	if childReads {
		child, parent = r, w
	}
	s.childEnds, s.parentEnds = append(s.childEnds, child), append(s.parentEnds, parent)
	return child, parent, nil
}

// connect makes the pipes for spec's StdinR, StdoutW and StderrW. *os.File
// pipe ends go to the child as they are (no goroutines of exec.Cmd or
// os), and the copying is ours, so Wait can bound it instead of hanging on
// a pipe held by an escaped process.
func (s *streams) connect(spec *Spec) error {
	if spec.StdinR != nil {
		r, w, err := s.pipe("stdin", true)
		if err != nil {
			return err
		}
		s.stdin, s.p.stdinW = r, w
		src := spec.StdinR
		s.copiers = append(s.copiers, func() {
			io.Copy(w, src)
			w.Close()
		})
	}
	if spec.StdoutW != nil {
		w, r, err := s.pipe("stdout", false)
		if err != nil {
			return err
		}
		s.stdout = w
		s.copiers = append(s.copiers, s.p.copier(r, spec.StdoutW))
		if sameWriter(spec.StdoutW, spec.StderrW) {
			s.stderr = w
		}
	}
	if spec.StderrW != nil && s.stderr == nil {
		w, r, err := s.pipe("stderr", false)
		if err != nil {
			return err
		}
		s.stderr = w
		s.copiers = append(s.copiers, s.p.copier(r, spec.StderrW))
	}
	return nil
}

// abort closes every pipe end: the launch did not happen.
func (s *streams) abort() {
	for _, f := range append(s.childEnds, s.parentEnds...) {
		f.Close()
	}
}

// started closes the child's ends, now held by the child, and starts the
// copiers.
func (s *streams) started() {
	for _, f := range s.childEnds {
		f.Close()
	}
	for _, c := range s.copiers {
		go c()
	}
}

// startHelper launches spec's program through the step helper and returns
// without waiting for the helper to reach execve: a launch failure shows up
// in Wait. The error is only for failures to start the helper itself.
func startHelper(spec *Spec) (Process, error) {
	hs := helperSpec{
		Path: spec.Path, Args: spec.Args, Env: spec.Env, PidEnv: spec.PidEnv, Dir: spec.Dir,
		UID: spec.UID, GID: spec.GID, Groups: spec.Groups,
		Stdin: spec.Stdin, Stdout: spec.Stdout, Stderr: spec.Stderr,
		Append: spec.Append, Umask: spec.Umask, CgroupV1Dirs: spec.CgroupV1Dirs, CgroupV2Dir: spec.CgroupV2Dir,
		PipeStdin: spec.StdinR != nil, PipeStdout: spec.StdoutW != nil, PipeStderr: spec.StderrW != nil,
	}
	payload, err := json.Marshal(&hs)
	if err != nil {
		return nil, fmt.Errorf("executor: encode spec: %w", err)
	}

	p := &process{statusDone: make(chan struct{}), exited: make(chan struct{})}
	s := &streams{p: p}
	fail := func(err error) (Process, error) {
		s.abort()
		return nil, err
	}
	specR, specW, err := s.pipe("spec", true)
	if err != nil {
		return fail(err)
	}
	statusW, statusR, err := s.pipe("status", false)
	if err != nil {
		return fail(err)
	}
	if err := s.connect(spec); err != nil {
		return fail(err)
	}
	cmd := &exec.Cmd{
		Path: SelfPath,
		Args: []string{SelfPath, StepExecArg},
		// An empty environment: the user's variables (GODEBUG, GOGC, ...)
		// must not steer the privileged helper's Go runtime.
		Env:         []string{},
		ExtraFiles:  []*os.File{specR, statusW},
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true},
	}
	// Only non-nil files: a nil *os.File in an io.Reader is not a nil
	// Reader, and exec.Cmd would pass a closed descriptor.
	if s.stdin != nil {
		cmd.Stdin = s.stdin
	}
	if s.stdout != nil {
		cmd.Stdout = s.stdout
	}
	if s.stderr != nil {
		cmd.Stderr = s.stderr
	}

	if err := cmd.Start(); err != nil {
		return fail(fmt.Errorf("executor: start step helper %s: %w", SelfPath, err))
	}
	p.cmd, p.proc, p.pgid = cmd, cmd.Process, cmd.Process.Pid

	// The pipe holds 64 KiB; a large environment would block, so write
	// from a goroutine. If the helper dies early the write fails with EPIPE
	// (Go ignores SIGPIPE on non-stdio fds), which is fine.
	go func() {
		specW.Write(payload)
		specW.Close()
	}()
	go func() {
		msg, _ := io.ReadAll(statusR)
		statusR.Close()
		p.statusMsg = strings.TrimSpace(string(msg))
		close(p.statusDone)
	}()
	s.started()
	return p, nil
}

// copier returns the loop that copies output pipe r to dst until EOF, and
// registers r with Wait's drain.
func (p *process) copier(r *os.File, dst io.Writer) func() {
	done := make(chan struct{})
	p.ioDone = append(p.ioDone, done)
	p.ioRead = append(p.ioRead, r)
	return func() {
		defer close(done)
		if _, err := io.Copy(dst, r); err != nil {
			// The consumer failed (srun went away). Keep reading so the
			// program does not block on a full pipe; its output is lost,
			// as it would be on a closed terminal.
			io.Copy(io.Discard, r)
		}
	}
}

// sameWriter compares two writers without panicking on incomparable
// dynamic types (a writer that is, say, a struct holding a slice).
func sameWriter(a, b io.Writer) (same bool) {
	defer func() {
		if recover() != nil {
			same = false
		}
	}()
	return a != nil && a == b
}

func (p *process) Pid() int { return p.pgid }

func (p *process) Signal(sig syscall.Signal) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	// Once reaped, the pgid may be free for reuse by the kernel: signalling
	// it could hit an unrelated process group.
	if p.reaped {
		return os.ErrProcessDone
	}
	if err := syscall.Kill(-p.pgid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("executor: signal %v to group %d: %w", sig, p.pgid, err)
	}
	return nil
}

func (p *process) Terminate(killWait time.Duration) {
	// SIGCONT first so a stopped (suspended) step can act on SIGTERM.
	p.Signal(syscall.SIGCONT)
	p.Signal(syscall.SIGTERM)
	go func() {
		t := time.NewTimer(killWait)
		defer t.Stop()
		select {
		case <-p.exited:
			// Wait's sweep SIGKILLs the rest of the group.
		case <-t.C:
			p.Signal(syscall.SIGKILL)
		}
	}()
}

func (p *process) Wait() Result {
	p.once.Do(p.wait)
	return p.result
}

func (p *process) wait() {
	var (
		ps  *os.ProcessState
		err error
	)
	if p.cmd != nil {
		err = p.cmd.Wait()
		ps = p.cmd.ProcessState
	} else {
		ps, err = p.proc.Wait()
	}
	// The group may still hold members: keep signalling it ourselves below,
	// but refuse outside signals from now on.
	p.mu.Lock()
	p.reaped = true
	p.mu.Unlock()
	close(p.exited)

	killGroup(p.pgid, GroupKillTimeout)
	if p.stdinW != nil {
		p.stdinW.Close()
	}
	p.drainOutput()
	<-p.statusDone

	var res Result
	if ps != nil {
		ws := ps.Sys().(syscall.WaitStatus)
		switch {
		case ws.Signaled():
			res.Signal = int(ws.Signal())
		case ws.Exited():
			res.ExitCode = ws.ExitStatus()
		}
	} else if err != nil {
		res.Err = fmt.Errorf("wait for step: %w", err)
	}
	if p.statusMsg != "" {
		res.Err = errors.New(p.statusMsg)
	}
	p.result = res
}

// drainOutput waits for the output copiers to see EOF, which happens once
// every holder of the pipes' write ends is gone; IODrainTimeout bounds it
// for holders that escaped the group, then the read ends are closed.
func (p *process) drainOutput() {
	deadline := time.NewTimer(IODrainTimeout)
	defer deadline.Stop()
	for _, done := range p.ioDone {
		select {
		case <-done:
		case <-deadline.C:
			for _, r := range p.ioRead {
				r.Close()
			}
			for _, d := range p.ioDone {
				<-d
			}
			return
		}
	}
	for _, r := range p.ioRead {
		r.Close()
	}
}

// SwapUmask lets Start give a program its own umask on the direct path by
// setting the process's umask around the fork, instead of re-executing
// this binary as the helper (a Go start-up per launch, ~10 ms). Only for
// a process whose other file creations do not care which umask they get
// while a launch is under way: the node supervisor (its own files are
// written with explicit modes and read by root), not the agent (cgroup
// directories, sockets users connect to).
var SwapUmask bool

// umaskMu serialises the launches that swap the process's umask
// (writers) against every other launch (readers), which must fork under
// the process's own umask.
var umaskMu sync.RWMutex

// startDirectUmask starts spec on the direct path with the process's umask
// set to spec's for the fork (the child keeps it), then restored.
func startDirectUmask(spec *Spec) (Process, error) {
	umaskMu.Lock()
	defer umaskMu.Unlock()
	old := syscall.Umask(spec.Umask & 0o777)
	defer syscall.Umask(old)
	return startDirect(spec)
}

// ownUmask is this process's umask, read once without changing it.
var ownUmask = func() int {
	b, err := os.ReadFile("/proc/self/status")
	if err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "Umask:"); ok {
				if n, err := strconv.ParseUint(strings.TrimSpace(v), 8, 32); err == nil {
					return int(n)
				}
			}
		}
	}
	return -1
}()

// outputPerm is the mode output files are created with: what the
// program's umask leaves of 0666 when the job carries one (as Slurm
// creates them), else the long-standing 0644.
func outputPerm(umask int) uint32 {
	if umask >= 0 {
		return 0o666
	}
	return 0o644
}
