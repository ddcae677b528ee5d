//go:build cgo && !osusergo

package nss

// libcBuild: os/user already asks the C library, which reads nsswitch.conf.
const libcBuild = true
