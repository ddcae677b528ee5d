package stepio

import (
	"bytes"
	"io"
	"net"
	"testing"
)

func pair(t *testing.T, key string) (agent, srun *Conn, acceptErr error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	type res struct {
		c   *Conn
		err error
	}
	ch := make(chan res, 1)
	go func() {
		raw, err := ln.Accept()
		if err != nil {
			ch <- res{nil, err}
			return
		}
		c, h, err := Accept(raw, "secret")
		if err == nil && (h.Job != 42 || h.Step != 3 || h.Node != 1) {
			t.Errorf("hello %+v", h)
		}
		ch <- res{c, err}
	}()
	agent, err = Dial(ln.Addr().String(), key, Hello{Job: 42, Step: 3, Node: 1})
	if err != nil {
		t.Fatal(err)
	}
	r := <-ch
	return agent, r.c, r.err
}

func TestFramesRoundTrip(t *testing.T) {
	a, s, err := pair(t, "secret")
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	defer s.Close()
	big := bytes.Repeat([]byte("x"), 3*maxFrame+5)
	go func() {
		io.WriteString(a.Writer(Stdout, 7), "hello\n")
		a.Writer(Stderr, 7).Write(big)
		a.Send(Exit, 7, FormatExit(3, 0, "launch failed: no such file"))
	}()
	var out, errb []byte
	for {
		typ, task, p, err := s.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if task != 7 {
			t.Fatalf("frame for task %d", task)
		}
		switch typ {
		case Stdout:
			out = append(out, p...)
		case Stderr:
			errb = append(errb, p...)
		case Exit:
			code, sig, msg := ParseExit(p)
			if code != 3 || sig != 0 || msg != "launch failed: no such file" {
				t.Fatalf("exit %d %d %q", code, sig, msg)
			}
			if string(out) != "hello\n" || !bytes.Equal(errb, big) {
				t.Fatalf("streams: %q, %d bytes", out, len(errb))
			}
			return
		}
	}
}

func TestWrongKeyRefused(t *testing.T) {
	a, _, err := pair(t, "guess")
	defer a.Close()
	if err == nil {
		t.Fatal("handshake with a wrong key accepted")
	}
}

// FuzzPeer feeds arbitrary bytes to a listener's side of the protocol: the
// handshake and then frames. Nothing may panic or allocate past maxFrame.
func FuzzPeer(f *testing.F) {
	f.Add([]byte("DROVER-IO 2 1 0 0 k\n\x01\x00\x00\x00\x00\x00\x00\x00\x02hi"))
	f.Add([]byte("DROVER-IO 2 x y z k\n"))
	f.Add([]byte("\xff\xff\xff\xff"))
	f.Fuzz(func(t *testing.T, data []byte) {
		a, b := net.Pipe()
		go func() {
			a.Write(data)
			a.Close()
		}()
		conn, _, err := Accept(b, "k")
		if err != nil {
			b.Close()
			return
		}
		for {
			if _, _, p, err := conn.Recv(); err != nil || len(p) > maxFrame {
				break
			}
		}
		conn.Close()
	})
}
