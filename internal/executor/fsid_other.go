//go:build unix && !linux

package executor

import "errors"

// canSwitchFS: no per-thread filesystem identity outside Linux; steps of
// another user go through the helper.
const canSwitchFS = false

var errRestoreFS = errors.New("executor: cannot restore the agent's filesystem identity")

func withUserFS(uid, gid uint32, groups []uint32, fn func()) error {
	return errors.New("executor: no per-thread filesystem identity on this system")
}
