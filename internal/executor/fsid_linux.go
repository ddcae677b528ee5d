package executor

import (
	"errors"
	"fmt"
	"runtime"

	"golang.org/x/sys/unix"
)

// canSwitchFS: Linux has a per-thread filesystem identity (withUserFS).
const canSwitchFS = true

// errRestoreFS wraps the error of withUserFS when the thread could not get
// the agent's identity back.
var errRestoreFS = errors.New("executor: cannot restore the agent's filesystem identity")

// withUserFS runs fn with the filesystem identity of uid/gid/groups, so that
// every path fn opens, creates or searches is checked, and owned, as that
// user's, while the rest of the agent stays root.
//
// Linux keeps credentials per thread, and setfsuid(2), setfsgid(2) and the
// raw setgroups(2) system call change only the calling one. (Go's
// syscall.Setgroups, like syscall.Setuid, changes every thread of the
// process: not usable here. x/sys/unix.Setgroups is the plain RawSyscall.)
// Leaving fsuid 0 also drops the filesystem capabilities (CAP_DAC_OVERRIDE
// and friends) from the thread's effective set, and going back to 0 raises
// them again. fn runs on a goroutine of its own, locked to its thread; no
// other goroutine can run there meanwhile, and the runtime does not clone
// new threads from a locked one (they come from its template thread). fn
// must not start work meant to run with the same identity on other
// goroutines.
//
// The thread is switched back before it is unlocked. If that fails, the
// goroutine exits still locked, so the runtime ends the thread instead of
// reusing it, and the error wraps errRestoreFS. An error that does not means
// the switch to the user failed and fn did not run.
//
// Other capabilities stay: CAP_SYS_RESOURCE, for one, lets the open create
// a file past the user's inode quota, as root's helper never could.
func withUserFS(uid, gid uint32, groups []uint32, fn func()) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		restored, err := switchFS(uid, gid, groups, fn)
		if restored {
			runtime.UnlockOSThread()
		}
		errc <- err
	}()
	return <-errc
}

// switchFS does withUserFS's work on the locked thread. restored is false
// only when the thread may be left with a foreign identity.
func switchFS(uid, gid uint32, groups []uint32, fn func()) (restored bool, err error) {
	orig, err := unix.Getgroups()
	if err != nil {
		return true, fmt.Errorf("cannot read the agent's groups: %v", err)
	}
	gids := make([]int, len(groups))
	for i, g := range groups {
		gids[i] = int(g)
	}
	// An empty list clears root's own supplementary groups, as the
	// helper's privilege drop does. setgroups is all or nothing.
	if err := unix.Setgroups(gids); err != nil {
		return true, fmt.Errorf("cannot set supplementary groups %v: %v", groups, err)
	}
	// setfsuid and setfsgid return the previous value and never fail:
	// read back with the invalid id -1, which changes nothing, to know.
	oldGid, _ := unix.SetfsgidRetGid(int(gid))
	oldUid, _ := unix.SetfsuidRetUid(int(uid))
	switch {
	case fsgid() != int(gid):
		err = fmt.Errorf("cannot set gid %d", gid)
	case fsuid() != int(uid):
		err = fmt.Errorf("cannot set uid %d", uid)
	default:
		fn()
	}
	// Back in the reverse order: fsuid 0 first gives the filesystem
	// capabilities back.
	unix.SetfsuidRetUid(oldUid)
	unix.SetfsgidRetGid(oldGid)
	rerr := unix.Setgroups(orig)
	if rerr != nil || fsuid() != oldUid || fsgid() != oldGid {
		return false, fmt.Errorf("%w (fsuid %d, fsgid %d, setgroups: %v); the thread is discarded",
			errRestoreFS, fsuid(), fsgid(), rerr)
	}
	return true, err
}

func fsuid() int {
	id, _ := unix.SetfsuidRetUid(-1)
	return id
}

func fsgid() int {
	id, _ := unix.SetfsgidRetGid(-1)
	return id
}
