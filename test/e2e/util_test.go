package e2e

import (
	"bytes"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
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

// killJobProcess sends SIGKILL to pid (and with group, to its process
// group) only while pid is still a process of job on node: a pid read back
// from a file after the job ended may by then belong to another test's
// process (tests run in parallel, pids are reused).
func killJobProcess(pid int, job, node string, group bool) {
	env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return
	}
	var jobOK, nodeOK bool
	for _, kv := range strings.Split(string(env), "\x00") {
		jobOK = jobOK || kv == "SLURM_JOB_ID="+job
		nodeOK = nodeOK || kv == "SLURMD_NODENAME="+node
	}
	if !jobOK || !nodeOK {
		return
	}
	if group {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
}
