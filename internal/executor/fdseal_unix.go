//go:build unix

package executor

import (
	"os"
	"strconv"
	"sync"
	"syscall"
)

// sealInheritedFDs marks every descriptor from 3 up close-on-exec, once per
// process, before the first launch. Go opens all its descriptors that way,
// but the agent may have inherited others from whoever started it (a shell,
// a pipe to a logger): without this, every step program, on either path,
// would inherit them too and could read, write or hold them open. In Go,
// descriptors meant for a child go through ExtraFiles or ProcAttr.Files,
// which dup2 them into place, so close-on-exec in the agent hides nothing
// from a child that was meant to get it.
var sealInheritedFDs = sync.OnceFunc(sealFDs)

// SealInheritedFDs is sealInheritedFDs for the daemons' start (drover up,
// controller, agent, dbd): what whoever started them left open (a lock
// held by `flock LOCK drover up`, a script's socket) passes to none of the
// processes they start.
func SealInheritedFDs() { sealInheritedFDs() }

// sealFDs marks every descriptor from 3 up close-on-exec now. The agent
// calls it before it starts a supervisor too, which is before its first
// launch: a supervisor outlives its agent, and each descriptor it inherited
// stays open as long as it runs (an e2e run's flock on its lock file was
// held for half an hour by a supervisor whose job stayed frozen).
func sealFDs() {
	if sealFDsFast() {
		return
	}
	d, err := os.Open(fdDir)
	if err != nil {
		return
	}
	names, _ := d.Readdirnames(-1)
	dirFD := int(d.Fd())
	for _, name := range names {
		if fd, err := strconv.Atoi(name); err == nil && fd > 2 && fd != dirFD {
			syscall.CloseOnExec(fd)
		}
	}
	d.Close()
}
