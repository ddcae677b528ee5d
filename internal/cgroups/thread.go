package cgroups

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

var (
	mountsOnce sync.Once
	mountsList []mount
	mountsErr  error
)

func cachedMounts() ([]mount, error) {
	mountsOnce.Do(func() { mountsList, mountsErr = mounts() })
	return mountsList, mountsErr
}

// EnterThread moves the calling OS thread (the caller holds
// runtime.LockOSThread) into the v1 groups dirs, by writing its thread id
// to their tasks files; a child it forks then starts in them. restore
// moves the thread back where it was. When EnterThread fails part-way, or
// restore fails, the thread may sit in a job's groups: the caller must let
// it die (end the goroutine still locked).
func EnterThread(dirs []string) (restore func() error, err error) {
	if len(dirs) == 0 {
		return func() error { return nil }, nil
	}
	ms, err := cachedMounts()
	if err != nil {
		return nil, err
	}
	tid := strconv.Itoa(unix.Gettid())
	back, err := homeDirs(ms, dirs)
	if err != nil {
		return nil, err
	}
	for _, d := range dirs {
		if err := writeJoin(d, tid); err != nil {
			return nil, err
		}
	}
	return func() error {
		var errs []error
		for _, d := range back {
			errs = append(errs, writeHome(d, tid))
		}
		err := errors.Join(errs...)
		if err != nil {
			// The process's groups may have changed (moved by its
			// service manager): read them afresh next time.
			homeMu.Lock()
			clear(homeCache)
			for _, fd := range homeTasks {
				unix.Close(fd)
			}
			clear(homeTasks)
			homeMu.Unlock()
		}
		return err
	}, nil
}

var (
	homeMu    sync.Mutex
	homeCache = map[string]string{} // v1 group dir → this process's group in that hierarchy
	// homeTasks: the tasks files of those groups, open for writing: every
	// launch writes a thread id back into each (a node supervisor: six per
	// batch job), and kernfs takes each write on its own whatever the file
	// offset, so they need not be opened and closed each time.
	homeTasks = map[string]int{}
)

// joinTasks are the tasks files of the groups threads were last moved
// into, open for writing (joinCacheSize at most, the least recently used
// closed first; joinOrder oldest first). Every batch launch joins the
// node's groups in the hierarchies where jobs set no limit (devices,
// pids), and a job's steps join its groups where they set none of their
// own: opening a tasks file costs about three times the write that moves
// the thread.
var (
	joinMu    sync.Mutex
	joinTasks = map[string]int{}
	joinOrder []string
)

const joinCacheSize = 16

// writeJoin moves thread tid into the group dir. A descriptor kept from
// an earlier launch whose group was removed since (perhaps made again at
// the same path: a requeued job) fails the write (ENODEV): the file is
// then opened afresh. One whose group was renamed (kept for a later job,
// recycle_v1.go) would not fail: it is used only while it is still the
// file at dir (same inode). The lock is held through the write, as in
// writeHome: an evicted descriptor's number must not be written to once
// reused.
func writeJoin(dir, tid string) error {
	joinMu.Lock()
	defer joinMu.Unlock()
	if fd, ok := joinTasks[dir]; ok {
		if sameFile(fd, filepath.Join(dir, "tasks")) && writeTid(fd, tid) == nil {
			i := slices.Index(joinOrder, dir)
			joinOrder = append(slices.Delete(joinOrder, i, i+1), dir)
			return nil
		}
		unix.Close(fd)
		delete(joinTasks, dir)
		joinOrder = slices.DeleteFunc(joinOrder, func(d string) bool { return d == dir })
	}
	p := filepath.Join(dir, "tasks")
	fd, err := openRetry(p, unix.O_WRONLY|unix.O_CLOEXEC)
	if err != nil {
		return &os.PathError{Op: "open", Path: p, Err: err}
	}
	if err := writeTid(fd, tid); err != nil {
		unix.Close(fd)
		return &os.PathError{Op: "write " + strconv.Quote(tid), Path: p, Err: err}
	}
	if len(joinOrder) == joinCacheSize {
		unix.Close(joinTasks[joinOrder[0]])
		delete(joinTasks, joinOrder[0])
		joinOrder = slices.Delete(joinOrder, 0, 1)
	}
	joinTasks[dir] = fd
	joinOrder = append(joinOrder, dir)
	return nil
}

