package executor

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Supervised programs outlive the agent that started them, as batch
// scripts outlive slurmd's restart under slurmstepd. One supervisor per
// node (the agent's binary re-executed as SuperviseArg, in a session of its
// own) is the parent of every supervised program: it starts them (Start,
// the direct path) on the agent's request, waits for them, and writes each
// Result to the job's directory. The agent signals a program's process
// group directly and hears of its end from the supervisor. A restarted
// agent connects to the running supervisor again, and finds the results of
// programs that ended while no agent listened in their directories.
//
// The agent talks to it over a Unix SOCK_SEQPACKET socket (root only), one
// JSON message per packet ("start" in a binary form where the supervisor
// reads it, superbin_linux.go); pipe descriptors travel with their packet:
//
//	→ {"op":"start","dir":D,"spec":{...}}   ← {"op":"started","dir":D,"pgid":N} or {"op":"error",...}
//	→ {"op":"list"}                          ← {"op":"running","dirs":[...]}
//	→ {"op":"fds","dir":D}                   ← {"op":"fds"} + the program's pipes
//	→ {"op":"stdin-eof","dir":D}             ← {"op":"ok"}
//	← {"op":"ended","dir":D[,"result":R]}    (pushed when a program ends)
//	→ {"op":"forget","dir":D}                (no reply; see below)
//
// Files in a job's directory: pgid (the program's group) and result.json.
//
// A start with "hold" (StartHeld) has the result of its program travel in
// its "ended" message and stay in the supervisor's memory, not on disk,
// until the agent says "forget" (it reported the end and the controller
// confirmed it). An agent that disconnects before has every result it did
// not forget written to result.json, before another agent is served, and
// a program that ends while no agent listens writes it as before; the
// agent's side writes the results it holds unsettled if the supervisor is
// lost (killed): an agent's crash or restart, or the supervisor's loss,
// leaves every unsettled result on disk. That
// spares the common path a file creation, a rename and an unlink per job
// (each up to a few hundred microseconds of CPU on a journalled disk).
// A supervisor that predates "hold" ignores it and writes result.json,
// which the agent reads when the message carries no result.

// SuperviseArg is argv[1] of the supervisor; see SuperviseMain.
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
	Umask  *int     `json:"umask,omitempty"` // nil: the supervisor's
	CgV1   []string `json:"cg_v1,omitempty"`
	CgV2   string   `json:"cg_v2,omitempty"`
	// Hold: the result goes in the "ended" message and stays in memory
	// until "forget" (see the protocol above).
	Hold bool `json:"hold,omitempty"`
}

type superResult struct {
	ExitCode int    `json:"exit_code"`
	Signal   int    `json:"signal"`
	Err      string `json:"err,omitempty"`
}

type superMsg struct {
	Op   string     `json:"op"`
	Dir  string     `json:"dir,omitempty"`
	Dirs []string   `json:"dirs,omitempty"`
	Spec *superSpec `json:"spec,omitempty"`
	PGID int        `json:"pgid,omitempty"`
	Err  string     `json:"err,omitempty"`
	// Result of an ended program started with Hold.
	Result *superResult `json:"result,omitempty"`
	// Pipes asks for the program's stdin/stdout/stderr as pipes whose
	// agent ends come back with the reply (SCM_RIGHTS, in that order, for
	// those asked for); the supervisor keeps its own copies so that a
	// later agent can ask for them again ("fds").
	Pipes [3]bool `json:"pipes,omitempty"`
	// Bin, in the answer to "list": the supervisor reads "start" in the
	// binary form of that version (superbin_linux.go).
	Bin int `json:"bin,omitempty"`
	fds []int
	bin bool // read in the binary form
}

// Supervisor is the agent's connection to its node's supervisor.
type Supervisor struct {
	sock   string
	callMu sync.Mutex // one request at a time: replies come in order
	mu     sync.Mutex
	conn   *net.UnixConn
	// replies to start/list, in order; pushes of ends go to waiters.
	replies chan superMsg
	waiters map[string]*supervised
	running map[string]bool // from the last list
	bin     bool            // the supervisor reads "start" in the binary form
	lost    chan struct{}   // closed when the connection is gone
	// ended holds the results of held programs whose "ended" found no
	// waiter (between the list and a Reattach).
	ended map[string]*superResult
	// unsettled: every held result received and not yet forgotten. If
	// the connection is lost (the supervisor killed), they are written to
	// their directories here: the supervisor's memory is gone, and a
	// later agent must still find them.
	unsettled map[string]*superResult
}

