// Package bcast copies a file to every node of a running job (sbcast,
// srun --bcast). It is apart from package cli, which every command links,
// because it listens on TCP and makes a key (net's listener, crypto/rand):
// sbatch's binary links neither (cmd/drover-sbatch).
package bcast

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"slices"
	"sync"
	"time"

	"github.com/drover-hpc/drover/internal/cli"
	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/stepio"
)

// File is one file to copy to every node of a running job (sbcast, srun
// --bcast).
type File struct {
	Job        model.JobID
	LaunchHost string // the address the nodes dial
	Data       []byte
	Dest       string // absolute path, the same on every node
	Mode       uint32 // permission bits of the copy
	Force      bool   // replace an existing file
	MTime      int64  // modification time to give the copy; 0 leaves it
	// Timeout bounds the wait for every node to dial in; 0 is 60 s.
	Timeout time.Duration
}

// Failure is one node's refusal of the file.
type Failure struct {
	Node, Msg string
}

// String is Slurm's line for the failure.
func (f Failure) String() string { return "REQUEST_FILE_BCAST(" + f.Node + "): " + f.Msg }

// Send copies b.Data to b.Dest on every node of b.Job: it listens
// on b.LaunchHost, asks the controller to send the nodes, and streams the
// file to each node that dials in; each node writes it as the job's user
// and answers. It returns the nodes that refused the file, in the job's
// node order; err is a failure of the whole transfer, worded for the user
// ("unable to listen: …", "REQUEST_FILE_BCAST: <controller's answer>",
// "N of M nodes did not fetch the file").
func Send(ctx context.Context, c cli.Client, b File) ([]Failure, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort(b.LaunchHost, "0"))
	if err != nil {
		return nil, fmt.Errorf("unable to listen: %v", err)
	}
	defer ln.Close()
	keyb := make([]byte, 16)
	_, _ = rand.Read(keyb)
	key := hex.EncodeToString(keyb)
	nodes, err := c.Broadcast(ctx, cli.BroadcastRequest{
		Job: b.Job, Addr: ln.Addr().String(), Key: key, Dest: b.Dest, Mode: b.Mode,
		Force: b.Force, MTime: b.MTime, Size: int64(len(b.Data)),
	})
	if err != nil {
		return nil, fmt.Errorf("REQUEST_FILE_BCAST: %w", err)
	}
	if len(nodes) == 0 {
		return nil, nil
	}
	timeout := b.Timeout
	if timeout <= 0 {
		timeout = 60 * time.Second
	}
	_ = ln.(*net.TCPListener).SetDeadline(time.Now().Add(timeout))

	// Each connection's handshake and transfer run on their own, so a
	// slow or stray one holds no other node up. The listener closes once
	// every node has dialed in, at the deadline, or when ctx ends.
	var (
		mu       sync.Mutex
		wg       sync.WaitGroup
		failed   = map[int]string{}
		answered = map[int]bool{}
		all      = make(chan struct{})
	)
	go func() {
		select {
		case <-ctx.Done():
		case <-all:
		}
		ln.Close()
	}()
	for {
		raw, err := ln.Accept()
		if err != nil {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn, h, err := stepio.Accept(raw, key)
			if err != nil || h.Job != uint32(b.Job) || h.Node >= len(nodes) {
				raw.Close()
				return
			}
			defer conn.Close()
			mu.Lock()
			dup := answered[h.Node]
			answered[h.Node] = true
			last := !dup && len(answered) == len(nodes)
			mu.Unlock()
			if dup {
				return
			}
			if last {
				close(all)
			}
			if msg := sendFile(conn, b.Data); msg != "" {
				mu.Lock()
				failed[h.Node] = msg
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	var failures []Failure
	idx := make([]int, 0, len(failed))
	for i := range failed {
		idx = append(idx, i)
	}
	slices.Sort(idx)
	for _, i := range idx {
		failures = append(failures, Failure{nodes[i], failed[i]})
	}
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