// sameFile: fd is the file at path now.
func sameFile(fd int, path string) bool {
	var a, b unix.Stat_t
	return unix.Fstat(fd, &a) == nil && unix.Stat(path, &b) == nil && a.Ino == b.Ino && a.Dev == b.Dev
}

func writeTid(fd int, tid string) error {
	for {
		_, err := unix.Write(fd, []byte(tid))
		if err != unix.EINTR {
			return err
		}
	}
}

// writeHome moves thread tid back into the home group dir. The lock is
// held through the write: a failed restore elsewhere closes the cached
// descriptors, whose numbers must not be written to once reused.
func writeHome(dir, tid string) error {
	homeMu.Lock()
	defer homeMu.Unlock()
	fd, ok := homeTasks[dir]
	if !ok {
		var err error
		if fd, err = openRetry(filepath.Join(dir, "tasks"), unix.O_WRONLY|unix.O_CLOEXEC); err != nil {
			return &os.PathError{Op: "open", Path: filepath.Join(dir, "tasks"), Err: err}
		}
		homeTasks[dir] = fd
	}
	if err := writeTid(fd, tid); err != nil {
		return &os.PathError{Op: "write " + strconv.Quote(tid), Path: filepath.Join(dir, "tasks"), Err: err}
	}
	return nil
}

// homeDirs is, for each of dirs, the group of the same hierarchy this
// process's threads live in: where a thread goes back after a fork. It
// is read once per hierarchy: every thread of the process shares it (Go
// creates new threads from a template thread while one is locked, so no
// thread is born inside a job's group).
func homeDirs(ms []mount, dirs []string) ([]string, error) {
	homeMu.Lock()
	defer homeMu.Unlock()
	out := make([]string, len(dirs))
	var self []byte
	for i, d := range dirs {
		mt := filepath.Dir(d)
		for _, m := range ms {
			if !m.v2 && strings.HasPrefix(d, m.dir+"/") {
				mt = m.dir
			}
		}
		if h, ok := homeCache[mt]; ok {
			out[i] = h
			continue
		}
		if self == nil {
			var err error
			if self, err = os.ReadFile("/proc/thread-self/cgroup"); err != nil {
				return nil, err
			}
		}
		h, err := originalDir(ms, self, d)
		if err != nil {
			return nil, err
		}
		homeCache[mt] = h
		out[i] = h
	}
	return out, nil
}

// originalDir finds, for a directory in some v1 hierarchy, the directory
// of that hierarchy the thread is in now (from /proc/thread-self/cgroup).
func originalDir(ms []mount, self []byte, dir string) (string, error) {
	var mt *mount
	for i := range ms {
		m := &ms[i]
		if !m.v2 && strings.HasPrefix(dir, m.dir+"/") && (mt == nil || len(m.dir) > len(mt.dir)) {
			mt = m
		}
	}
	if mt == nil {
		return "", errors.New("cgroups: " + dir + " is on no v1 hierarchy")
	}
	sc := bufio.NewScanner(bytes.NewReader(self))
	for sc.Scan() {
		f := strings.SplitN(sc.Text(), ":", 3)
		if len(f) != 3 || f[1] == "" {
			continue
		}
		var ctrls []string
		for _, c := range strings.Split(f[1], ",") {
			if knownV1[c] {
				ctrls = append(ctrls, c)
			}
		}
		slices.Sort(ctrls)
		if slices.Equal(ctrls, mt.controllers) {
			return filepath.Join(mt.dir, f[2]), nil
		}
	}
	return "", errors.New("cgroups: this thread's group in " + mt.dir + " is unknown")
}
