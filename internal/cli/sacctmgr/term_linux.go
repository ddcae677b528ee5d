package sacctmgr

import "golang.org/x/sys/unix"

// singleKey makes the terminal hand over each key at once (line editing
// off, echo kept), as sacctmgr does for its question; it returns the
// undo, or nil when the terminal could not be changed.
func singleKey(fd int) func() {
	old, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return nil
	}
	t := *old
	t.Lflag &^= unix.ICANON
	t.Cc[unix.VMIN] = 1
	t.Cc[unix.VTIME] = 0
	if unix.IoctlSetTermios(fd, unix.TCSETS, &t) != nil {
		return nil
	}
	return func() { _ = unix.IoctlSetTermios(fd, unix.TCSETS, old) }
}
