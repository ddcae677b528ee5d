//go:build unix

package executor

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// errToHelper: a stdio path is (or may be) a FIFO, or the open would have to
// wait (a lease being broken). The helper opens such files in its own
// process, where blocking until the other end shows up is harmless; the
// direct path must not block the agent's Start on them.
var errToHelper = errors.New("executor: leave this launch to the step helper")

// startDirect launches spec's program from the agent itself: the stdio
// files are opened here with the user's filesystem identity (see
// withUserFS), and fork+exec switches user, group and directory in the
// child before execve. A launch failure becomes a Process whose Wait
// reports it, as on the helper path.
func startDirect(spec *Spec) (Process, error) {
	l := &directLaunch{spec: spec}
	switch uid := uint32(os.Getuid()); {
	case os.Geteuid() != 0:
		// Unprivileged agent (tests, personal clusters): it can only run
		// steps as itself, with its own groups (as in the helper).
		if spec.UID != uid {
			return l.failed(fmt.Sprintf("cannot run as uid %d: the agent is not root", spec.UID)), nil
		}
		l.prepare()
	case spec.UID == 0 && spec.GID == uint32(os.Getegid()):
		// A root job: the agent's identity already is the job's for
		// opening files. The child still sets the job's groups.
		l.cred = &syscall.Credential{Uid: spec.UID, Gid: spec.GID, Groups: spec.Groups}
		l.prepare()
	case !canSwitchFS:
		return startHelper(spec)
	default:
		l.cred = &syscall.Credential{Uid: spec.UID, Gid: spec.GID, Groups: spec.Groups}
		if err := withUserFS(spec.UID, spec.GID, spec.Groups, l.prepare); err != nil {
			l.closeFiles()
			if errors.Is(err, errRestoreFS) {
				// Not the user's doing, and not a reason to stop
				// steps: this thread is gone, the next uses another.
				return nil, err
			}
			// Could not take the user's identity: like a failed
			// privilege drop in the helper.
			return l.failed(err.Error()), nil
		}
	}
	if l.toHelper {
		l.closeFiles()
		return startHelper(spec)
	}
	if l.msg != "" {
		l.closeFiles()
		return l.failed(l.msg), nil
	}
	return l.start()
}

// directLaunch carries a direct launch through its stages.
type directLaunch struct {
	spec *Spec
	cred *syscall.Credential // nil: the child keeps the agent's identity

	in, out, errf *os.File // opened stdio files; nil: a pipe or /dev/null
	exe           string   // what execve gets: Path, or its PATH match
	asUser        bool     // prepare is running with the user's rights
	msg           string   // the launch error, "" if none
	toHelper      bool     // see errToHelper
}

// prepare checks the working directory, opens the stdio files and resolves
// the program, all with the identity it runs under (the user's, via
// withUserFS). The order and the messages are the helper's: chdir, stdin,
// stdout, stderr, exec.
func (l *directLaunch) prepare() {
	s := l.spec
	l.asUser = true
	defer func() { l.asUser = false }()
	if s.Dir != "" {
		// The child chdirs after setuid, and that is what enforces the
		// user's rights; this check, with the same rights, is only there
		// to say what failed (fork/exec reports a bare errno). Stat of
		// "Dir/." needs search permission on Dir itself, like chdir.
		var st syscall.Stat_t
		if err := syscall.Stat(strings.TrimSuffix(s.Dir, "/")+"/.", &st); err != nil {
			l.fail(fmt.Sprintf("cannot change directory to %s: %v", s.Dir, err))
			return
		}
	}
	if s.Stdin != "" && s.StdinR == nil {
		f, err := openInput(l.rel(s.Stdin))
		if l.opened(err) {
			l.fail(fmt.Sprintf("cannot open input file %s: %v", s.Stdin, err))
		}
		if err != nil {
			return
		}
		l.in = f
	}
	if s.Stdout != "" && s.StdoutW == nil {
		f, err := openOutputFile(l.rel(s.Stdout), s.Append, outputPerm(s.Umask))
		if l.opened(err) {
			l.fail(fmt.Sprintf("cannot open output file %s: %v", s.Stdout, err))
		}
		if err != nil {
			return
		}
		l.out = f
	}
	if s.Stderr != "" && s.StderrW == nil {
		if l.out != nil && s.Stderr == s.Stdout {
			l.errf = l.out
		} else {
			f, err := openOutputFile(l.rel(s.Stderr), s.Append, outputPerm(s.Umask))
			if l.opened(err) {
				l.fail(fmt.Sprintf("cannot open error file %s: %v", s.Stderr, err))
			}
			if err != nil {
				return
			}
			// "-o x -e ./x" names one file twice: share the first
			// descriptor so the two streams do not overwrite each other.
			if l.out != nil && sameFile(int(f.Fd()), int(l.out.Fd())) {
				f.Close()
				f = l.out
			}
			l.errf = f
		}
	}
	exe, err := l.lookPath()
	if err != nil {
		l.fail(fmt.Sprintf("cannot execute %s: %v", s.Path, err))
		return
	}
	l.exe = exe
}