// SupervisorAnswerTimeout bounds how long ConnectSupervisor waits for a
// supervisor to come up and answer (one started now, or one that accepts
// the connection but is busy or stuck).
var SupervisorAnswerTimeout = 10 * time.Second

// ConnectSupervisor connects to the supervisor listening on sock, starting
// one when none runs.
func ConnectSupervisor(sock string) (*Supervisor, error) {
	s, err := connectSupervisor(sock, false)
	if err != nil {
		// A supervisor that was leaving (idle: no program, no agent for
		// supervisorLinger) may still have accepted the connection, then
		// closed it unanswered. Another start replaces it; without that,
		// this agent would run every batch job unsupervised, and a job that
		// ended while no agent ran would lose its result.
		s, err = connectSupervisor(sock, true)
	}
	return s, err
}

func connectSupervisor(sock string, fresh bool) (*Supervisor, error) {
	s := &Supervisor{sock: sock, waiters: map[string]*supervised{}, lost: make(chan struct{}),
		ended: map[string]*superResult{}, unsettled: map[string]*superResult{}}
	var conn *net.UnixConn
	err := errors.New("executor: start a new supervisor")
	if !fresh {
		conn, err = dialSuper(sock)
	}
	if err != nil {
		exited, err := startSupervisor(sock)
		if err != nil {
			return nil, err
		}
		deadline := time.Now().Add(SupervisorAnswerTimeout)
		for {
			if conn, err = dialSuper(sock); err == nil || time.Now().After(deadline) {
				break
			}
			select {
			case st := <-exited:
				// It will never listen (it could not bind its socket, say):
				// no use waiting out the deadline.
				return nil, fmt.Errorf("executor: supervisor exited before it listened (%v): %w", st, err)
			case <-time.After(10 * time.Millisecond):
			}
		}
		if err != nil {
			return nil, fmt.Errorf("executor: supervisor did not come up: %w", err)
		}
	}
	roomForMessages(conn)
	s.conn, s.replies = conn, make(chan superMsg, 16)
	// The first answer is bounded: a supervisor that accepted but does
	// not answer (serving another agent, stuck) would hang this agent.
	_ = conn.SetReadDeadline(time.Now().Add(SupervisorAnswerTimeout))
	go s.read()
	if err := s.list(); err != nil {
		conn.Close()
		return nil, fmt.Errorf("executor: the supervisor did not answer: %w", err)
	}
	_ = conn.SetReadDeadline(time.Time{})
	return s, nil
}

// Lost is closed once the connection to the supervisor is gone (it
// exited or was killed, or Close was called).
func (s *Supervisor) Lost() <-chan struct{} { return s.lost }

// supervisorProfileEnv names a file prefix for a CPU profile of the
// supervisor (PATH.PID, written when it exits), as DROVER_AGENT_CPUPROFILE
// does for the agent; the agent passes it on (performance work only).
const supervisorProfileEnv = "DROVER_SUPERVISOR_CPUPROFILE"

// startSupervisor starts a supervisor for sock; the channel gets its exit
// status if it exits while this process runs (it is reaped, not left a
// zombie).
func startSupervisor(sock string) (<-chan *os.ProcessState, error) {
	sealFDs() // Files below are all it may get (see sealFDs)
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	defer null.Close()
	env := []string{} // the environment must not steer its Go runtime
	if v := os.Getenv(supervisorProfileEnv); v != "" {
		env = append(env, supervisorProfileEnv+"="+v)
	}
	p, err := os.StartProcess(SelfPath, []string{SelfPath, SuperviseArg, sock}, &os.ProcAttr{
		Env:   env,
		Files: []*os.File{null, null, null},
		// A session of its own: nothing aimed at the agent (its process
		// group, its terminal) reaches the supervisor.
		Sys: &syscall.SysProcAttr{Setsid: true},
	})
	if err != nil {
		return nil, fmt.Errorf("executor: start supervisor: %w", err)
	}
	exited := make(chan *os.ProcessState, 1)
	go func() {
		st, _ := p.Wait()
		exited <- st
	}()
	return exited, nil
}

