package sacctmgr

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"golang.org/x/term"
)

// commitTimeout is how long sacctmgr waits for an answer.
const commitTimeout = 30 * time.Second

// input is stdin, read only when a command or an answer is wanted (a
// single command with -i never touches it). One reader feeds both, so
// in interactive use answers and commands come from the same stream.
type input struct {
	r    io.Reader
	ch   chan byte // closed at end of input
	once sync.Once
}

func newInput(r io.Reader) *input { return &input{r: r, ch: make(chan byte, 4096)} }

func (in *input) start() {
	in.once.Do(func() {
		go func() {
			defer close(in.ch)
			if in.r == nil {
				return
			}
			br := bufio.NewReader(in.r)
			for {
				b, err := br.ReadByte()
				if err != nil {
					return
				}
				in.ch <- b
			}
		}()
	})
}

// line reads one line without its newline; false at the end of input
// with nothing read.
func (in *input) line() (string, bool) {
	in.start()
	var b []byte
	for c := range in.ch {
		if c == '\n' {
			return string(b), true
		}
		b = append(b, c)
	}
	return string(b), len(b) > 0
}

// answer waits for one byte: ok false at the end of input, timedOut
// when none came in time.
func (in *input) answer(d time.Duration) (c byte, ok, timedOut bool) {
	in.start()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case c, ok = <-in.ch:
		return c, ok, false
	case <-t.C:
		return 0, false, true
	}
}

// commitCheck asks question and waits for y or n, as sacctmgr does
// before committing; -i answers yes. Stdin need not be a terminal: the
// answer is read from it all the same (a pipe's "y" commits), and its
// end or no answer in time discards the change. On a terminal one key
// is enough.
func (s *session) commitCheck(question string) bool {
	if s.o.immediate {
		return true
	}
	out := s.env.Stdout
	fmt.Fprintf(out, "%s (You have 30 seconds to decide)\n", question)
	if f, ok := s.env.Stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		if restore := singleKey(int(f.Fd())); restore != nil {
			defer restore()
		}
	}
	for first := true; ; first = false {
		if !first {
			fmt.Fprint(out, "Y or N please\n")
		}
		fmt.Fprint(out, "(N/y): ")
		c, ok, timedOut := s.in.answer(commitTimeout)
		switch {
		case timedOut:
			fmt.Fprint(out, "timeout\n")
			return false
		case !ok:
			fmt.Fprint(out, "\n")
			return false
		}
		fmt.Fprint(out, "\n")
		switch c {
		case 'y', 'Y':
			return true
		case 'n', 'N', '\n':
			return false
		}
	}
}
