package agent

import (
	"crypto/rand"
	"encoding/hex"
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

// maxFetchesPerUser bounds one user's sbcast transfers running at once on
// this node. A transfer holds an OS thread of the agent (it writes with the
// user's filesystem identity, a per-thread setting) and a connection; a
// user asking for transfers whose data never comes (500 requests: 360
// threads) could take the agent, shared by every user's jobs, to the Go
// runtime's thread limit, which ends the process. Each frame of a
// transfer must also come within MessageTimeout.
const maxFetchesPerUser = 16

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
	if !a.takeFetch(mj.UserID) {
		a.log.Warn("sbcast refused: the user has as many transfers here as they may", "job", f.JobId, "limit", maxFetchesPerUser)
		_ = conn.Send(stepio.Exit, uint32(max(idx, 0)), stepio.FormatExit(1, 0, "Resource temporarily unavailable"))
		_ = conn.CloseWrite()
		return
	}
	defer a.giveFetch(mj.UserID)
	code, msg := 0, ""
	err = receiveFile(conn, f, mj.UserID, mj.GroupID, mj.Groups, a.msgTimeout())
	if err != nil && !errors.Is(err, errTransfer) {
		drain(conn) // read the rest, so sbcast hears why instead of a broken pipe
	}
	if err != nil {
		var pe *os.PathError
		var le *os.LinkError
		switch {
		case errors.As(err, &pe):
			err = pe.Err
		case errors.As(err, &le):
			err = le.Err
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

// takeFetch counts a transfer of uid's; false: uid has maxFetchesPerUser.
func (a *Agent) takeFetch(uid uint32) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.fetching[uid] >= maxFetchesPerUser {
		return false
	}
	if a.fetching == nil {
		a.fetching = map[uint32]int{}
	}
	a.fetching[uid]++
	return true
}

func (a *Agent) giveFetch(uid uint32) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.fetching[uid]--; a.fetching[uid] <= 0 {
		delete(a.fetching, uid)
	}
}

func receiveFile(conn *stepio.Conn, f *pb.FetchFile, uid, gid uint32, groups []uint32, frameTimeout time.Duration) error {
	if !filepath.IsAbs(f.Dest) {
		return errors.New("destination must be an absolute path")
	}
	mode := os.FileMode(f.Mode & 0o7777)
	if mode == 0 {
		mode = 0o600
	}
	return executor.AsUser(uid, gid, groups, func() error {
		// The file is written beside its destination under a temporary
		// name, then put in place: a program that runs from the
		// destination (concurrent srun --bcast of one program) keeps its
		// old copy instead of failing with "Text file busy", and readers
		// never see half a file. Without -f, link refuses an existing
		// destination as O_EXCL did.
		var suffix [6]byte
		_, _ = rand.Read(suffix[:])
		tmp := filepath.Join(filepath.Dir(f.Dest), "."+filepath.Base(f.Dest)+".drover-"+hex.EncodeToString(suffix[:]))
		out, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, mode)
		if err != nil {
			if pe := (*os.PathError)(nil); errors.As(err, &pe) {
				pe.Path = f.Dest
			}
			return err
		}
		defer os.Remove(tmp) // gone once linked or renamed; on failure, cleaned
		fail := func(err error) error {
			out.Close()
			return err
		}
		if !f.Force {
			// Refuse early, before the transfer, as O_EXCL did.
			if _, err := os.Lstat(f.Dest); err == nil {
				return fail(&os.PathError{Op: "open", Path: f.Dest, Err: syscall.EEXIST})
			}
		}
		for {
			_ = conn.SetReadDeadline(time.Now().Add(frameTimeout)) // a socket deadline: wall time
			t, _, p, err := conn.Recv()
			if err != nil {
				return fail(errTransfer)
			}
			if t == stepio.DataEnd {
				break
			}
			if t != stepio.Data {
				continue
			}
			if _, err := out.Write(p); err != nil {
				return fail(err)
			}
		}
		if err := out.Chmod(mode); err != nil {
			return fail(err)
		}
		if err := out.Close(); err != nil {
			return err
		}
		if f.Mtime > 0 {
			t := time.Unix(f.Mtime, 0)
			if err := os.Chtimes(tmp, t, t); err != nil {
				return err
			}
		}
		if !f.Force {
			return os.Link(tmp, f.Dest)
		}
		return os.Rename(tmp, f.Dest)
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