func (s *Supervisor) read() {
	buf, oob := make([]byte, maxSuperMsg), make([]byte, 256)
	for {
		m, err := readMsg(s.conn, buf, oob)
		if err != nil {
			break
		}
		if m.Op == "ended" {
			s.mu.Lock()
			w := s.waiters[m.Dir]
			delete(s.waiters, m.Dir)
			if m.Result != nil {
				s.unsettled[m.Dir] = m.Result
				if w == nil {
					s.ended[m.Dir] = m.Result
				}
			}
			s.mu.Unlock()
			if w != nil {
				w.res = m.Result
				w.end()
			}
			continue
		}
		s.replies <- m
	}
	// The supervisor went away: its programs died with it (or it was
	// killed); whoever waits learns it from the missing result.
	s.mu.Lock()
	unsettled := s.unsettled
	s.unsettled = map[string]*superResult{}
	s.mu.Unlock()
	for dir, r := range unsettled { // on disk before anyone hears of the loss
		// Its own temporary name: a supervisor that is only
		// disconnected writes the same result at the same time.
		writeResultAs(dir, r, "result.json.agent.tmp")
	}
	close(s.replies)
	close(s.lost)
	s.mu.Lock()
	ws := s.waiters
	s.waiters = map[string]*supervised{}
	s.mu.Unlock()
	for _, w := range ws {
		w.end()
	}
}

func (s *Supervisor) call(m superMsg) (superMsg, error) {
	s.callMu.Lock()
	defer s.callMu.Unlock()
	s.mu.Lock()
	var err error
	if s.bin && m.Op == "start" {
		err = writeBinMsg(s.conn, &m)
	} else {
		err = writeMsg(s.conn, &m)
	}
	s.mu.Unlock()
	if err != nil {
		return superMsg{}, err
	}
	r, ok := <-s.replies
	if !ok {
		return superMsg{}, errors.New("executor: supervisor connection lost")
	}
	if r.Op == "error" {
		return r, errors.New(r.Err)
	}
	return r, nil
}

func (s *Supervisor) list() error {
	r, err := s.call(superMsg{Op: "list"})
	if err != nil {
		return err
	}
	s.running = map[string]bool{}
	for _, d := range r.Dirs {
		s.running[d] = true
	}
	s.mu.Lock()
	s.bin = r.Bin == superBinVersion
	s.mu.Unlock()
	return nil
}

// Start runs spec's program under the supervisor; dir (root-owned) gets
// its files. Only file stdio is possible: see StartPiped for streams.
func (s *Supervisor) Start(dir string, spec *Spec) (Process, error) {
	if spec.StdinR != nil || spec.StdoutW != nil || spec.StderrW != nil {
		return nil, errors.New("executor: a supervised program takes its stdio from files")
	}
	p, _, err := s.start(dir, spec, [3]bool{}, false)
	return p, err
}

// StartHeld is Start with the result held by the supervisor until
// Forget(dir) instead of written to dir (see the protocol above).
func (s *Supervisor) StartHeld(dir string, spec *Spec) (Process, error) {
	if spec.StdinR != nil || spec.StdoutW != nil || spec.StderrW != nil {
		return nil, errors.New("executor: a supervised program takes its stdio from files")
	}
	p, _, err := s.start(dir, spec, [3]bool{}, true)
	return p, err
}

// Forget tells the supervisor that the result of dir's program (started
// with StartHeld) is settled: it need not be kept, nor written for a
// later agent. No reply; a failure changes nothing (the result is then
// written to dir when this connection ends).
func (s *Supervisor) Forget(dir string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.ended, dir)
	delete(s.unsettled, dir)
	_ = writeMsg(s.conn, &superMsg{Op: "forget", Dir: dir})
}

// Pipes are the agent's ends of a supervised program's streams (nil for
// those not asked for): write stdin, read stdout and stderr. They outlive
// the agent; a later agent gets them again from Reattach.
type Pipes struct {
	Stdin          *os.File
	Stdout, Stderr *os.File
}

// StartPiped runs spec's program under the supervisor with stdin, stdout
// and stderr as pipes when asked (the others from spec's paths).
func (s *Supervisor) StartPiped(dir string, spec *Spec, pipes [3]bool) (Process, *Pipes, error) {
	return s.start(dir, spec, pipes, false)
}

