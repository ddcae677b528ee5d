package cli

import (
	"syscall"
	"testing"
)

func TestProcessUmaskReadsTheProcesssUmask(t *testing.T) {
	old := syscall.Umask(0o027)
	defer syscall.Umask(old)
	if m, ok := processUmask(); !ok || m != 0o027 {
		t.Fatalf("processUmask = %04o, %v; want 0027", m, ok)
	}
	if now := syscall.Umask(0o027); now != 0o027 {
		t.Fatalf("processUmask left the umask at %04o, not 0027", now)
	}
}
