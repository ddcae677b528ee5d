package slurmconf

import (
	"bytes"
	"crypto/sha256"
	"testing"
)

// TestSum256: the written-out SHA-256 is crypto/sha256's, at every length
// around the padding's boundaries and over several blocks.
func TestSum256(t *testing.T) {
	for n := range 300 {
		b := bytes.Repeat([]byte{byte(n), 'x', 0xff}, n)[:n]
		if got, want := sum256(b), sha256.Sum256(b); got != want {
			t.Fatalf("length %d: %x, want %x", n, got, want)
		}
	}
	p := []byte("/var/spool/slurm/a/state/directory/long/enough/for/the/socket/to/move/under/run/drover/x")
	if got, want := sum256(p), sha256.Sum256(p); got != want {
		t.Fatalf("%s: %x, want %x", p, got, want)
	}
}
