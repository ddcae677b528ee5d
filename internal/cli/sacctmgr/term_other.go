//go:build !linux

package sacctmgr

// singleKey leaves the terminal alone where its settings are not known:
// the answer then needs Enter.
func singleKey(int) func() { return nil }
