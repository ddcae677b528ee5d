package agent

import (
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/creack/pty"

	"github.com/drover-hpc/drover/internal/executor"
	"github.com/drover-hpc/drover/internal/stepio"
)

// ptyTask is task 0 of an srun --pty step: it runs on a terminal whose
// master side the agent copies to and from srun.
type ptyTask struct {
	master *os.File
	// wmu keeps srun's input in order: what came before the terminal
	// existed is written first, by a goroutine (startPty).
	wmu sync.Mutex
}

// write gives the terminal what srun's user typed.
func (t *ptyTask) write(p []byte) {
	t.wmu.Lock()
	defer t.wmu.Unlock()
	_, _ = t.master.Write(p)
}

// ptyEarly keeps what srun sent for a --pty task before its terminal
// existed: srun sends the window size and forwards typing as soon as the
// node dials in, which can be before the task starts.
type ptyEarly struct {
	input []byte
	size  string
}

// keep holds early input up to the limit a task's stdin queue has; more
// is dropped, as typing into a terminal nobody reads is.
func (e *ptyEarly) keep(p []byte) {
	if room := stdinLimit - len(e.input); room > 0 {
		e.input = append(e.input, p[:min(len(p), room)]...)
	}
}

func (t *ptyTask) resize(v string) {
	f := strings.Fields(v)
	if len(f) != 2 {
		return
	}
	rows, _ := strconv.Atoi(f[0])
	cols, _ := strconv.Atoi(f[1])
	if rows > 0 && cols > 0 {
		_ = pty.Setsize(t.master, &pty.Winsize{Rows: uint16(rows), Cols: uint16(cols)})
	}
}

// startPty starts es on a new terminal owned by the job's user; the caller
// holds s.mu.
func (s *stepRun) startPty(es *executor.Spec) (executor.Process, error) {
	master, tty, err := pty.Open()
	if err != nil {
		return nil, err
	}
	name := tty.Name()
	_ = os.Chown(name, int(es.UID), int(es.GID))
	_ = os.Chmod(name, 0o600) // the user's alone: no writes from their group
	tty.Close()               // the task opens it by name, as its user
	es.Stdin, es.Stdout, es.Stderr = name, name, name
	es.StdinR, es.StdoutW, es.StderrW = nil, nil, nil
	es.Terminal = true
	proc, err := s.a.executor().Start(es)
	if err != nil {
		master.Close()
		return nil, err
	}
	t := &ptyTask{master: master}
	s.tty = t
	if e := s.ttyEarly; e != nil {
		s.ttyEarly = nil
		if e.size != "" {
			t.resize(e.size)
		}
		if len(e.input) > 0 {
			// Written beside: the task may not read yet, and the caller
			// holds s.mu. Later input waits on wmu, so order holds.
			t.wmu.Lock()
			go func() {
				defer t.wmu.Unlock()
				_, _ = master.Write(e.input)
			}()
		}
	}
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		buf := make([]byte, 32<<10)
		for {
			n, err := master.Read(buf)
			if n > 0 {
				s.send(stepio.Stdout, 0, buf[:n])
			}
			if err != nil {
				return // EIO once no process holds the terminal
			}
		}
	}()
	return &ptyProc{Process: proc, drained: drained, master: master}, nil
}

// ptyProc makes Wait return only after the terminal's last output was
// forwarded, so srun gets it before the task's exit.
type ptyProc struct {
	executor.Process
	drained chan struct{}
	master  *os.File
	once    sync.Once
}

func (p *ptyProc) Wait() executor.Result {
	r := p.Process.Wait()
	p.once.Do(func() {
		select {
		case <-p.drained:
		case <-time.After(time.Second): // a background process keeps the terminal
		}
		p.master.Close()
	})
	return r
}
