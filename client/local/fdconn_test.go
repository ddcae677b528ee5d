package local

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/drover-hpc/drover/internal/api"
	"github.com/drover-hpc/drover/internal/localwire"
	"github.com/drover-hpc/drover/internal/model"
)

// fakeController accepts connections at a fresh socket and hands each
// call's request to serve, which writes what it likes on the connection.
func fakeController(t *testing.T, serve func(c net.Conn, req *localwire.Request)) string {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "s.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				if _, err := io.ReadFull(c, make([]byte, localwire.PrefaceLen)); err != nil {
					return
				}
				for {
					b, err := localwire.ReadFrame(c, 64<<20)
					if err != nil {
						return
					}
					var req localwire.Request
					if err := localwire.DecodeAnswer(b, &req); err != nil {
						t.Errorf("request: %v", err)
						return
					}
					serve(c, &req)
				}
			}()
		}
	}()
	return sock
}

func answer(t *testing.T, c net.Conn, body any) {
	var a localwire.Answer
	if body != nil {
		b, err := localwire.Encode(body)
		if err != nil {
			t.Error(err)
			return
		}
		a.Body = b
	}
	b, err := localwire.Encode(&a)
	if err != nil {
		t.Error(err)
		return
	}
	_ = localwire.WriteFrame(c, b)
}

// A call and its answer, small and large (an answer past the small-read
// buffer, a request past the socket's buffer), twice on the kept
// connection.
func TestFDConnCalls(t *testing.T) {
	sock := fakeController(t, func(c net.Conn, req *localwire.Request) {
		var spec model.JobSpec
		if err := localwire.DecodeAnswer(req.Body, &spec); err != nil {
			t.Errorf("spec: %v", err)
			return
		}
		answer(t, c, &localwire.Text{Text: spec.Name + ":" + spec.Script})
	})
	c := Dial(sock)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, script := range []string{"#!/bin/sh\ntrue\n", strings.Repeat("x", 3<<20)} {
		for range 2 {
			var out localwire.Text
			err := c.call(ctx, "SubmitJob", &model.JobSpec{Name: "n", Script: script}, &out, nil)
			if err != nil {
				t.Fatalf("call with a %d-byte script: %v", len(script), err)
			}
			if out.Text != "n:"+script {
				t.Fatalf("answer of %d bytes, want %d", len(out.Text), len(script)+2)
			}
		}
	}
}

// A cancelled context ends a call whose answer never comes (sbatch
// --wait, squeue -i: a stream without a deadline), and a deadline ends
// a call as "Socket timed out".
func TestFDConnCancelAndDeadline(t *testing.T) {
	got := make(chan struct{}, 4)
	sock := fakeController(t, func(c net.Conn, req *localwire.Request) { got <- struct{}{} }) // never answers
	c := Dial(sock)
	defer c.Close()

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- c.WatchJobs(ctx, []model.JobID{1}, func([]*model.Job) bool { return true })
	}()
	select { // the call is out: the client now waits for its answer
	case <-got:
	case <-time.After(20 * time.Second):
		t.Fatal("the watch did not reach the controller in 20 s")
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled watch: %v, want context.Canceled", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("a cancelled watch still waits after 20 s")
	}

	ctx, cancel = context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := c.SubmitJob(ctx, &model.JobSpec{Script: "true"})
	if err == nil || err.Error() != "Socket timed out on send/recv operation" {
		t.Fatalf("call past its deadline: %v", err)
	}
}

// No controller at the socket is ErrNoController (what sends a command
// to the other controllers over gRPC), and so is a closed connection
// before the call went out.
func TestFDConnNoController(t *testing.T) {
	c := Dial(filepath.Join(t.TempDir(), "none.sock"))
	_, err := c.SubmitJob(context.Background(), &model.JobSpec{Script: "true"})
	if !errors.Is(err, api.ErrNoController) {
		t.Fatalf("no socket: %v", err)
	}
}

// Reads smaller than the buffer are served from what one recv brought,
// in order, to the last byte.
func TestFDConnBufferedReads(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "s.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	want := bytes.Repeat([]byte("0123456789"), 1000)
	go func() {
		c, err := l.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		_, _ = c.Write(want)
	}()
	conn, err := dialFD(sock, time.Now().Add(10*time.Second), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(20 * time.Second))
	got := make([]byte, 0, len(want))
	small := make([]byte, 7)
	for {
		n, err := conn.Read(small)
		got = append(got, small[:n]...)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("read after %d bytes: %v", len(got), err)
		}
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%d bytes read in small pieces, not the %d written", len(got), len(want))
	}
}

// A call cancelled while it waits to connect (the controller stopped
// accepting: its listen backlog is full) ends with the cancel, not when
// the connection's time-out (Timeout, a minute) runs out.
func TestFDConnCancelWhileConnecting(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "full.sock")
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	if err := syscall.Bind(fd, &syscall.SockaddrUnix{Name: sock}); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Listen(fd, 0); err != nil { // never accepts
		t.Fatal(err)
	}
	// Fill the backlog: a connect then waits for room (or fails at once
	// when it has no time to wait).
	for full := false; !full; {
		c, err := dialFD(sock, time.Now().Add(time.Millisecond), nil)
		if err != nil {
			full = true
			continue
		}
		defer c.Close()
	}
	c := Dial(sock)
	defer c.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := c.SubmitJob(ctx, &model.JobSpec{Script: "true"})
		done <- err
	}()
	cancel() // before or while it waits in connect: it ends with the cancel either way
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("a call cancelled while connecting: %v, want context.Canceled", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a call cancelled while connecting still waits after 30 s")
	}
}
