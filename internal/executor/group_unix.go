//go:build unix

package executor

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"syscall"
	"time"
)

// killGroup SIGKILLs process group pgid until it has no live member, or
// until timeout. Repeating the kill catches a member that was in the middle
// of fork(2) when the previous signal went out.
//
// "Live" excludes zombies: an orphaned member that was killed is reparented
// to init, and if init is slow to reap (or is not a real init, as in some
// containers) its zombie keeps the group id in use without running anything.
func killGroup(pgid int, timeout time.Duration) {
	deadline := time.Now().Add(timeout)
	for delay := time.Millisecond; ; delay = min(2*delay, 20*time.Millisecond) {
		if err := syscall.Kill(-pgid, syscall.SIGKILL); errors.Is(err, syscall.ESRCH) {
			return
		}
		if !groupHasLiveMember(pgid) || time.Now().After(deadline) {
			return
		}
		time.Sleep(delay)
	}
}

// groupHasLiveMember scans /proc for a non-zombie process in group pgid.
func groupHasLiveMember(pgid int) bool {
	d, err := os.Open("/proc")
	if err != nil {
		return false
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return false
	}
	for _, name := range names {
		if name[0] < '0' || name[0] > '9' {
			continue
		}
		state, pg, ok := procStat(name)
		if ok && pg == pgid && state != 'Z' && state != 'X' {
			return true
		}
	}
	return false
}

// procStat reads the state and process group of /proc/<pid>/stat.
func procStat(pid string) (state byte, pgrp int, ok bool) {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return 0, 0, false
	}
	// "pid (comm) state ppid pgrp ..."; comm may hold spaces and ')', so
	// parse from the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 3 || len(f[0]) != 1 {
		return 0, 0, false
	}
	pg, err := strconv.Atoi(string(f[2]))
	if err != nil {
		return 0, 0, false
	}
	return f[0][0], pg, true
}
