//go:build unix

package executor

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// launchFailedStatus is the helper's exit status when the program could not
// be started; the status pipe carries the reason.
const launchFailedStatus = 127

// stderrPrefix starts the launch error lines written into the step's own
// stderr, where the user looks first (Slurm's step daemon does the same).
const stderrPrefix = "drover: error: "

// joinCgroups places the step helper, still root, in the step's cgroups
// (Spec.CgroupV1Dirs/CgroupV2Dir) before the privilege drop and before any
// user-controlled code, so every process of the step is accounted and
// contained from its first instruction. Set on Linux (cgroup_linux.go).
var joinCgroups = func(hs *helperSpec) error { return nil }

// StepExecMain is the step helper's main: the binary calls it when argv[1]
// is StepExecArg, passing os.Args[2:] (unused today). It reads the spec from
// fd 3, reports launch errors on fd 4, and on success does not return: the
// process becomes the step's program. The return value is the exit status.
func StepExecMain(args []string) int {
	_ = args
	// Run by hand, fds 3 and 4 are not our pipes; they may even be files
	// the Go runtime opened at startup (cgroup CPU limits), which must not
	// be read or closed here.
	if !isPipe(specFD) || !isPipe(statusFD) {
		writeAll(2, []byte(stderrPrefix+"the step helper is started by the node agent only\n"))
		return launchFailedStatus
	}
	// Neither fd may leak into the program; the status fd closing on a
	// successful execve is what tells the parent the launch worked.
	syscall.CloseOnExec(specFD)
	syscall.CloseOnExec(statusFD)

	h := &helper{}
	data, err := readAll(specFD)
	syscall.Close(specFD)
	if err != nil {
		return h.fail(fmt.Sprintf("step helper: read spec: %v", err))
	}
	if err := json.Unmarshal(data, &h.spec); err != nil {
		return h.fail(fmt.Sprintf("step helper: decode spec: %v", err))
	}
	return h.run()
}

func isPipe(fd int) bool {
	var st syscall.Stat_t
	return syscall.Fstat(fd, &st) == nil && st.Mode&syscall.S_IFMT == syscall.S_IFIFO
}

// helper carries the launch through its stages; dropped and stdioReady say
// how far it got, which decides where a launch error can be shown.
type helper struct {
	spec       helperSpec
	dropped    bool // running as the user now: files may be opened
	stdioReady bool // fd 2 is the step's stderr
}

func (h *helper) run() int {
	hs := &h.spec
	if err := joinCgroups(hs); err != nil {
		return h.fail(fmt.Sprintf("cannot join the step's cgroups: %v", err))
	}
	if err := dropPrivileges(hs); err != nil {
		return h.fail(err.Error())
	}
	h.dropped = true
	if hs.Umask >= 0 {
		syscall.Umask(hs.Umask & 0o777)
	}
	if hs.Dir != "" {
		if err := syscall.Chdir(hs.Dir); err != nil {
			return h.fail(fmt.Sprintf("cannot change directory to %s: %v", hs.Dir, err))
		}
	}
	if err := setupStdio(hs); err != nil {
		return h.fail(err.Error())
	}
	h.stdioReady = true

	argv := append([]string{hs.Path}, hs.Args...)
	err := execvp(hs.Path, argv, withPid(hs.Env, hs.PidEnv, os.Getpid()))
	return h.fail(fmt.Sprintf("cannot execute %s: %v", hs.Path, err))
}

// fail reports msg to the parent through the status pipe and, where it can
// do so as the user, into the step's stderr; it returns the exit status.
func (h *helper) fail(msg string) int {
	line := []byte(stderrPrefix + msg + "\n")
	switch {
	case h.stdioReady, h.spec.PipeStderr:
		writeAll(2, line)
	case h.dropped && filepath.IsAbs(h.spec.Stderr):
		// Stdio is not set up yet (the chdir failed): an absolute stderr
		// path is still meaningful. Never opened before the drop: root
		// must not create files on the user's behalf.
		if fd, err := openOutput(h.spec.Stderr, h.spec.Append, outputPerm(h.spec.Umask)); err == nil {
			writeAll(fd, line)
			syscall.Close(fd)
		}
	}
	writeAll(statusFD, []byte(msg))
	return launchFailedStatus
}

// dropPrivileges switches to the step's user for good: groups, then gid,
// then uid (after setuid there is no right left to change the others).
// Go applies these to every thread of the process on Linux.
func dropPrivileges(hs *helperSpec) error {
	if os.Geteuid() != 0 {
		// Unprivileged agent (tests, personal clusters): it can only run
		// steps as itself.
		if hs.UID == uint32(os.Getuid()) {
			return nil
		}
		return fmt.Errorf("cannot run as uid %d: the agent is not root", hs.UID)
	}
	groups := make([]int, len(hs.Groups))
	for i, g := range hs.Groups {
		groups[i] = int(g)
	}
	// An empty list clears root's own supplementary groups.
	if err := syscall.Setgroups(groups); err != nil {
		return fmt.Errorf("cannot set supplementary groups %v: %v", hs.Groups, err)
	}
	if err := syscall.Setgid(int(hs.GID)); err != nil {
		return fmt.Errorf("cannot set gid %d: %v", hs.GID, err)
	}
	if err := syscall.Setuid(int(hs.UID)); err != nil {
		return fmt.Errorf("cannot set uid %d: %v", hs.UID, err)
	}
	return nil
}