// CloseStdin ends a piped program's stdin: the supervisor drops its copy
// of the pipe (the caller closes its own).
func (s *Supervisor) CloseStdin(dir string) {
	_, _ = s.call(superMsg{Op: "stdin-eof", Dir: dir})
}

func (s *Supervisor) start(dir string, spec *Spec, pipes [3]bool, hold bool) (*supervised, *Pipes, error) {
	ss := &superSpec{Path: spec.Path, Args: spec.Args, Env: spec.Env, Dir: spec.Dir, UID: spec.UID, GID: spec.GID,
		Groups: spec.Groups, Stdin: spec.Stdin, Stdout: spec.Stdout, Stderr: spec.Stderr, Append: spec.Append,
		CgV1: spec.CgroupV1Dirs, CgV2: spec.CgroupV2Dir, Hold: hold}
	if spec.Umask >= 0 {
		ss.Umask = &spec.Umask
	}
	p := &supervised{dir: dir, exited: make(chan struct{})}
	s.mu.Lock()
	s.waiters[dir] = p // before the start: a quick end must find it
	delete(s.ended, dir)
	s.mu.Unlock()
	r, err := s.call(superMsg{Op: "start", Dir: dir, Spec: ss, Pipes: pipes})
	if err != nil {
		s.mu.Lock()
		delete(s.waiters, dir)
		s.mu.Unlock()
		return nil, nil, err
	}
	p.pgid = r.PGID
	return p, pipesOf(r.fds, r.Pipes), nil
}

// pipesOf names the descriptors that came with a reply saying which
// streams they are.
func pipesOf(fds []int, want [3]bool) *Pipes {
	out := &Pipes{}
	next := func(name string) *os.File {
		if len(fds) == 0 {
			return nil
		}
		f := os.NewFile(uintptr(fds[0]), name)
		fds = fds[1:]
		return f
	}
	if want[0] {
		out.Stdin = next("stdin")
	}
	if want[1] {
		out.Stdout = next("stdout")
	}
	if want[2] {
		out.Stderr = next("stderr")
	}
	for _, fd := range fds {
		unix.Close(fd)
	}
	return out
}

// ReattachPiped takes back a piped program, with its pipes.
func (s *Supervisor) ReattachPiped(dir string, pipes [3]bool) (Process, *Pipes, error) {
	p, err := s.Reattach(dir)
	if err != nil {
		return nil, nil, err
	}
	r, err := s.call(superMsg{Op: "fds", Dir: dir})
	if err != nil {
		return p, &Pipes{}, nil // ended meanwhile: no streams left to read
	}
	return p, pipesOf(r.fds, r.Pipes), nil
}

// Reattach takes back a program a previous agent started: still running
// under the supervisor, or ended with a result in dir.
func (s *Supervisor) Reattach(dir string) (Process, error) {
	p := &supervised{dir: dir, exited: make(chan struct{})}
	if b, err := os.ReadFile(filepath.Join(dir, "pgid")); err == nil {
		p.pgid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
	}
	if _, err := os.Stat(filepath.Join(dir, "result.json")); err == nil {
		p.end()
		return p, nil
	}
	s.mu.Lock()
	if r := s.ended[dir]; r != nil {
		s.mu.Unlock()
		p.res = r
		p.end()
		return p, nil
	}
	if !s.running[dir] {
		s.mu.Unlock()
		return nil, fmt.Errorf("executor: the supervisor does not run %s and it left no result", dir)
	}
	s.waiters[dir] = p
	s.mu.Unlock()
	// It may have ended between the listing and the line above, its
	// "ended" message finding no waiter: the result says so. (A held
	// result is in s.ended then, checked above under the same lock.)
	if _, err := os.Stat(filepath.Join(dir, "result.json")); err == nil {
		p.end()
	}
	return p, nil
}

// Close disconnects; the supervisor and its programs go on.
func (s *Supervisor) Close() error { return s.conn.Close() }

// supervised is the agent's handle on one supervised program.
type supervised struct {
	dir    string
	pgid   int
	exited chan struct{}
	once   sync.Once
	res    *superResult // from the "ended" message (held), set before exited closes
}

func (p *supervised) end() { p.once.Do(func() { close(p.exited) }) }

func (p *supervised) Pid() int { return p.pgid }