// opened sorts an open error: nil or errToHelper is not a launch failure
// (the latter sets toHelper); anything else is.
func (l *directLaunch) opened(err error) bool {
	if errors.Is(err, errToHelper) {
		l.toHelper = true
		return false
	}
	return err != nil
}

// rel resolves a path given relative to the program's working directory.
func (l *directLaunch) rel(path string) string {
	if l.spec.Dir == "" || filepath.IsAbs(path) {
		return path
	}
	return filepath.Join(l.spec.Dir, path)
}

// lookPath finds the program the way the helper's execvp does: a Path with
// a '/' is used as is (relative to Dir: the child chdirs first); otherwise
// each directory of the PATH in Env, in order, and the first regular file
// with an execute bit wins. A candidate that exists but cannot be executed
// (or a directory that cannot be searched) makes the error "permission
// denied" if nothing better turns up. Runs with the user's rights.
func (l *directLaunch) lookPath() (string, error) {
	file := l.spec.Path
	if strings.Contains(file, "/") {
		return file, nil
	}
	var firstErr error
	for _, dir := range strings.Split(envPath(l.spec.Env), ":") {
		if dir == "" {
			dir = "."
		}
		cand := dir + "/" + file
		var st syscall.Stat_t
		err := syscall.Stat(l.rel(cand), &st)
		switch {
		case err == nil && st.Mode&syscall.S_IFMT == syscall.S_IFREG && st.Mode&0o111 != 0:
			// Relative to the child's working directory, like the path
			// execve gets in the helper.
			return cand, nil
		case err == nil, errors.Is(err, syscall.EACCES):
			if firstErr == nil {
				firstErr = syscall.EACCES
			}
		case errors.Is(err, syscall.ENOENT), errors.Is(err, syscall.ENOTDIR):
		default:
			return "", err
		}
	}
	if firstErr != nil {
		return "", firstErr
	}
	return "", errors.New("command not found")
}

// envPath is the PATH of env (the last one wins, as in the helper), or the
// helper's default.
func envPath(env []string) string {
	path := "/usr/local/bin:/usr/bin:/bin"
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	return path
}

// fail records the launch error and, where the helper would, shows it in
// the step's stderr: the stream (written by Wait, see failed), the opened
// file, or, while running with the user's rights and before stderr was
// opened, an absolute Stderr path. Never as root: root must not create
// files on the user's behalf.
func (l *directLaunch) fail(msg string) {
	l.msg = msg
	line := []byte(stderrPrefix + msg + "\n")
	s := l.spec
	switch {
	case s.StderrW != nil:
	case l.errf != nil:
		writeAll(int(l.errf.Fd()), line)
	case l.asUser && filepath.IsAbs(s.Stderr):
		if f, err := openOutputFile(s.Stderr, s.Append, outputPerm(s.Umask)); err == nil {
			writeAll(int(f.Fd()), line)
			f.Close()
		}
	}
}

func (l *directLaunch) closeFiles() {
	for _, f := range []*os.File{l.in, l.out, l.errf} {
		if f != nil {
			f.Close() // l.errf may be l.out: the second Close is a no-op
		}
	}
	l.in, l.out, l.errf = nil, nil, nil
}

