//go:build unix

package executor

import (
	"os"

	"golang.org/x/sys/unix"
)

// A node writes a few bytes per job into files kept from one job to the
// next (the supervisor's pgid, the agent's job record): emptied when a job
// ends, written again when the next one starts. On ext4 (the usual spool
// disk) a file truncated to zero is flushed to disk when it is next
// closed (the auto_da_alloc heuristic for programs that rewrite a file in
// place without fsync): os.WriteFile's O_TRUNC, even on an empty file, or
// a truncate by path followed by an open elsewhere, turns each write into
// block allocation, journal work and I/O, ~30 us of CPU and ~90 us of
// wall time here against ~6 us (bench/README.md). Nothing in these files
// needs to reach the disk that soon: the next job empties them again, and
// what must survive a crash of the node is not there.

// WriteRecord makes b the content of path (created with perm when
// missing, never through a symbolic link), as os.WriteFile does, without
// truncating a file that is already empty, which EmptyRecord leaves it.
func WriteRecord(path string, b []byte, perm os.FileMode) error {
	fd, err := unix.Open(path, unix.O_WRONLY|unix.O_CREAT|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(perm.Perm()))
	if err != nil {
		return &os.PathError{Op: "open", Path: path, Err: err}
	}
	var st unix.Stat_t
	if err = unix.Fstat(fd, &st); err == nil && st.Size > 0 {
		// Not emptied (an earlier agent's, a failed recycling): emptied
		// first, so that no crash can leave old bytes behind new ones.
		err = unix.Ftruncate(fd, 0)
	}
	for off := 0; err == nil && off < len(b); {
		var n int
		n, err = unix.Pwrite(fd, b[off:], int64(off))
		off += n
	}
	if cerr := unix.Close(fd); err == nil {
		err = cerr
	}
	if err != nil {
		return &os.PathError{Op: "write", Path: path, Err: err}
	}
	return nil
}

// EmptyRecord truncates path to nothing through a descriptor it closes
// at once: ext4's flush on close then finds nothing to write, and the next
// WriteRecord's close none either. A missing file is left missing (nil).
func EmptyRecord(path string) error {
	fd, err := unix.Open(path, unix.O_WRONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err == unix.ENOENT {
		return nil
	}
	if err != nil {
		return &os.PathError{Op: "open", Path: path, Err: err}
	}
	err = unix.Ftruncate(fd, 0)
	if cerr := unix.Close(fd); err == nil {
		err = cerr
	}
	if err != nil {
		return &os.PathError{Op: "truncate", Path: path, Err: err}
	}
	return nil
}
