package agent

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/drover-hpc/drover/internal/executor"
)

// A finished job's directories (its spool directory, its supervisor
// record, a step task's record) are moved out of the way with one rename
// and removed in the background. Removing them where they are costs a
// few file deletions and rmdirs, each up to a millisecond on a journalled
// disk, and sat on the paths that matter: before a job's end was
// reported, and in the stream's receive loop (EndAck) ahead of the next
// launches. The renamed directory is no job's any more: a new run of the
// same job makes its own afresh. Leftovers of an agent that stopped
// meanwhile are swept at the next start.

// gonePrefix starts the names of directories waiting for removal; no job
// or task directory starts with it (recover and recoverSteps ignore them).
const gonePrefix = ".gone-"

// trashWorkers remove discarded directories; the queue holds what a burst
// of ends leaves behind (past it, the caller removes in place).
const (
	trashWorkers = 2
	trashQueue   = 4096
)

type discarded struct {
	dir    string
	remove func(string)
}

// A discarded supervisor directory (super/job12, super/job12.s0.t3: root's,
// 0700, root's files only) is emptied but kept, under its .gone- name, for
// the next job's record: a rename into place costs a fraction of a mkdir
// and the rmdir it spares on a journalled disk (each creation of an inode
// there is 0.05–0.3 ms of CPU; bench/README.md). The spool directories of
// jobs are never reused: they were their users'. Kept ones left by a
// stopped agent are swept at the next start like the rest.
const superPoolSize = 256

// startTrash starts the workers that remove discarded directories.
func (a *Agent) startTrash() {
	a.superPool = make(chan string, superPoolSize)
	a.trash = make(chan discarded, trashQueue)
	for range trashWorkers {
		go func() {
			for d := range a.trash {
				d.remove(d.dir)
			}
		}()
	}
}

// discard takes dir away at once and has remove delete it in the
// background; without the workers (or with a full queue, or when the
// rename fails) remove runs here, on dir itself.
func (a *Agent) discard(dir string, remove func(string)) {
	if dir == "" {
		return
	}
	if a.trash == nil {
		remove(dir)
		return
	}
	n := a.trashSeq.Add(1)
	gone := filepath.Join(filepath.Dir(dir), gonePrefix+strconv.FormatUint(n, 10)+"-"+filepath.Base(dir))
	if renameDir(dir, gone) != nil {
		remove(dir)
		return
	}
	select {
	case a.trash <- discarded{dir: gone, remove: remove}:
	default:
		remove(gone)
	}
}

// newSuperDir makes dir an empty supervisor directory, from the pool when
// it holds one: a rename replaces whatever empty directory an earlier run
// left at dir; otherwise (none kept, or something left in dir) it is made
// afresh.
func (a *Agent) newSuperDir(dir string) error {
	select {
	case kept := <-a.superPool:
		if renameDir(kept, dir) == nil {
			return nil
		}
		_ = os.RemoveAll(kept)
	default:
	}
	return newSuperDir(dir)
}

// keptSuperFiles stay in a kept directory, truncated to nothing, for the
// next record to overwrite: a file created and later unlinked costs ~0.2 ms
// of CPU on this kind of disk, truncating and rewriting one a tenth of
// that (bench/README.md), done as executor.EmptyRecord and WriteRecord
// say (a truncate by path would have ext4 flush the next record to disk). They are the two every batch job writes (its
// record; its supervisor's pgid). An empty one reads as none: no record
// (reattach), no process group (orphanOf).
var keptSuperFiles = map[string]bool{"job.pb": true, "pgid": true}

// recycleSuperDir empties a discarded supervisor directory and keeps it
// for newSuperDir (a full pool, or anything unknown left in it: removed).
func (a *Agent) recycleSuperDir(dir string) {
	keep := a.superPool != nil
	for _, f := range superFiles {
		p := filepath.Join(dir, f)
		if keep && keptSuperFiles[f] {
			if executor.EmptyRecord(p) == nil { // (missing: nil too)
				continue
			}
			keep = false
		}
		_ = syscall.Unlink(p)
	}
	if keep && onlyKeptFiles(dir) {
		select {
		case a.superPool <- dir:
			return
		default:
		}
	}
	for f := range keptSuperFiles {
		_ = syscall.Unlink(filepath.Join(dir, f))
	}
	if err := syscall.Rmdir(dir); err != nil && !errors.Is(err, syscall.ENOENT) {
		_ = os.RemoveAll(dir)
	}
}

// renameDir renames a directory with rename(2) alone: an empty directory
// at to is replaced, anything else there refuses (ENOTEMPTY, ENOTDIR).
// os.Rename looks to up first to refuse any directory there, one more
// path lookup per rename (a job's start and end make four of these).
func renameDir(from, to string) error {
	for {
		err := unix.Rename(from, to)
		if err != unix.EINTR {
			return err
		}
	}
}

// onlyKeptFiles reports whether dir holds nothing but keptSuperFiles.
func onlyKeptFiles(dir string) bool {
	return onlyEntries(dir, func(name string) bool { return keptSuperFiles[name] })
}

// onlyEntries reports whether every entry of dir (never through a link)
// passes ok. It reads with getdents into a buffer on the stack: os.File's
// listing allocated more than the rest of the recycling.
func onlyEntries(dir string, ok func(name string) bool) bool {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	var buf [1024]byte
	var names [8]string
	for {
		n, err := unix.Getdents(fd, buf[:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return false
		}
		if n == 0 {
			return true
		}
		for b := buf[:n]; len(b) > 0; {
			used, _, got := unix.ParseDirent(b, -1, names[:0])
			for _, name := range got {
				if !ok(name) {
					return false
				}
			}
			b = b[used:]
		}
	}
}

// sweepTrash removes what an earlier agent discarded but did not remove.
func sweepTrash(dirs ...string) {
	for _, d := range dirs {
		ents, err := os.ReadDir(d)
		if err != nil {
			continue
		}
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), gonePrefix) {
				_ = os.RemoveAll(filepath.Join(d, e.Name()))
			}
		}
	}
}
