package agent

import (
	"io"

	"github.com/drover-hpc/drover/internal/executor"
	"github.com/drover-hpc/drover/internal/stepio"
)

// ioLink connects an interactive job's stdio to its srun.
type ioLink struct {
	conn *stepio.Conn
	inR  *io.PipeReader
	inW  *io.PipeWriter
}

func dialIO(addr, key string, job uint32) (*ioLink, error) {
	c, err := stepio.Dial(addr, key, job)
	if err != nil {
		return nil, err
	}
	l := &ioLink{conn: c}
	l.inR, l.inW = io.Pipe()
	go func() {
		for {
			t, p, err := c.Recv()
			if err != nil {
				l.inW.CloseWithError(io.EOF)
				return
			}
			switch t {
			case stepio.Stdin:
				if _, err := l.inW.Write(p); err != nil {
					return
				}
			case stepio.StdinEOF:
				l.inW.Close()
			}
		}
	}()
	return l, nil
}

func (l *ioLink) stdout() io.Writer { return l.conn.Writer(stepio.Stdout) }
func (l *ioLink) stderr() io.Writer { return l.conn.Writer(stepio.Stderr) }
func (l *ioLink) stdin() io.Reader  { return l.inR }

func (l *ioLink) sendExit(res executor.Result) {
	msg := ""
	if res.Err != nil {
		msg = res.Err.Error()
	}
	_ = l.conn.Send(stepio.Exit, stepio.FormatExit(res.ExitCode, res.Signal, msg))
}

func (l *ioLink) close() {
	l.inR.Close()
	l.conn.Close()
}
