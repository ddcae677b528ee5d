// Package version holds the build's version string, set by the linker.
package version

// Version is overridden with -ldflags "-X .../internal/version.Version=...".
var Version = "0.1.0-dev"
