//go:build unix

package executor

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
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
	Umask  int      `json:"umask"`
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
	cmd  *exec.Cmd
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

// Start launches spec's program through the step helper and returns without
// waiting for the helper to reach execve: a launch failure shows up in Wait.
// The error is only for failures to start the helper itself.
func Start(spec *Spec) (Process, error) {
	if spec == nil || spec.Path == "" {
		return nil, errors.New("executor: empty program path")
	}
	hs := helperSpec{
		Path: spec.Path, Args: spec.Args, Env: spec.Env, PidEnv: spec.PidEnv, Dir: spec.Dir,
		UID: spec.UID, GID: spec.GID, Groups: spec.Groups,
		Stdin: spec.Stdin, Stdout: spec.Stdout, Stderr: spec.Stderr,
		Append: spec.Append, Umask: spec.Umask,
		PipeStdin: spec.StdinR != nil, PipeStdout: spec.StdoutW != nil, PipeStderr: spec.StderrW != nil,
	}
	payload, err := json.Marshal(&hs)
	if err != nil {
		return nil, fmt.Errorf("executor: encode spec: %w", err)
	}

	p := &process{statusDone: make(chan struct{}), exited: make(chan struct{})}
	// childEnds go to the helper and are closed here once it has them;
	// parentEnds stay here. On failure both are closed.
	var childEnds, parentEnds []*os.File
	fail := func(err error) (Process, error) {
		for _, f := range append(childEnds, parentEnds...) {
			f.Close()
		}
		return nil, err
	}
	newPipe := func(what string, childReads bool) (child, parent *os.File, err error) {
		r, w, err := os.Pipe()
		if err != nil {
			return nil, nil, fmt.Errorf("executor: %s pipe: %w", what, err)
		}
		child, parent = w, r
		if childReads {
			child, parent = r, w
		}
		childEnds, parentEnds = append(childEnds, child), append(parentEnds, parent)
		return child, parent, nil
	}

	specR, specW, err := newPipe("spec", true)
	if err != nil {
		return fail(err)
	}
	statusW, statusR, err := newPipe("status", false)
	if err != nil {
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

	// Streams: *os.File pipe ends go to the child as they are (exec.Cmd
	// starts no goroutines for them), and the copying is ours, so Wait can
	// bound it instead of hanging on a pipe held by an escaped process.
	var copiers []func()
	if spec.StdinR != nil {
		r, w, err := newPipe("stdin", true)
		if err != nil {
			return fail(err)
		}
		cmd.Stdin, p.stdinW = r, w
		src := spec.StdinR
		copiers = append(copiers, func() {
			io.Copy(w, src)
			w.Close()
		})
	}
	if spec.StdoutW != nil {
		w, r, err := newPipe("stdout", false)
		if err != nil {
			return fail(err)
		}
		cmd.Stdout = w
		copiers = append(copiers, p.copier(r, spec.StdoutW))
		if sameWriter(spec.StdoutW, spec.StderrW) {
			cmd.Stderr = w
		}
	}
	if spec.StderrW != nil && cmd.Stderr == nil {
		w, r, err := newPipe("stderr", false)
		if err != nil {
			return fail(err)
		}
		cmd.Stderr = w
		copiers = append(copiers, p.copier(r, spec.StderrW))
	}

	if err := cmd.Start(); err != nil {
		return fail(fmt.Errorf("executor: start step helper %s: %w", SelfPath, err))
	}
	for _, f := range childEnds {
		f.Close()
	}
	p.cmd, p.pgid = cmd, cmd.Process.Pid

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
	for _, c := range copiers {
		go c()
	}
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
	err := p.cmd.Wait()
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
	if ps := p.cmd.ProcessState; ps != nil {
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
