//go:build !cliprofile

package commands

// profile does nothing without the cliprofile build tag (profile.go).
func profile() (stop func()) { return func() {} }
