package app

import (
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// A descriptor the daemon's parent left open (opened here without
// O_CLOEXEC, as a shell's redirection or flock(1) leaves one) is not
// passed on to what the daemon starts.
func TestNoInheritedFDs(t *testing.T) {
	fd, err := unix.Open(filepath.Join(t.TempDir(), "lock"), unix.O_CREAT|unix.O_RDWR, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	if f, _ := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); f&unix.FD_CLOEXEC != 0 {
		t.Fatal("the test's descriptor is close-on-exec already")
	}
	noInheritedFDs()
	f, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
	if err != nil || f&unix.FD_CLOEXEC == 0 {
		t.Fatalf("inherited descriptor %d: flags %#x, %v: it would pass to the node supervisors", fd, f, err)
	}
	for _, std := range []uintptr{0, 1, 2} {
		if f, err := unix.FcntlInt(std, unix.F_GETFD, 0); err == nil && f&unix.FD_CLOEXEC != 0 {
			t.Fatalf("descriptor %d became close-on-exec", std)
		}
	}
}
