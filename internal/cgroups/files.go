package cgroups

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Cgroup files are read and written with bare system calls: os.ReadFile
// and os.OpenFile cost three times as much (fstat, registration with the
// poller, an extra read), which adds up in Create, Delete and Stats.

// writeFile writes val to dir/name in one write (the kernel takes a
// cgroup file's value whole).
func writeFile(dir, name, val string) error { return (*at)(nil).writeFile(dir, name, val) }

func (a *at) writeFile(dir, name, val string) error {
	fd, err := a.open(dir, name, syscall.O_WRONLY|syscall.O_TRUNC|syscall.O_CLOEXEC)
	if err != nil {
		return &os.PathError{Op: "open", Path: filepath.Join(dir, name), Err: err}
	}
	defer syscall.Close(fd)
	for {
		_, err = syscall.Write(fd, []byte(val))
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		return &os.PathError{Op: "write " + strconv.Quote(val), Path: filepath.Join(dir, name), Err: err}
	}
	return nil
}

func openRetry(p string, flags int) (int, error) {
	for {
		fd, err := syscall.Open(p, flags, 0)
		if err != syscall.EINTR {
			return fd, err
		}
	}
}

// at opens the files of a few directories relative to descriptors of
// those directories (O_PATH, opened once each): one cgroupfs path walk per
// directory instead of one per file. cgroupfs walks a path by reference,
// name by name, a few microseconds for a job's group; a job's end read
// and wrote ~20 files in 6 directories (Stats, Recycle). A nil *at opens
// by the whole path. An at serves one operation: a directory removed and
// made again meanwhile is not seen.
type at struct{ fds map[string]int }

func (a *at) dirFD(dir string) int {
	if fd, ok := a.fds[dir]; ok {
		return fd
	}
	fd, err := openRetry(dir, unix.O_PATH|syscall.O_DIRECTORY|syscall.O_CLOEXEC)
	if err != nil {
		fd = -1 // opened by path below: the error that gives
	}
	if a.fds == nil {
		a.fds = map[string]int{}
	}
	a.fds[dir] = fd
	return fd
}

func (a *at) close() {
	for _, fd := range a.fds {
		if fd >= 0 {
			syscall.Close(fd)
		}
	}
}

func (a *at) open(dir, name string, flags int) (int, error) {
	if a != nil {
		if d := a.dirFD(dir); d >= 0 {
			for {
				fd, err := unix.Openat(d, name, flags, 0)
				if err != syscall.EINTR {
					return fd, err
				}
			}
		}
	}
	return openRetry(filepath.Join(dir, name), flags)
}

// stat is syscall.Stat of dir.
func (a *at) stat(dir string, st *syscall.Stat_t) error {
	if a != nil {
		if d := a.dirFD(dir); d >= 0 {
			return syscall.Fstat(d, st)
		}
	}
	return syscall.Stat(dir, st)
}

// exists reports whether dir is there (dir itself: name "").
func (a *at) exists(dir string) bool {
	var st syscall.Stat_t
	return a.stat(dir, &st) == nil
}

// readFile reads dir/name whole.
func readFile(dir, name string) ([]byte, error) { return (*at)(nil).readFile(dir, name) }

func (a *at) readFile(dir, name string) ([]byte, error) {
	fd, err := a.open(dir, name, syscall.O_RDONLY|syscall.O_CLOEXEC)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: filepath.Join(dir, name), Err: err}
	}
	defer syscall.Close(fd)
	buf := make([]byte, 0, 512)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := syscall.Read(fd, buf[len(buf):cap(buf)])
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil:
			return nil, &os.PathError{Op: "read", Path: filepath.Join(dir, name), Err: err}
		case n == 0:
			return buf, nil
		}
		buf = buf[:len(buf)+n]
	}
}

func readString(dir, name string) (string, error) { return (*at)(nil).readString(dir, name) }

func (a *at) readString(dir, name string) (string, error) {
	b, err := a.readFile(dir, name)
	return strings.TrimSpace(string(b)), err
}

func readInt(dir, name string) (int64, error) { return (*at)(nil).readInt(dir, name) }

func (a *at) readInt(dir, name string) (int64, error) {
	s, err := a.readString(dir, name)
	if err != nil {
		return 0, err
	}
	if s == "max" {
		return -1, nil
	}
	return strconv.ParseInt(s, 10, 64)
}

// readKeyed reads "key value" lines (memory.events, cpu.stat,
// memory.oom_control) into a map.
func readKeyed(dir, name string) (map[string]int64, error) { return (*at)(nil).readKeyed(dir, name) }

func (a *at) readKeyed(dir, name string) (map[string]int64, error) {
	b, err := a.readFile(dir, name)
	if err != nil {
		return nil, err
	}
	out := map[string]int64{}
	for line := range strings.Lines(string(b)) {
		k, v, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
			out[k] = n
		}
	}
	return out, nil
}

// procsUnder lists the pids of dir and every group below it.
func procsUnder(dir string) ([]int, error) {
	var out []int
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil
			}
			return err
		}
		if !d.IsDir() {
			return nil
		}
		b, err := readFile(p, "cgroup.procs")
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil
			}
			return err
		}
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil {
				out = append(out, pid)
			}
		}
		return nil
	})
	return out, err
}

// removeTree removes dir and its sub-groups. A group without children
// goes with one rmdir; only a busy one is listed (its children removed
// first). A group still holding an exiting process is busy for a moment:
// retried.
// rmdirGone removes the empty group dir and says whether it is gone.
func rmdirGone(dir string) bool {
	err := syscall.Rmdir(dir)
	return err == nil || errors.Is(err, syscall.ENOENT)
}

func removeTree(dir string) error {
	err := syscall.Rmdir(dir)
	if err == nil || errors.Is(err, syscall.ENOENT) {
		return nil
	}
	if !errors.Is(err, syscall.EBUSY) && !errors.Is(err, syscall.ENOTEMPTY) {
		return &os.PathError{Op: "rmdir", Path: dir, Err: err}
	}
	ents, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	for _, e := range ents {
		if e.IsDir() {
			if err := removeTree(filepath.Join(dir, e.Name())); err != nil {
				return err
			}
		}
	}
	for try := 0; ; try++ {
		err = syscall.Rmdir(dir)
		if err == nil || errors.Is(err, syscall.ENOENT) {
			return nil
		}
		if !errors.Is(err, syscall.EBUSY) || try == 100 {
			return &os.PathError{Op: "rmdir", Path: dir, Err: err}
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// killLoop SIGKILLs the listed processes until list returns none or ctx
// ends (a process stuck in the kernel, state D, may never die: the caller
// decides how long to wait). freeze/thaw (optional) stop the group
// forking while it is listed and killed.
func killLoop(ctx context.Context, list func() ([]int, error), freeze, thaw func() error) error {
	pids, err := list()
	for {
		if err != nil {
			return err
		}
		if len(pids) == 0 {
			return nil
		}
		if freeze != nil {
			_ = freeze()
			if pids, err = list(); err != nil {
				_ = thaw()
				return err
			}
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		if thaw != nil {
			_ = thaw() // killed processes die only once thawed
		}
		select {
		case <-ctx.Done():
			if pids, err = list(); err == nil && len(pids) == 0 {
				return nil
			}
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
		pids, err = list()
	}
}
