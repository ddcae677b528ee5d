package agent

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	pb "github.com/drover-hpc/drover/api/drover/v1"
	"github.com/drover-hpc/drover/internal/executor"
	"github.com/drover-hpc/drover/internal/stepio"
	"github.com/drover-hpc/drover/internal/wire"
)

// fetch serves one sbcast: dial the client, receive the file, write it as
// the job's user, and answer with an exit frame (0, or 1 and the error).
func (a *Agent) fetch(f *pb.FetchFile) {
	mj := wire.JobFromPB(f.Job)
	idx := slices.Index(mj.NodeNames(), a.node)
	conn, err := stepio.Dial(f.IoAddr, f.IoKey, stepio.Hello{Job: f.JobId, Step: -1, Node: max(idx, 0)})
	if err != nil {
		a.log.Warn("cannot reach sbcast", "job", f.JobId, "addr", f.IoAddr, "err", err)
		return
	}
	defer conn.Close()
	code, msg := 0, ""
	err = receiveFile(conn, f, mj.UserID, mj.GroupID, mj.Groups)
	if err != nil && !errors.Is(err, errTransfer) {
		drain(conn) // read the rest, so sbcast hears why instead of a broken pipe
	}
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		msg = err.Error()
		if msg != "" {
			msg = strings.ToUpper(msg[:1]) + msg[1:] // strerror's capital
		}
		code = 1
	}
	_ = conn.Send(stepio.Exit, uint32(max(idx, 0)), stepio.FormatExit(code, 0, msg))
	_ = conn.CloseWrite()
}

func receiveFile(conn *stepio.Conn, f *pb.FetchFile, uid, gid uint32, groups []uint32) error {
	if !filepath.IsAbs(f.Dest) {
		return errors.New("destination must be an absolute path")
	}
	mode := os.FileMode(f.Mode & 0o7777)
	if mode == 0 {
		mode = 0o600
	}
	return executor.AsUser(uid, gid, groups, func() error {
		flags := os.O_WRONLY | os.O_CREATE | os.O_TRUNC | syscall.O_NOFOLLOW
		if !f.Force {
			flags |= os.O_EXCL
		}
		out, err := os.OpenFile(f.Dest, flags, mode)
		if err != nil {
			return err
		}
		for {
			t, _, p, err := conn.Recv()
			if err != nil {
				out.Close()
				return errTransfer
			}
			if t == stepio.DataEnd {
				break
			}
			if t != stepio.Data {
				continue
			}
			if _, err := out.Write(p); err != nil {
				out.Close()
				return err
			}
		}
		if err := out.Chmod(mode); err != nil {
			out.Close()
			return err
		}
		if err := out.Close(); err != nil {
			return err
		}
		if f.Mtime > 0 {
			t := time.Unix(f.Mtime, 0)
			return os.Chtimes(f.Dest, t, t)
		}
		return nil
	})
}

var errTransfer = errors.New("transfer interrupted")

// drain reads the file's frames up to its end.
func drain(conn *stepio.Conn) {
	for {
		t, _, _, err := conn.Recv()
		if err != nil || t == stepio.DataEnd {
			return
		}
	}
}