func (p *supervised) Signal(sig syscall.Signal) error {
	select {
	case <-p.exited:
		return os.ErrProcessDone
	default:
	}
	if p.pgid <= 0 {
		return os.ErrProcessDone
	}
	if err := syscall.Kill(-p.pgid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	return nil
}

func (p *supervised) Terminate(killWait time.Duration) {
	_ = p.Signal(syscall.SIGCONT)
	_ = p.Signal(syscall.SIGTERM)
	go func() {
		t := time.NewTimer(killWait)
		defer t.Stop()
		select {
		case <-p.exited:
		case <-t.C:
			_ = p.Signal(syscall.SIGKILL)
		}
	}()
}

func (p *supervised) Wait() Result {
	<-p.exited
	r := p.res
	if r == nil {
		if b, err := os.ReadFile(filepath.Join(p.dir, "result.json")); err == nil {
			var fr superResult
			if json.Unmarshal(b, &fr) == nil {
				r = &fr
			}
		}
	}
	if r == nil {
		return Result{Err: ErrSupervisorLost}
	}
	res := Result{ExitCode: r.ExitCode, Signal: r.Signal}
	if r.Err != "" {
		res.Err = errors.New(r.Err)
	}
	return res
}

// SuperviseMain is the node's supervisor: argv is [socket path]. It serves
// agents one at a time and exits once it has no program to watch and no
// agent has been connected for a while.
func SuperviseMain(args []string) int {
	if len(args) != 1 {
		return 2
	}
	sock := args[0]
	if path := os.Getenv(supervisorProfileEnv); path != "" {
		if f, err := os.Create(path + "." + strconv.Itoa(os.Getpid())); err == nil {
			if pprof.StartCPUProfile(f) == nil {
				defer pprof.StopCPUProfile()
			}
		}
	}
	// Jobs submitted with another umask than the supervisor's start on
	// the direct path too (see SwapUmask).
	SwapUmask = true
	// Caught, not ignored: an ignored signal stays ignored in the programs
	// the supervisor starts (a trap on SIGINT would not work, SIGTERM would
	// not end a job), while a caught one is reset by execve.
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGHUP, syscall.SIGINT, syscall.SIGTERM, syscall.SIGQUIT, syscall.SIGPIPE)
	go func() {
		for range sigs {
		}
	}()
	_ = os.Remove(sock)
	ln, err := net.ListenUnix("unixpacket", &net.UnixAddr{Name: sock, Net: "unixpacket"})
	if err != nil {
		return 1
	}
	_ = os.Chmod(sock, 0o600)
	sv := &supervisor{running: map[string]bool{}, pipes: map[string][]*os.File{}, hold: map[string]bool{}, held: map[string]*superResult{}}
	go sv.idleExit(ln)
	for {
		conn, err := ln.AcceptUnix()
		if err != nil {
			return 0
		}
		roomForMessages(conn)
		sv.serve(conn)
	}
}

type supervisor struct {
	mu      sync.Mutex
	running map[string]bool
	pipes   map[string][]*os.File // a piped program's agent ends, kept for the next agent
	agent   *net.UnixConn         // the connected agent, if any
	// agentBin: the connected agent has sent a message in the binary
	// form, so it reads that form too (both came in one build): its
	// answers go that way, all but "running" (which says what this
	// supervisor reads, before the agent has sent anything binary).
	// Decoding two JSON answers per job was ~50 us of the agent's CPU.
	agentBin bool
	lastAt   time.Time               // when an agent was last connected
	hold     map[string]bool         // running programs started with Hold
	held     map[string]*superResult // results sent to the connected agent, not yet forgotten
}

// send writes one message to the connected agent. A reply the agent waits
// for must never be lost: if the descriptors cannot go with it, an error
// without them goes instead (a call left without its reply would hang every
// later request of the agent).
func (sv *supervisor) send(m superMsg, fds ...int) {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	if sv.agent == nil {
		return
	}
	if err := sv.write(&m, fds...); err != nil && m.Op != "ended" {
		_ = sv.write(&superMsg{Op: "error", Dir: m.Dir, Err: "supervisor reply: " + err.Error()})
	}
}

// write sends m to the connected agent (sv.mu held, sv.agent set) in the
// form it reads.
func (sv *supervisor) write(m *superMsg, fds ...int) error {
	if sv.agentBin && m.Op != "running" {
		return writeBinMsg(sv.agent, m, fds...)
	}
	return writeMsg(sv.agent, m, fds...)
}

