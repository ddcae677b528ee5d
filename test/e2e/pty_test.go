package e2e

import (
	"bytes"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
)

// TestSrunPty drives `srun --pty bash` through a terminal: the task runs on
// a terminal of its own, sees srun's window size and its changes, Ctrl-C
// interrupts the remote foreground command, and srun exits with the
// shell's status.
func TestSrunPty(t *testing.T) {
	t.Parallel()
	c := startUp(t, 1)
	cmd := exec.Command(filepath.Join(binDir, "srun"), "--pty", "bash", "--norc", "--noprofile")
	cmd.Dir, cmd.Env = c.dir, append(c.env(), "PS1=$ ")
	term, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 30, Cols: 100})
	if err != nil {
		t.Fatal(err)
	}
	defer term.Close()
	var mu sync.Mutex
	var out bytes.Buffer
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := term.Read(buf)
			mu.Lock()
			out.Write(buf[:n])
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	seen := func(s string) bool {
		mu.Lock()
		defer mu.Unlock()
		return strings.Contains(out.String(), s)
	}
	send := func(s string) { _, _ = io.WriteString(term, s) }
	defer func() {
		if t.Failed() {
			mu.Lock()
			t.Logf("the terminal showed: %q", out.String())
			mu.Unlock()
		}
	}()
	send("echo tty=$(tty) size=$(stty size) answer=$((6*7))\n")
	c.waitFor("the remote shell to answer", 30*time.Second, func() bool { return seen("answer=42") })
	if !seen("tty=/dev/pts/") || !seen("size=30 100") {
		t.Errorf("remote terminal: %q", out.String())
	}
	_ = pty.Setsize(term, &pty.Winsize{Rows: 40, Cols: 120})
	c.waitFor("the new window size", 20*time.Second, func() bool {
		send("echo now=$(stty size)\n")
		time.Sleep(200 * time.Millisecond)
		return seen("now=40 120")
	})
	send("sleep 100\n")
	time.Sleep(500 * time.Millisecond)
	send("\x03")
	time.Sleep(200 * time.Millisecond)
	send("echo status=$?\n")
	c.waitFor("Ctrl-C to stop the remote sleep", 20*time.Second, func() bool { return seen("status=130") })
	send("exit 3\n")
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 3 {
			t.Errorf("srun --pty exit: %v\n%s", err, out.String())
		}
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("srun --pty did not exit: %q", out.String())
	}
}
