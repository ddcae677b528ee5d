//go:build unix

package executor

import (
	"errors"
	"os"
	"syscall"
	"time"
)

// ErrSupervisorLost is Wait's error for a supervised program whose
// supervisor ended (or could not be reached again) before it reported the
// program's end: the program may still run, and its exit status is
// unknown.
var ErrSupervisorLost = errors.New("the node's job supervisor ended before the job; its exit status is unknown")

// GroupAlive reports whether process group pgid still has a member (one
// the caller may not signal counts).
func GroupAlive(pgid int) bool {
	if pgid <= 1 {
		return false
	}
	err := syscall.Kill(-pgid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// orphanPoll is how often an orphan's group is checked: nobody is its
// parent here, so no end is reported.
var orphanPoll = 250 * time.Millisecond

// Orphan is a handle on a process group nobody here is the parent of (its
// supervisor is gone and it was reparented): it can be signalled, and Wait
// returns once the group is empty, with ErrSupervisorLost since the exit
// status went with the supervisor.
func Orphan(pgid int) Process { return &orphan{pgid: pgid} }

type orphan struct{ pgid int }

func (o *orphan) Pid() int { return o.pgid }

func (o *orphan) Signal(sig syscall.Signal) error {
	if !GroupAlive(o.pgid) {
		return os.ErrProcessDone
	}
	if err := syscall.Kill(-o.pgid, sig); err != nil {
		if errors.Is(err, syscall.ESRCH) {
			return os.ErrProcessDone
		}
		return err
	}
	return nil
}

func (o *orphan) Terminate(killWait time.Duration) {
	_ = o.Signal(syscall.SIGCONT)
	_ = o.Signal(syscall.SIGTERM)
	go func() {
		deadline := time.Now().Add(killWait)
		for GroupAlive(o.pgid) {
			if time.Now().After(deadline) {
				_ = o.Signal(syscall.SIGKILL)
				return
			}
			time.Sleep(orphanPoll)
		}
	}()
}

func (o *orphan) Wait() Result {
	for GroupAlive(o.pgid) {
		time.Sleep(orphanPoll)
	}
	return Result{Err: ErrSupervisorLost}
}