// fdsOf lists the descriptors of a program's kept pipe ends, and which
// of stdin, stdout, stderr they are.
func fdsOf(files []*os.File) ([]int, [3]bool) {
	var fds []int
	var have [3]bool
	for i, f := range files {
		if f != nil && i < 3 {
			fds = append(fds, int(f.Fd()))
			have[i] = true
		}
	}
	return fds, have
}

// serve handles one agent until it disconnects.
func (sv *supervisor) serve(conn *net.UnixConn) {
	sv.mu.Lock()
	sv.agent, sv.agentBin = conn, false
	sv.mu.Unlock()
	buf, oob := make([]byte, maxSuperMsg), make([]byte, 256)
	for {
		m, err := readMsg(conn, buf, oob)
		if err != nil {
			break
		}
		if m.bin {
			sv.mu.Lock()
			sv.agentBin = true
			sv.mu.Unlock()
		}
		for _, fd := range m.fds {
			unix.Close(fd) // agents send none
		}
		switch m.Op {
		case "list":
			sv.mu.Lock()
			dirs := make([]string, 0, len(sv.running))
			for d := range sv.running {
				dirs = append(dirs, d)
			}
			sv.mu.Unlock()
			sv.send(superMsg{Op: "running", Dirs: dirs, Bin: superBinVersion})
		case "start":
			dir := m.Dir
			err := sv.start(dir, m.Spec, m.Pipes, func(pgid int, kept []*os.File) {
				fds, have := fdsOf(kept)
				sv.send(superMsg{Op: "started", Dir: dir, PGID: pgid, Pipes: have}, fds...)
			})
			if err != nil {
				sv.send(superMsg{Op: "error", Dir: dir, Err: err.Error()})
				continue
			}
		case "fds":
			sv.mu.Lock()
			files, ok := sv.pipes[m.Dir]
			fds, have := fdsOf(files)
			sv.mu.Unlock()
			if !ok {
				sv.send(superMsg{Op: "error", Dir: m.Dir, Err: "no such program"})
				continue
			}
			sv.send(superMsg{Op: "fds", Dir: m.Dir, Pipes: have}, fds...)
			sv.mu.Lock()
			if !sv.running[m.Dir] { // ended: the agent has the last copies now
				for _, f := range sv.pipes[m.Dir] {
					if f != nil {
						f.Close()
					}
				}
				delete(sv.pipes, m.Dir)
			}
			sv.mu.Unlock()
		case "forget":
			sv.mu.Lock()
			delete(sv.held, m.Dir)
			sv.mu.Unlock()
		case "stdin-eof":
			sv.mu.Lock()
			if files := sv.pipes[m.Dir]; len(files) > 0 && files[0] != nil {
				files[0].Close()
				files[0] = nil
			}
			sv.mu.Unlock()
			sv.send(superMsg{Op: "ok", Dir: m.Dir})
		}
	}
	sv.mu.Lock()
	sv.agent, sv.lastAt = nil, time.Now()
	held := sv.held
	sv.held = map[string]*superResult{}
	sv.mu.Unlock()
	conn.Close()
	// Before the next agent is served (serve runs one at a time): it must
	// find on disk every result this one did not settle.
	for dir, r := range held {
		writeResult(dir, r)
	}
}

// writeResult puts a program's result in its directory, whole or not at
// all.
func writeResult(dir string, r *superResult) { writeResultAs(dir, r, "result.json.tmp") }

func writeResultAs(dir string, r *superResult, tmpName string) {
	b, _ := json.Marshal(r)
	tmp := filepath.Join(dir, tmpName)
	if os.WriteFile(tmp, b, 0o644) == nil {
		_ = os.Rename(tmp, filepath.Join(dir, "result.json"))
	}
}

