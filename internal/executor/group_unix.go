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
//
// Cost: when nothing is left in the group (the common case: the program
// was the last member, or its children were reaped), the first kill fails
// with ESRCH and that is all. Only a group that still answers a kill after
// a short sleep, long enough for init to reap the members just killed, is
// looked for in /proc (a scan of every process on the node).
func killGroup(pgid int, timeout time.Duration) {
	if !killPgrp(pgid) {
		return
	}
	deadline := time.Now().Add(timeout)
	for delay := time.Millisecond; ; delay = min(2*delay, 20*time.Millisecond) {
		time.Sleep(delay)
		if !killPgrp(pgid) || !groupHasLiveMember(pgid) || time.Now().After(deadline) {
			return
		}
	}
}

// killPgrp SIGKILLs group pgid and reports whether it had any member, a
// zombie included. Any error but ESRCH (there is none for SIGKILL from
// root to a group of its own children) counts as members left.
func killPgrp(pgid int) bool {
	return !errors.Is(syscall.Kill(-pgid, syscall.SIGKILL), syscall.ESRCH)
}

// groupHasLiveMember reports whether group pgid still has a member that is
// not a zombie. A variable for tests.
var groupHasLiveMember = scanGroup

// scanGroup scans /proc for a non-zombie process in group pgid.
func scanGroup(pgid int) bool {
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
