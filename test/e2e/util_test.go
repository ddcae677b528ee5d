package e2e

import (
	"bytes"
	"net"
	"sync"
	"testing"
	"time"
)

func sendGarbage(t *testing.T, addr string) {
	for _, payload := range [][]byte{[]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"), {0, 1, 2, 3, 255, 254, 0, 0, 9}, make([]byte, 100000)} {
		conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatalf("dial %s: %v", addr, err)
		}
		_ = conn.SetDeadline(time.Now().Add(3 * time.Second))
		_, _ = conn.Write(payload)
		buf := make([]byte, 512)
		_, _ = conn.Read(buf)
		conn.Close()
	}
}

func netListen() (net.Listener, error) { return net.Listen("tcp", "127.0.0.1:0") }

func portOf(l net.Listener) int { return l.Addr().(*net.TCPAddr).Port }

// syncBuffer is a bytes.Buffer safe to read while a process writes it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
