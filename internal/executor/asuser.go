//go:build unix

package executor

// AsUser runs fn with the filesystem identity of uid/gid/groups (Linux's
// per-thread fsuid; see withUserFS): every file fn opens or creates is
// checked, and owned, as that user's. Root (uid 0) runs fn as it is. fn
// must do its file work on the calling goroutine. sbcast writes its files
// this way.
func AsUser(uid, gid uint32, groups []uint32, fn func() error) error {
	if uid == 0 {
		return fn()
	}
	var ferr error
	if err := withUserFS(uid, gid, groups, func() { ferr = fn() }); err != nil {
		return err
	}
	return ferr
}
