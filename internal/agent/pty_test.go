package agent

import (
	"bufio"
	"os"
	"testing"

	"github.com/creack/pty"

	"github.com/drover-hpc/drover/internal/executor"
	"github.com/drover-hpc/drover/internal/model"
)

// TestPtyKeepsWhatCameBeforeTheTerminal: srun sends its window size and
// forwards typing as soon as the node dials in, which can be before the
// --pty task has its terminal. Both used to be dropped, and the typed line
// never reached the shell (TestSrunPty timed out in CI).
func TestPtyKeepsWhatCameBeforeTheTerminal(t *testing.T) {
	a, _ := testAgent(t)
	s := testStep(a, &model.StepSpec{Argv: []string{"bash"}, Pty: true}, 0)
	s.winch("30 100")
	s.input([]byte("echo one\n"))
	s.input([]byte("echo two\n"))

	es := &executor.Spec{UID: uint32(os.Getuid()), GID: uint32(os.Getgid())}
	s.mu.Lock()
	p, err := s.start(es, 0)
	s.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	s.input([]byte("echo three\n")) // after the terminal: behind the early input
	tty, err := os.OpenFile(es.Stdin, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer tty.Close()
	defer p.(*ptyProc).master.Close()
	if rows, cols, err := pty.Getsize(tty); err != nil || rows != 30 || cols != 100 {
		t.Errorf("terminal size %dx%d (%v), want 30x100 from before it existed", rows, cols, err)
	}
	r := bufio.NewReader(tty)
	for _, want := range []string{"echo one\n", "echo two\n", "echo three\n"} {
		line, err := r.ReadString('\n')
		if err != nil || line != want {
			t.Fatalf("the task read %q (%v), want %q", line, err, want)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ttyEarly != nil {
		t.Error("early input kept after the terminal took it")
	}
}
