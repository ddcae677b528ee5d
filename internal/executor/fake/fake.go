// Package fake is an executor.Executor that runs nothing: it records each
// launch and lets the test end the "program" when and how it wants. It is
// for testing what launches programs (the agent's step runner and its
// hooks) without processes, users or cgroups.
package fake

import (
	"errors"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/drover-hpc/drover/internal/executor"
)

// Executor records launches. StartErr, when set, fails every Start.
// IgnoreTERM makes the programs survive SIGTERM, so that only Terminate's
// SIGKILL after killWait ends them (a program that traps SIGTERM).
type Executor struct {
	StartErr   error
	IgnoreTERM bool

	mu      sync.Mutex
	started []*Process
	notify  chan *Process
}

// New returns an Executor whose Started channel yields each launch.
func New() *Executor { return &Executor{notify: make(chan *Process, 1024)} }

// Start records spec and returns a Process that runs until Exit or a
// signal ends it.
func (e *Executor) Start(spec *executor.Spec) (executor.Process, error) {
	if e.StartErr != nil {
		return nil, e.StartErr
	}
	e.mu.Lock()
	p := &Process{Spec: spec, pid: 1000 + len(e.started), done: make(chan struct{}), ignoreTERM: e.IgnoreTERM}
	e.started = append(e.started, p)
	e.mu.Unlock()
	if e.notify != nil {
		e.notify <- p
	}
	return p, nil
}

// Started yields each launched process, in launch order.
func (e *Executor) Started() <-chan *Process { return e.notify }

// Processes lists the launches so far.
func (e *Executor) Processes() []*Process {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]*Process(nil), e.started...)
}

// Process is one fake program.
type Process struct {
	Spec       *executor.Spec
	pid        int
	ignoreTERM bool

	mu      sync.Mutex
	signals []syscall.Signal
	ended   bool
	res     executor.Result
	done    chan struct{}
}

// Pid is a made-up pid.
func (p *Process) Pid() int { return p.pid }

// Exit ends the program with res (once; later calls do nothing).
func (p *Process) Exit(res executor.Result) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ended {
		return
	}
	p.ended, p.res = true, res
	close(p.done)
}

// Signal records sig; SIGKILL and SIGTERM end the program as killed by it.
func (p *Process) Signal(sig syscall.Signal) error {
	p.mu.Lock()
	if p.ended {
		p.mu.Unlock()
		return os.ErrProcessDone
	}
	p.signals = append(p.signals, sig)
	p.mu.Unlock()
	if sig == syscall.SIGKILL || (sig == syscall.SIGTERM && !p.ignoreTERM) {
		p.Exit(executor.Result{Signal: int(sig)})
	}
	return nil
}

// Terminate sends SIGTERM and, if the program still runs killWait later,
// SIGKILL, as the real processes do.
func (p *Process) Terminate(killWait time.Duration) {
	_ = p.Signal(syscall.SIGTERM)
	time.AfterFunc(killWait, func() { _ = p.Signal(syscall.SIGKILL) })
}

// Wait blocks until the program ended.
func (p *Process) Wait() executor.Result {
	<-p.done
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.res
}

// Signals lists the signals sent so far.
func (p *Process) Signals() []syscall.Signal {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]syscall.Signal(nil), p.signals...)
}

// Done is closed once the program ended.
func (p *Process) Done() <-chan struct{} { return p.done }

// ErrRefused is a ready-made StartErr.
var ErrRefused = errors.New("fake: launch refused")

var _ executor.Executor = (*Executor)(nil)
var _ executor.Process = (*Process)(nil)
