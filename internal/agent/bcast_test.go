package agent

import (
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	pb "github.com/drover-hpc/drover/api/drover/v1"
	"github.com/drover-hpc/drover/internal/stepio"
)

// sbcastConn is the node's end of a transfer whose sender sends data and
// the end marker.
func sbcastConn(t *testing.T, data string) *stepio.Conn {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		c, err := l.Accept()
		if err != nil {
			return
		}
		sc, _, err := stepio.Accept(c, "k")
		if err != nil {
			c.Close()
			return
		}
		_ = sc.Send(stepio.Data, 0, []byte(data))
		_ = sc.Send(stepio.DataEnd, 0, nil)
		t.Cleanup(func() { sc.Close() })
	}()
	conn, err := stepio.Dial(l.Addr().String(), "k", stepio.Hello{Job: 1})
	if err != nil {
		t.Fatal(err)
	}
	<-done
	t.Cleanup(func() { conn.Close() })
	return conn
}

// sbcast writes as the job's user: where the user may, owned by them, with
// the mode asked; never over an existing file without -f; and with -f a
// symlink at the destination is replaced, not written through.
func TestReceiveFileAsUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the agent's identity switch")
	}
	const uid, gid = 65534, 65534
	base := t.TempDir()
	if err := os.Chmod(filepath.Dir(base), 0o711); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(base, 0o711); err != nil {
		t.Fatal(err)
	}
	users := filepath.Join(base, "user")
	if err := os.Mkdir(users, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(users, uid, gid); err != nil {
		t.Fatal(err)
	}
	dest := filepath.Join(users, "prog")
	if err := receiveFile(sbcastConn(t, "v1"), &pb.FetchFile{Dest: dest, Mode: 0o750}, uid, gid, nil, time.Minute); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(dest)
	if err != nil || st.Mode().Perm() != 0o750 || st.Sys().(*syscall.Stat_t).Uid != uid {
		t.Fatalf("sent file: %v %v", st, err)
	}
	if err := receiveFile(sbcastConn(t, "v2"), &pb.FetchFile{Dest: dest}, uid, gid, nil, time.Minute); err == nil {
		t.Error("an existing file was replaced without -f")
	}
	// A link to root's file where the file goes: -f replaces the link.
	secret := filepath.Join(base, "root-only")
	if err := os.WriteFile(secret, []byte("root's\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(dest); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, dest); err != nil {
		t.Fatal(err)
	}
	if err := receiveFile(sbcastConn(t, "v3"), &pb.FetchFile{Dest: dest, Force: true}, uid, gid, nil, time.Minute); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(secret); string(b) != "root's\n" {
		t.Errorf("root's file was written through the link: %q", b)
	}
	if b, _ := os.ReadFile(dest); string(b) != "v3" {
		t.Errorf("destination holds %q", b)
	}
	// Root's directory: the user may not write there, so neither may sbcast.
	if err := receiveFile(sbcastConn(t, "v4"), &pb.FetchFile{Dest: filepath.Join(base, "x"), Force: true}, uid, gid, nil, time.Minute); err == nil {
		t.Error("sbcast wrote into a directory the user cannot write")
	}
	if _, err := os.Lstat(filepath.Join(base, "x")); !os.IsNotExist(err) {
		t.Errorf("a file appeared in root's directory: %v", err)
	}
	if err := receiveFile(sbcastConn(t, "v5"), &pb.FetchFile{Dest: "relative"}, uid, gid, nil, time.Minute); err == nil {
		t.Error("a relative destination was accepted")
	}
}
