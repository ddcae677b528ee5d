package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/stepio"
)

// BroadcastFile copies data to dest on every node of a running job (sbcast,
// srun --bcast): it listens on launchHost, asks the controller to send the
// nodes, and streams the file to each node that dials in; each node writes
// it as the job's user and answers. It returns one "node: reason" line per
// node that failed; err is for failures of the whole transfer.
func BroadcastFile(ctx context.Context, c Client, job model.JobID, launchHost string, data []byte,
	dest string, mode uint32, force bool, mtime int64, timeout time.Duration) ([]string, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort(launchHost, "0"))
	if err != nil {
		return nil, fmt.Errorf("unable to listen: %v", err)
	}
	defer ln.Close()
	keyb := make([]byte, 16)
	_, _ = rand.Read(keyb)
	key := hex.EncodeToString(keyb)
	nodes, err := c.Broadcast(ctx, BroadcastRequest{
		Job: job, Addr: ln.Addr().String(), Key: key, Dest: dest, Mode: mode,
		Force: force, MTime: mtime, Size: int64(len(data)),
	})
	if err != nil {
		return nil, err
	}
	if timeout <= 0 {
		timeout = 60 * time.Second
	}
	_ = ln.(*net.TCPListener).SetDeadline(time.Now().Add(timeout))
	var mu sync.Mutex
	var wg sync.WaitGroup
	var failures []string
	answered := map[int]bool{}
	for len(answered) < len(nodes) {
		raw, err := ln.Accept()
		if err != nil {
			break
		}
		conn, h, err := stepio.Accept(raw, key)
		if err != nil || h.Job != uint32(job) || h.Node >= len(nodes) {
			raw.Close()
			continue
		}
		mu.Lock()
		dup := answered[h.Node]
		answered[h.Node] = true
		mu.Unlock()
		if dup {
			conn.Close()
			continue
		}
		wg.Add(1)
		go func(node string) {
			defer wg.Done()
			defer conn.Close()
			if msg := sendFile(conn, data); msg != "" {
				mu.Lock()
				failures = append(failures, node+": "+msg)
				mu.Unlock()
			}
		}(nodes[h.Node])
	}
	wg.Wait()
	if missing := len(nodes) - len(answered); missing > 0 {
		return failures, fmt.Errorf("%d of %d nodes did not fetch the file", missing, len(nodes))
	}
	return failures, nil
}

// sendFile streams the file and returns the node's error, "" on success.
// A node that refuses the file answers before reading it all: its answer
// is read even when a write failed.
func sendFile(conn *stepio.Conn, data []byte) string {
	const chunk = 512 << 10
	var werr error
	for off := 0; off < len(data) && werr == nil; off += chunk {
		werr = conn.Send(stepio.Data, 0, data[off:min(off+chunk, len(data))])
	}
	if werr == nil {
		werr = conn.Send(stepio.DataEnd, 0, nil)
	}
	for {
		t, _, p, err := conn.Recv()
		if err != nil {
			if werr != nil {
				return werr.Error()
			}
			return "no answer from the node"
		}
		if t == stepio.Exit {
			code, _, msg := stepio.ParseExit(p)
			if code != 0 && msg == "" {
				msg = "failed"
			}
			return msg
		}
	}
}