// setupStdio opens the stdio paths (as the user, the drop is done) and
// moves them onto fds 0-2. Streams the parent connected to pipes, and empty
// paths (/dev/null from the parent), are left alone.
func setupStdio(hs *helperSpec) error {
	if hs.Stdin != "" && !hs.PipeStdin {
		fd, err := syscall.Open(hs.Stdin, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("cannot open input file %s: %v", hs.Stdin, err)
		}
		if err := moveFD(fd, 0); err != nil {
			return err
		}
	}
	outFD := -1
	if hs.Stdout != "" && !hs.PipeStdout {
		fd, err := openOutput(hs.Stdout, hs.Append, outputPerm(hs.Umask))
		if err != nil {
			return fmt.Errorf("cannot open output file %s: %v", hs.Stdout, err)
		}
		if err := unix.Dup2(fd, 1); err != nil {
			return fmt.Errorf("dup2 stdout: %v", err)
		}
		outFD = fd
	}
	if hs.Stderr != "" && !hs.PipeStderr {
		fd := outFD
		if outFD < 0 || hs.Stderr != hs.Stdout {
			var err error
			if fd, err = openOutput(hs.Stderr, hs.Append, outputPerm(hs.Umask)); err != nil {
				return fmt.Errorf("cannot open error file %s: %v", hs.Stderr, err)
			}
			// "-o x -e ./x" names one file twice: share the first
			// descriptor so the two streams do not overwrite each other.
			if outFD >= 0 && sameFile(fd, outFD) {
				syscall.Close(fd)
				fd = outFD
			}
		}
		if err := unix.Dup2(fd, 2); err != nil {
			return fmt.Errorf("dup2 stderr: %v", err)
		}
		if fd != outFD {
			syscall.Close(fd)
		}
	}
	if outFD >= 0 {
		syscall.Close(outFD)
	}
	return nil
}

// openOutput opens an output file the way the step's files are opened.
// Raw syscalls rather than os.OpenFile: the os package would switch a FIFO
// to non-blocking mode, and the program would inherit that.
func openOutput(path string, appendMode bool, perm uint32) (int, error) {
	flags := syscall.O_WRONLY | syscall.O_CREAT | syscall.O_CLOEXEC
	if appendMode {
		flags |= syscall.O_APPEND
	} else {
		flags |= syscall.O_TRUNC
	}
	return syscall.Open(path, flags, perm)
}

func moveFD(fd, to int) error {
	if fd == to {
		// Fresh descriptors come out close-on-exec; keep this one open.
		_, err := unix.FcntlInt(uintptr(fd), syscall.F_SETFD, 0)
		return err
	}
	if err := unix.Dup2(fd, to); err != nil {
		return fmt.Errorf("dup2 fd %d: %v", to, err)
	}
	return syscall.Close(fd)
}

func sameFile(a, b int) bool {
	var sa, sb syscall.Stat_t
	if syscall.Fstat(a, &sa) != nil || syscall.Fstat(b, &sb) != nil {
		return false
	}
	return sa.Dev == sb.Dev && sa.Ino == sb.Ino
}

// execvp execs file, searching the PATH of env when file has no '/', the
// way a shell would: a missing candidate moves on, a permission error is
// remembered in case nothing better turns up. It returns only on failure.
func execvp(file string, argv, env []string) error {
	if strings.Contains(file, "/") {
		return syscall.Exec(file, argv, env)
	}
	path := "/usr/local/bin:/usr/bin:/bin"
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	var firstErr error
	for _, dir := range strings.Split(path, ":") {
		if dir == "" {
			dir = "."
		}
		err := syscall.Exec(dir+"/"+file, argv, env)
		switch {
		case errors.Is(err, syscall.ENOENT), errors.Is(err, syscall.ENOTDIR):
		case errors.Is(err, syscall.EACCES):
			if firstErr == nil {
				firstErr = err
			}
		default:
			return err
		}
	}
	if firstErr != nil {
		return firstErr
	}
	return errors.New("command not found")
}

// withPid sets each variable named in names to pid, replacing any value.
func withPid(env, names []string, pid int) []string {
	if len(names) == 0 {
		return env
	}
	out := make([]string, 0, len(env)+len(names))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(names, name) {
			out = append(out, kv)
		}
	}
	for _, n := range names {
		out = append(out, n+"="+strconv.Itoa(pid))
	}
	return out
}

func readAll(fd int) ([]byte, error) {
	var out []byte
	buf := make([]byte, 64<<10)
	for {
		n, err := syscall.Read(fd, buf)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return out, nil
		}
		out = append(out, buf[:n]...)
	}
}

func writeAll(fd int, b []byte) {
	for len(b) > 0 {
		n, err := syscall.Write(fd, b)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil || n <= 0 {
			return
		}
		b = b[n:]
	}
}
