package executor

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/drover-hpc/drover/internal/cgroups"
)

// inCgroup runs fork (which starts the program) so that the child is born
// inside the spec's cgroups: no instruction of the user's runs outside
// them, and nothing it forks early can escape.
//
// On v1 a thread can be moved on its own (its tid into a group's tasks
// file), and a forked child inherits the cgroups of the thread that
// forked it. So a goroutine locked to a fresh OS thread joins the groups,
// forks, and moves back. If it cannot move back, it ends while still
// locked, which makes the Go runtime discard the thread rather than reuse
// one left inside a job's cgroup. On v2 the kernel places the child
// itself (CLONE_INTO_CGROUP through SysProcAttr.UseCgroupFD).
func inCgroup(spec *Spec, sys *syscall.SysProcAttr, fork func() error) error {
	if len(spec.CgroupV1Dirs) == 0 && spec.CgroupV2Dir == "" {
		return fork()
	}
	if spec.CgroupV2Dir != "" {
		fd, err := syscall.Open(spec.CgroupV2Dir, unix.O_PATH|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("cannot join the step's cgroup: %w", err)
		}
		defer syscall.Close(fd)
		sys.UseCgroupFD, sys.CgroupFD = true, fd
	}
	if len(spec.CgroupV1Dirs) == 0 {
		return fork()
	}
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		restore, err := cgroups.EnterThread(spec.CgroupV1Dirs)
		if err != nil {
			// It may have joined some groups: discard the thread.
			done <- fmt.Errorf("cannot join the step's cgroups: %w", err)
			return
		}
		err = fork()
		if restore() != nil {
			done <- err
			return // still locked: the thread is discarded
		}
		runtime.UnlockOSThread()
		done <- err
	}()
	return <-done
}

// joinCgroupsHelper moves the step helper (one process, before the
// program) into the spec's groups: the whole process, since the helper
// then becomes the program through execve.
func joinCgroupsHelper(hs *helperSpec) error {
	pid := []byte(strconv.Itoa(os.Getpid()))
	dirs := hs.CgroupV1Dirs
	if hs.CgroupV2Dir != "" {
		dirs = append(dirs[:len(dirs):len(dirs)], hs.CgroupV2Dir)
	}
	for _, d := range dirs {
		if err := os.WriteFile(d+"/cgroup.procs", pid, 0); err != nil {
			return err
		}
	}
	return nil
}

func init() { joinCgroups = joinCgroupsHelper }
