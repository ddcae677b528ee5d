package agent

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/drover-hpc/drover/internal/executor"
)

// A finished job's spool directory is kept, emptied, for the user's next
// job on this node instead of being removed: making a directory and a
// script file on the spool disk, then unlinking and removing them, costs
// ~0.2–0.5 ms of CPU per job there (inode allocation and freeing on a
// journalled disk; bench/README.md), rewriting a kept file in place a
// fraction of it. A kept directory is its user's, so the same rules hold
// as for a fresh one (script.go), with these for what a user may have done
// to it meanwhile:
//   - root only renames it (within the spool, which no user can write),
//     reads its entries, and checks it and its script with lstat; it never
//     opens, writes or truncates anything in it;
//   - the script is emptied at the end and rewritten at the next start
//     with the user's own rights (per-thread fsuid), never through a link,
//     only if it is a regular file of the user's with no other name
//     (a hard link would be another file of theirs) and mode 0700;
//   - a directory is kept only for the same uid:gid, 0700, holding nothing
//     but the script; anything else (a file left by the job, a changed
//     owner or mode, a failed check) and it is removed as before and the
//     next one is made afresh.
// It is kept only once the job's processes are gone (its cgroups were
// removed): a kept script is rewritten for the next job, and a process
// still reading the old one would read that. Kept directories hold no
// data (the script is empty) and sit under .gone- names that the next
// agent's start sweeps.

// jobDirPoolSize bounds the kept directories, all users together.
const jobDirPoolSize = 256

type owner struct{ uid, gid uint32 }

type jobDirPool struct {
	mu   sync.Mutex
	dirs map[owner][]string
	n    int
}

func (p *jobDirPool) put(o owner, dir string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.n >= jobDirPoolSize {
		return false
	}
	if p.dirs == nil {
		p.dirs = map[owner][]string{}
	}
	p.dirs[o] = append(p.dirs[o], dir)
	p.n++
	return true
}

func (p *jobDirPool) take(o owner) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	ds := p.dirs[o]
	if len(ds) == 0 {
		return ""
	}
	d := ds[len(ds)-1]
	if len(ds) == 1 {
		delete(p.dirs, o)
	} else {
		p.dirs[o] = ds[:len(ds)-1]
	}
	p.n--
	return d
}

// jobDir gives job id its spool directory: a kept one of the same user
// renamed into place (reused: its script is to be rewritten, rewriteScript)
// or, without one, a new one (newJobDir).
func (a *Agent) jobDir(id, uid, gid uint32) (dir string, reused bool, err error) {
	if kept := a.jobDirs.take(owner{uid, gid}); kept != "" {
		dir = jobDirPath(a.spool, id)
		// rename replaces an empty leftover at dir and fails on anything
		// else (which newJobDir then removes).
		if renameDir(kept, dir) == nil {
			if keptDirOK(dir, uid, gid) {
				return dir, true, nil
			}
		} else {
			_ = os.RemoveAll(kept)
		}
	}
	dir, err = newJobDir(a.spool, id, uid, gid)
	return dir, false, err
}

// keptDirOK: dir is a directory of uid:gid's, 0700, with no
// sub-directory (lstat: the spool is root's, so nothing can swap it).
func keptDirOK(dir string, uid, gid uint32) bool {
	var st unix.Stat_t
	return unix.Lstat(dir, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR && st.Uid == uid && st.Gid == gid &&
		st.Mode&0o7777 == 0o700 && st.Nlink == 2
}

// discardJobDir takes a finished job's spool directory away and keeps it
// for its user's next job when it qualifies (reusable: the job's
// processes are gone), or removes it.
func (a *Agent) discardJobDir(dir string, uid, gid uint32, reusable bool) {
	if !reusable {
		a.discard(dir, removeJobDir)
		return
	}
	a.discard(dir, func(gone string) {
		// Only under a .gone- name (not if discard had to remove it in
		// place): the path of a job is never kept.
		if !strings.HasPrefix(filepath.Base(gone), gonePrefix) || !emptyForReuse(gone, uid, gid) ||
			!a.jobDirs.put(owner{uid, gid}, gone) {
			removeJobDir(gone)
		}
	})
}

// emptyForReuse checks a discarded job directory (already renamed to its
// .gone- name) against the rules above and empties its script as the
// user; false: remove it instead.
func emptyForReuse(dir string, uid, gid uint32) bool {
	if !keptDirOK(dir, uid, gid) || !onlyNames(dir, scriptName) {
		return false
	}
	var st unix.Stat_t
	switch err := unix.Lstat(filepath.Join(dir, scriptName), &st); {
	case errors.Is(err, unix.ENOENT):
		return true // an allocation's directory: no script
	case err != nil:
		return false
	}
	if !ownScript(&st, uid) {
		return false
	}
	if st.Size == 0 {
		return true
	}
	return ownScriptDo(filepath.Join(dir, scriptName), uid, gid, nil, 0, func(fd int, _ *unix.Stat_t) error {
		return unix.Ftruncate(fd, 0)
	}) == nil
}

// ownScript: st is a regular file of uid's with one name, mode 0700.
func ownScript(st *unix.Stat_t, uid uint32) bool {
	return st.Mode&unix.S_IFMT == unix.S_IFREG && st.Uid == uid && st.Nlink == 1 && st.Mode&0o7777 == 0o700
}

// ownScriptDo opens path for writing as the user, never through a link,
// checks the open file (not its name) with ownScript and runs fn on it
// (st: what that check saw).
// O_NONBLOCK: a FIFO put there fails instead of blocking.
func ownScriptDo(path string, uid, gid uint32, groups []uint32, flags int, fn func(fd int, st *unix.Stat_t) error) error {
	return executor.AsUser(uid, gid, groups, func() error {
		fd, err := unix.Open(path, unix.O_WRONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC|flags, 0o700)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			return err
		}
		if !ownScript(&st, uid) {
			return errors.New("not the kept script")
		}
		return fn(fd, &st)
	})
}

// rewriteScript writes script over the kept script file of a reused job
// directory (a directory without one gets a new file, as writeScript
// makes). An error: the caller makes the directory afresh.
func rewriteScript(dir, script string, uid, gid uint32, groups []uint32) (string, error) {
	path := filepath.Join(dir, scriptName)
	err := ownScriptDo(path, uid, gid, groups, unix.O_CREAT, func(fd int, st *unix.Stat_t) error {
		// Emptied when its last job ended (emptyForReuse). A truncation
		// here, even of an empty file, would have ext4 flush the new
		// script to disk when it is closed (see executor.WriteRecord).
		if st.Size > 0 {
			if err := unix.Ftruncate(fd, 0); err != nil {
				return err
			}
		}
		for b := []byte(script); len(b) > 0; {
			n, err := unix.Write(fd, b)
			if err != nil {
				return err
			}
			b = b[n:]
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	return path, nil
}

// onlyNames reports whether dir holds no entry but those named.
func onlyNames(dir string, allowed ...string) bool {
	return onlyEntries(dir, func(name string) bool { return slices.Contains(allowed, name) })
}
