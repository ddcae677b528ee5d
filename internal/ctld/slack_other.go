//go:build !linux

package ctld

// UseTimerSlack does nothing where there is no per-thread timer slack
// (slack_linux.go).
func UseTimerSlack(env func(string) string) {}