// start forks and execs the program with the prepared files.
func (l *directLaunch) start() (Process, error) {
	spec := l.spec
	statusDone := make(chan struct{})
	close(statusDone) // no status pipe: fork/exec reports launch errors
	p := &process{statusDone: statusDone, exited: make(chan struct{})}
	s := &streams{p: p}
	if err := s.connect(spec); err != nil {
		l.closeFiles()
		s.abort()
		return nil, err
	}
	files := []*os.File{s.stdin, s.stdout, s.stderr}
	for i, f := range []*os.File{l.in, l.out, l.errf} {
		if files[i] == nil {
			files[i] = f
		}
	}
	var devNull *os.File
	for i, f := range files {
		if f != nil {
			continue
		}
		if devNull == nil {
			fd, err := syscall.Open(os.DevNull, syscall.O_RDWR|syscall.O_CLOEXEC, 0)
			if err != nil {
				l.closeFiles()
				s.abort()
				return nil, fmt.Errorf("executor: open %s: %w", os.DevNull, err)
			}
			devNull = os.NewFile(uintptr(fd), os.DevNull)
		}
		files[i] = devNull
	}
	env := spec.Env
	if env == nil {
		env = []string{} // nil would mean the agent's environment
	}
	sys := &syscall.SysProcAttr{Setpgid: true, Credential: l.cred}
	if spec.Terminal {
		// setsid also makes the child a process group leader, so the
		// group signals reach it as before.
		sys = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0, Credential: l.cred}
	}
	var proc *os.Process
	err := inCgroup(spec, sys, func() error {
		var err error
		proc, err = os.StartProcess(l.exe, append([]string{spec.Path}, spec.Args...), &os.ProcAttr{
			Dir:   spec.Dir,
			Env:   env,
			Files: files,
			Sys:   sys,
		})
		return err
	})
	if devNull != nil {
		devNull.Close()
	}
	if err != nil {
		// The child could not switch user or directory, or execve
		// failed: a launch failure, as the helper would report it.
		var errno syscall.Errno
		if errors.As(err, &errno) {
			err = errno
		}
		l.fail(fmt.Sprintf("cannot execute %s: %v", spec.Path, err))
		l.closeFiles()
		s.abort()
		return l.failed(l.msg), nil
	}
	l.closeFiles()
	p.proc, p.pgid = proc, proc.Pid
	s.started()
	return p, nil
}

// failed returns the Process of a launch that did not happen.
func (l *directLaunch) failed(msg string) Process {
	f := &failedProcess{
		res:  Result{ExitCode: launchFailedStatus, Err: errors.New(msg)},
		done: make(chan struct{}),
	}
	if w := l.spec.StderrW; w != nil {
		// As the helper's message would come through the stderr pipe.
		go func() {
			defer close(f.done)
			w.Write([]byte(stderrPrefix + msg + "\n"))
		}()
	} else {
		close(f.done)
	}
	return f
}

// failedProcess is a step whose program never started (direct path).
type failedProcess struct {
	res    Result
	done   chan struct{} // closed once the message reached StderrW
	waited atomic.Bool
	once   sync.Once
}

func (f *failedProcess) Pid() int { return 0 }

func (f *failedProcess) Signal(syscall.Signal) error {
	if f.waited.Load() {
		return os.ErrProcessDone
	}
	return nil
}

func (f *failedProcess) Terminate(time.Duration) {}

func (f *failedProcess) Wait() Result {
	f.once.Do(func() {
		<-f.done
		f.waited.Store(true)
	})
	return f.res
}

// openInput opens a stdin file. A FIFO is left to the helper: opening it
// blocks until a writer shows up.
func openInput(path string) (*os.File, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return nil, err
	}
	if st.Mode&syscall.S_IFMT == syscall.S_IFIFO {
		return nil, errToHelper
	}
	// O_NONBLOCK in case it became a FIFO since the stat.
	return openNonblock(path, syscall.O_RDONLY, 0, 0)
}

// openOutputFile opens a stdout/stderr file the way the helper's
// openOutput does, except that it never blocks: a FIFO without a reader
// (ENXIO) or a lease being broken (EAGAIN) is left to the helper.
func openOutputFile(path string, appendMode bool, perm uint32) (*os.File, error) {
	flags, keep := syscall.O_WRONLY|syscall.O_CREAT, 0
	if appendMode {
		flags |= syscall.O_APPEND
		keep = syscall.O_APPEND
	} else {
		flags |= syscall.O_TRUNC
	}
	return openNonblock(path, flags, perm, keep)
}

// openNonblock opens path with O_NONBLOCK|O_CLOEXEC added, then sets the
// status flags to keep: the program inherits the open file description and
// must see a blocking file.
func openNonblock(path string, flags int, perm uint32, keep int) (*os.File, error) {
	fd, err := syscall.Open(path, flags|syscall.O_NONBLOCK|syscall.O_CLOEXEC, perm)
	switch {
	case errors.Is(err, syscall.ENXIO), errors.Is(err, syscall.EAGAIN):
		return nil, errToHelper
	case err != nil:
		return nil, err
	}
	if _, err := unix.FcntlInt(uintptr(fd), syscall.F_SETFL, keep); err != nil {
		syscall.Close(fd)
		return nil, err
	}
	// After F_SETFL: NewFile would hand a non-blocking fd to the poller.
	return os.NewFile(uintptr(fd), path), nil
}
