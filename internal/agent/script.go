package agent

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/drover-hpc/drover/internal/executor"
)

// A job's spool directory belongs to the job's user (the script runs as
// them and must read it), so nothing the agent finds in it can be trusted:
// a symlink planted there by the user, or left by an earlier run, would
// turn a write by root into a write anywhere. So the directory is made
// by root in the spool no user can write, root never writes into it, and
// the script is written into it with the user's own rights (per-thread
// fsuid), never through a symlink: created exclusively in a new directory,
// or rewritten in one kept from the same user's last job here after the
// checks jobdirs.go lists.

const scriptName = "slurm_script"

// newJobDir makes the spool directory of job id afresh, owned by uid/gid,
// 0700: whatever an earlier run left at that path is removed first
// (without following links in it).
func newJobDir(spool string, id, uid, gid uint32) (string, error) {
	dir := jobDirPath(spool, id)
	if err := os.Mkdir(dir, 0o700); errors.Is(err, fs.ErrExist) {
		if err := os.RemoveAll(dir); err != nil {
			return "", fmt.Errorf("remove the leftover spool directory %s: %w", dir, err)
		}
		if err := os.Mkdir(dir, 0o700); err != nil {
			return "", err
		}
	} else if err != nil {
		return "", err
	}
	// The spool is root's and not writable by others: dir cannot have been
	// swapped since the Mkdir, and Lchown would not follow it if it were.
	if err := os.Lchown(dir, int(uid), int(gid)); err != nil {
		return "", err
	}
	return dir, nil
}

// jobDirPath is the spool directory of job id.
func jobDirPath(spool string, id uint32) string {
	return filepath.Join(spool, "job"+strconv.FormatUint(uint64(id), 10))
}

// removeJobDir removes a job's spool directory: the script, then the
// directory (a listing only when the job left something else there).
func removeJobDir(dir string) {
	if dir == "" {
		return
	}
	_ = syscall.Unlink(filepath.Join(dir, scriptName))
	if err := syscall.Rmdir(dir); err != nil && !errors.Is(err, syscall.ENOENT) {
		_ = os.RemoveAll(dir)
	}
}

// writeScript writes the batch script into dir as the job's user: a new
// file (O_EXCL), never through a symlink (O_NOFOLLOW), owned by the user,
// 0700. It returns the script's path.
func writeScript(dir, script string, uid, gid uint32, groups []uint32) (string, error) {
	path := filepath.Join(dir, scriptName)
	err := executor.AsUser(uid, gid, groups, func() error {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o700)
		if err != nil {
			return err
		}
		if _, err := f.WriteString(script); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	})
	if errors.Is(err, fs.ErrExist) || errors.Is(err, syscall.ELOOP) {
		return "", fmt.Errorf("batch script %s: something is already there (not written through it): %w", path, err)
	}
	if err != nil {
		return "", fmt.Errorf("write the batch script %s as uid %d: %w", path, uid, err)
	}
	return path, nil
}
