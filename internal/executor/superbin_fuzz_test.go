//go:build linux

package executor

import (
	"reflect"
	"testing"
)

// FuzzSuperBin: any packet is refused or decoded, never a panic, and what
// decodes encodes back to a packet that decodes to the same message.
func FuzzSuperBin(f *testing.F) {
	umask := 0o22
	for _, m := range []*superMsg{
		{Op: "start", Dir: "/spool/super/job1", Spec: &superSpec{Path: "/bin/true", Args: []string{"x"},
			Env: []string{"A=1"}, UID: 1000, GID: 1000, Groups: []uint32{1000}, Umask: &umask}},
		{Op: "ended", Dir: "d", Result: &superResult{ExitCode: 1, Signal: 15}},
		{Op: "running", Dirs: []string{"a"}},
	} {
		f.Add(encodeSuperBin(m))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) == 0 || b[0] != superBinTag {
			return
		}
		m, err := decodeSuperBin(b)
		if err != nil {
			return
		}
		again, err := decodeSuperBin(encodeSuperBin(&m))
		if err != nil {
			t.Fatalf("re-encoded message refused: %v", err)
		}
		if !reflect.DeepEqual(again, m) {
			t.Fatalf("round trip changed the message:\n got %+v\nwant %+v", again, m)
		}
	})
}
