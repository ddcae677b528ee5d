// Package sbcast is the sbcast command: it copies a file to every node of
// a running job. The nodes dial sbcast, receive the file and write it as
// the job's user; each answers with its result.
package sbcast

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"github.com/drover-hpc/drover/internal/cli"
	"github.com/drover-hpc/drover/internal/model"
	"github.com/drover-hpc/drover/internal/stepio"
)

// LaunchHost is the address nodes use to reach sbcast (set like srun's).
var LaunchHost = "127.0.0.1"

// Run is the sbcast entry point.
func Run(ctx context.Context, env *cli.Env, args []string) int {
	fs := pflag.NewFlagSet("sbcast", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	force := fs.BoolP("force", "f", false, "replace the destination file if it exists")
	preserve := fs.BoolP("preserve", "p", false, "keep the modification time and mode")
	jobFlag := fs.StringP("jobid", "j", "", "job id (default: SLURM_JOB_ID)")
	timeout := fs.IntP("timeout", "t", 0, "seconds to wait for the nodes")
	fs.StringP("compress", "C", "", "accepted; transfers are not compressed")
	fs.IntP("fanout", "F", 0, "accepted; every node fetches from sbcast")
	fs.StringP("size", "s", "", "accepted; the block size is fixed")
	fs.BoolP("verbose", "v", false, "verbose")
	fs.Lookup("compress").NoOptDefVal = "lz4"
	help := fs.BoolP("help", "h", false, "show help")
	version := fs.BoolP("version", "V", false, "show version")
	if err := fs.Parse(args); err != nil {
		env.Errorf("%v", err)
		fmt.Fprintln(env.Stderr, "Try \"sbcast --help\" for more information")
		return 1
	}
	switch {
	case *help:
		fmt.Fprintf(env.Stdout, "Usage: sbcast [OPTIONS] SOURCE DEST\n%s", fs.FlagUsages())
		return 0
	case *version:
		fmt.Fprintf(env.Stdout, "slurm %s\n", env.Version)
		return 0
	}
	if fs.NArg() != 2 {
		env.Errorf("Need two file names, have %d names", fs.NArg())
		fmt.Fprintln(env.Stderr, "Try \"sbcast --help\" for more information")
		return 1
	}
	jobStr := *jobFlag
	if jobStr == "" {
		jobStr = env.Getenv("SLURM_JOB_ID")
	}
	jobID, err := strconv.ParseUint(jobStr, 10, 32)
	if err != nil || jobID == 0 {
		env.Errorf("Need a job id: run sbcast inside an allocation or give --jobid")
		return 1
	}
	src, dest := fs.Arg(0), fs.Arg(1)
	if !filepath.IsAbs(dest) {
		if wd, err := os.Getwd(); err == nil {
			dest = filepath.Join(wd, dest)
		}
	}
	data, err := os.ReadFile(src)
	if err != nil {
		env.Errorf("Can't open `%s`: %v", src, unwrap(err))
		return 1
	}
	st, _ := os.Stat(src)
	mode := uint32(st.Mode().Perm())
	var mtime int64
	if *preserve {
		mtime = st.ModTime().Unix()
	}

	ln, err := net.Listen("tcp", net.JoinHostPort(LaunchHost, "0"))
	if err != nil {
		env.Errorf("unable to listen: %v", err)
		return 1
	}
	defer ln.Close()
	keyb := make([]byte, 16)
	_, _ = rand.Read(keyb)
	key := hex.EncodeToString(keyb)
	c, err := env.Client()
	if err != nil {
		env.Errorf("%v", err)
		return 1
	}
	nodes, err := c.Broadcast(ctx, cli.BroadcastRequest{
		Job: model.JobID(jobID), Addr: ln.Addr().String(), Key: key, Dest: dest, Mode: mode,
		Force: *force, MTime: mtime, Size: int64(len(data)),
	})
	if err != nil {
		env.Errorf("REQUEST_FILE_BCAST: %v", err)
		return 1
	}
	wait := time.Duration(*timeout) * time.Second
	if wait <= 0 {
		wait = 60 * time.Second
	}
	_ = ln.(*net.TCPListener).SetDeadline(time.Now().Add(wait))

	var mu sync.Mutex
	var wg sync.WaitGroup
	failed, answered := 0, 0
	for range nodes {
		raw, err := ln.Accept()
		if err != nil {
			break
		}
		conn, h, err := stepio.Accept(raw, key)
		if err != nil || h.Job != uint32(jobID) || h.Node >= len(nodes) {
			raw.Close()
			continue
		}
		wg.Add(1)
		go func(node string) {
			defer wg.Done()
			defer conn.Close()
			msg := send(conn, data)
			mu.Lock()
			defer mu.Unlock()
			answered++
			if msg != "" {
				failed++
				env.Errorf("REQUEST_FILE_BCAST(%s): %s", node, msg)
			}
		}(nodes[h.Node])
	}
	wg.Wait()
	if answered < len(nodes) {
		env.Errorf("%d of %d nodes did not fetch the file", len(nodes)-answered, len(nodes))
		return 1
	}
	if failed > 0 {
		return 1
	}
	return 0
}

// send streams the file and returns the node's error, "" on success. A
// node that refuses the file answers before reading it all: its answer is
// read even when a write failed.
func send(conn *stepio.Conn, data []byte) string {
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

func unwrap(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}
