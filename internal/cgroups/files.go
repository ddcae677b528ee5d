package cgroups

import (
	"bufio"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func writeFile(dir, name, val string) error {
	f, err := os.OpenFile(filepath.Join(dir, name), os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(val)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return &os.PathError{Op: "write " + strconv.Quote(val), Path: filepath.Join(dir, name), Err: errors.Unwrap(err)}
	}
	return nil
}

func readString(dir, name string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, name))
	return strings.TrimSpace(string(b)), err
}

func readInt(dir, name string) (int64, error) {
	s, err := readString(dir, name)
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
func readKeyed(dir, name string) (map[string]int64, error) {
	f, err := os.Open(filepath.Join(dir, name))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]int64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			continue
		}
		if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
			out[k] = n
		}
	}
	return out, sc.Err()
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
		b, err := os.ReadFile(filepath.Join(p, "cgroup.procs"))
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
// ends; freeze/thaw (optional) stop the group forking meanwhile.
func killLoop(ctx context.Context, list func() ([]int, error), freeze, thaw func() error) error {
	for {
		pids, err := list()
		if err != nil {
			return err
		}
		if len(pids) == 0 {
			return nil
		}
		if freeze != nil {
			_ = freeze()
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		if thaw != nil {
			_ = thaw() // killed processes die only once thawed
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
}
