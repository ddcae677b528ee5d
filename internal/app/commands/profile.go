//go:build cliprofile

package commands

import (
	"os"
	"runtime/pprof"
)

// profile starts a CPU profile of one invocation into DROVER_CPUPROFILE,
// for performance work on the commands: build with -tags cliprofile.
// Without the tag the binary does not link runtime/pprof (its compression
// packages' initialisation is on every command's path).
func profile() (stop func()) {
	path := os.Getenv("DROVER_CPUPROFILE")
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err != nil {
		return func() {}
	}
	_ = pprof.StartCPUProfile(f)
	return pprof.StopCPUProfile
}
