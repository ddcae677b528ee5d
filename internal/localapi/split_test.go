package localapi

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/drover-hpc/drover/internal/localwire"
)

// TestReusedReadBuffersKeepConnectionsApart: the read buffers go back to
// a pool after each connection. Connections one after another and side
// by side each read exactly their own bytes, also when a read was still
// waiting on the connection as it ended (a stream's watch for the client
// leaving), and a read after the end fails instead of reading a buffer
// another connection owns. Run with -race.
func TestReusedReadBuffersKeepConnectionsApart(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "s")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	var late sync.WaitGroup
	lateErrs := make(chan error, 100)
	others := Split(l, 5*time.Second, func(c net.Conn) {
		defer c.Close()
		// Echo one length-prefixed message, as ServeConn answers a call.
		var n [2]byte
		if _, err := io.ReadFull(c, n[:]); err != nil {
			return
		}
		msg := make([]byte, int(n[0])<<8|int(n[1]))
		if _, err := io.ReadFull(c, msg); err != nil {
			return
		}
		late.Add(1)
		go func() { // waits on the connection past its end
			defer late.Done()
			var b [1]byte
			if _, err := c.Read(b[:]); err == nil {
				lateErrs <- fmt.Errorf("a read after the connection's end gave %q", b[:])
			}
		}()
		_, _ = c.Write(msg)
	})
	defer others.Close()

	one := func(i int) error {
		c, err := net.Dial("unix", sock)
		if err != nil {
			return err
		}
		defer c.Close()
		msg := bytes.Repeat([]byte{byte('a' + i%26)}, 1+(i*997)%(2*readBuffer))
		out := append([]byte(localwire.Magic), byte(len(msg)>>8), byte(len(msg)))
		if _, err := c.Write(append(out, msg...)); err != nil {
			return err
		}
		got := make([]byte, len(msg))
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, err := io.ReadFull(c, got); err != nil {
			return fmt.Errorf("connection %d: %v", i, err)
		}
		if !bytes.Equal(got, msg) {
			return fmt.Errorf("connection %d read another's bytes", i)
		}
		return nil
	}
	for i := range 40 {
		if err := one(i); err != nil {
			t.Fatal(err)
		}
	}
	errs := make(chan error, 40)
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Add(1)
		go func() { defer wg.Done(); errs <- one(100 + i) }()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan struct{})
	go func() { late.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("reads left waiting 30 s after their connections ended")
	}
	close(lateErrs)
	for err := range lateErrs {
		t.Fatal(err)
	}
	_ = os.Remove(sock)
}