// start runs a program and calls reply with its process group and the
// agent's pipe ends before anything may close those ends: a program that
// ends at once (hostname) has its end handled only after the reply is out.
// (Replying afterwards raced with that end: the pipes were gone, or their
// descriptors closed under the reply, and a task's output was lost or the
// reply never sent, hanging the agent's StartPiped.)
func (sv *supervisor) start(dir string, ss *superSpec, want [3]bool, reply func(pgid int, kept []*os.File)) error {
	if ss == nil || dir == "" {
		return errors.New("bad start request")
	}
	_ = os.Remove(filepath.Join(dir, "result.json"))
	spec := &Spec{Path: ss.Path, Args: ss.Args, Env: ss.Env, Dir: ss.Dir, UID: ss.UID, GID: ss.GID,
		Groups: ss.Groups, Stdin: ss.Stdin, Stdout: ss.Stdout, Stderr: ss.Stderr, Append: ss.Append, Umask: -1,
		CgroupV1Dirs: ss.CgV1, CgroupV2Dir: ss.CgV2}
	if ss.Umask != nil {
		spec.Umask = *ss.Umask
	}
	// The agent's ends (kept here too, for the next agent) and ours.
	kept := make([]*os.File, 3)
	var ours []*os.File
	closeAll := func() {
		for _, f := range append(kept, ours...) {
			if f != nil {
				f.Close()
			}
		}
	}
	if want[0] {
		r, w, err := os.Pipe()
		if err != nil {
			closeAll()
			return err
		}
		kept[0], spec.StdinR = w, r
		ours = append(ours, r)
	}
	for i, w := range []*io.Writer{&spec.StdoutW, &spec.StderrW} {
		if !want[i+1] {
			continue
		}
		r, wf, err := os.Pipe()
		if err != nil {
			closeAll()
			return err
		}
		kept[i+1], *w = r, wf
		ours = append(ours, wf)
	}
	proc, err := Start(spec)
	if err != nil {
		closeAll()
		return err
	}
	if want[0] || want[1] || want[2] {
		sv.mu.Lock()
		sv.pipes[dir] = kept
		sv.mu.Unlock()
	}
	pgid := proc.Pid()
	_ = WriteRecord(filepath.Join(dir, "pgid"), []byte(strconv.Itoa(pgid)), 0o644)
	sv.mu.Lock()
	sv.running[dir] = true
	sv.hold[dir] = ss.Hold
	delete(sv.held, dir) // an earlier run's, never forgotten
	sv.mu.Unlock()
	reply(pgid, kept)
	go func() {
		res := proc.Wait()
		for _, f := range ours { // the output is drained: EOF for the agent
			f.Close()
		}
		r := &superResult{ExitCode: res.ExitCode, Signal: res.Signal}
		if res.Err != nil {
			r.Err = res.Err.Error()
		}
		sv.mu.Lock()
		hold := sv.hold[dir]
		delete(sv.hold, dir)
		// Held: the connected agent gets the result in "ended" and it
		// stays here until "forget" (or is written when that agent goes).
		// Decided under the lock that serve's end takes, so a result is
		// either in held then or written below.
		sent := hold && sv.agent != nil && sv.write(&superMsg{Op: "ended", Dir: dir, Result: r}) == nil
		if sent {
			sv.held[dir] = r
		}
		sv.mu.Unlock()
		if !sent {
			// On disk before it stops counting as running: an agent
			// listing meanwhile must find one or the other.
			writeResult(dir, r)
		}
		sv.mu.Lock()
		delete(sv.running, dir)
		if sv.agent != nil {
			for _, f := range sv.pipes[dir] {
				if f != nil {
					f.Close()
				}
			}
			delete(sv.pipes, dir)
		} else if kept := sv.pipes[dir]; len(kept) > 0 && kept[0] != nil {
			// No agent listens: keep the output pipes (their unread
			// output) for the next one, which fetches them with "fds".
			kept[0].Close()
			kept[0] = nil
		}
		sv.mu.Unlock()
		if !sent {
			sv.send(superMsg{Op: "ended", Dir: dir})
		}
	}()
	return nil
}

// supervisorLinger is how long an idle supervisor waits for an agent.
const supervisorLinger = 2 * time.Second

// idleExit stops the supervisor once nothing needs it: no program runs and
// no agent has been connected for supervisorLinger. Short: an agent that
// needs one again starts a new one, and a stopped cluster (or a finished
// test) must not leave supervisors behind.
func (sv *supervisor) idleExit(ln net.Listener) {
	sv.mu.Lock()
	sv.lastAt = time.Now()
	sv.mu.Unlock()
	for {
		time.Sleep(supervisorLinger / 4)
		sv.mu.Lock()
		idle := len(sv.running) == 0 && sv.agent == nil && time.Since(sv.lastAt) > supervisorLinger
		sv.mu.Unlock()
		if idle {
			ln.Close()
			return
		}
	}
}
