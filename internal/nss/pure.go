//go:build !cgo || osusergo

package nss

// libcBuild: os/user reads /etc/passwd and /etc/group only.
const libcBuild = false
