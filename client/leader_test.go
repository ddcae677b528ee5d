package client

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	pb "github.com/drover-hpc/drover/api/drover/v1"
	"github.com/drover-hpc/drover/internal/api"
	"github.com/drover-hpc/drover/internal/grpcapi/leaderstatus"
	"github.com/drover-hpc/drover/internal/model"
)

// ctl is an in-process controller: it submits jobs while it leads and
// refuses them, naming leader, while it follows; reads it always serves.
type ctl struct {
	pb.UnimplementedDroverServer
	addr string

	mu      sync.Mutex
	leader  *string // nil: leads
	submits int
	tokens  []string
	reads   int
	readErr error // what ListNodes answers; nil: one node
}

func (s *ctl) SubmitJob(ctx context.Context, _ *pb.SubmitJobRequest) (*pb.SubmitJobResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.submits++
	md, _ := metadata.FromIncomingContext(ctx)
	s.tokens = append(s.tokens, strings.Join(md.Get("authorization"), ","))
	if s.leader != nil {
		return nil, leaderstatus.Status(&api.NotLeaderError{Leader: *s.leader})
	}
	return &pb.SubmitJobResponse{JobId: 42}, nil
}

func (s *ctl) ListNodes(context.Context, *pb.ListNodesRequest) (*pb.ListNodesResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reads++
	if s.readErr != nil {
		return nil, s.readErr
	}
	return &pb.ListNodesResponse{Nodes: []*pb.Node{{Name: "n1"}}}, nil
}

func (s *ctl) follow(leader string) { s.mu.Lock(); s.leader = &leader; s.mu.Unlock() }

func (s *ctl) readCount() int { s.mu.Lock(); defer s.mu.Unlock(); return s.reads }

func (s *ctl) failReads(err error) { s.mu.Lock(); s.readErr = err; s.mu.Unlock() }

func (s *ctl) counts() (int, []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.submits, append([]string(nil), s.tokens...)
}

// testCA writes a CA certificate (also the servers' certificate, for
// 127.0.0.1) to dir and returns its path and the servers' TLS config.
func testCA(t *testing.T, dir string) (string, *tls.Config) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "drover-test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:    x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path, &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}},
		MinVersion: tls.VersionTLS13}
}

// serveTCP starts s on 127.0.0.1 with TLS, as a controller's TCP API.
func serveTCP(t *testing.T, cfg *tls.Config) *ctl {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &ctl{addr: l.Addr().String()}
	g := grpc.NewServer(grpc.Creds(credentials.NewTLS(cfg)))
	pb.RegisterDroverServer(g, s)
	go func() { _ = g.Serve(l) }()
	t.Cleanup(g.Stop)
	return s
}

// serveUnix starts s on a Unix socket, as a controller's local API.
func serveUnix(t *testing.T, path string) *ctl {
	t.Helper()
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	s := &ctl{addr: path}
	g := grpc.NewServer()
	pb.RegisterDroverServer(g, s)
	go func() { _ = g.Serve(l) }()
	t.Cleanup(g.Stop)
	return s
}

func dialTest(t *testing.T, o Options) *Client {
	t.Helper()
	c, err := Dial(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func submit(t *testing.T, c *Client) (int, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	id, err := c.SubmitJob(ctx, &model.JobSpec{})
	return int(id), err
}

// A change refused by a follower is made on the leader it names, once,
// with the client's token; a read is served by the follower.
func TestChangeFollowsTheLeader(t *testing.T) {
	ca, cfg := testCA(t, t.TempDir())
	follower, leader := serveTCP(t, cfg), serveTCP(t, cfg)
	follower.follow(leader.addr)
	c := dialTest(t, Options{Addr: follower.addr, CAFile: ca, Token: "secret"})

	id, err := submit(t, c)
	if err != nil || id != 42 {
		t.Fatalf("SubmitJob = %d, %v; want 42 from the leader", id, err)
	}
	if n, _ := follower.counts(); n != 1 {
		t.Errorf("follower asked %d times, want 1", n)
	}
	if n, tokens := leader.counts(); n != 1 || tokens[0] != "Bearer secret" {
		t.Errorf("leader asked %d times with %q, want once with the client's token", n, tokens)
	}
	nodes, err := c.ListNodes(context.Background())
	if err != nil || len(nodes) != 1 {
		t.Fatalf("ListNodes on the follower = %v, %v", nodes, err)
	}
}

// A command on a controller's host reaches its follower over the Unix
// socket and the leader over TCP.
func TestChangeFollowsTheLeaderFromTheSocket(t *testing.T) {
	dir := t.TempDir()
	ca, cfg := testCA(t, dir)
	leader := serveTCP(t, cfg)
	follower := serveUnix(t, filepath.Join(dir, "ctld.sock"))
	follower.follow(leader.addr)
	c := dialTest(t, Options{Socket: follower.addr, Addr: "127.0.0.1:1", CAFile: ca})

	if id, err := submit(t, c); err != nil || id != 42 {
		t.Fatalf("SubmitJob = %d, %v; want 42 from the leader", id, err)
	}
	if n, _ := leader.counts(); n != 1 {
		t.Errorf("leader asked %d times, want 1", n)
	}
}

// Redirects are bounded: a follower naming itself, or a second follower
// naming another, ends the call with the refusal, which names the leader;
// with no leader known the words say so.
func TestNotLeaderDoesNotLoop(t *testing.T) {
	ca, cfg := testCA(t, t.TempDir())

	t.Run("names itself", func(t *testing.T) {
		a := serveTCP(t, cfg)
		a.follow(a.addr)
		_, err := submit(t, dialTest(t, Options{Addr: a.addr, CAFile: ca}))
		nl, ok := api.IsNotLeader(err)
		if !ok || nl.Leader != a.addr || !strings.Contains(err.Error(), "the leader is "+a.addr) {
			t.Fatalf("err = %v, want the refusal naming %s", err, a.addr)
		}
		if n, _ := a.counts(); n != 1 {
			t.Errorf("asked %d times, want 1", n)
		}
	})

	t.Run("second follower", func(t *testing.T) {
		a, b := serveTCP(t, cfg), serveTCP(t, cfg)
		a.follow(b.addr)
		b.follow(a.addr)
		_, err := submit(t, dialTest(t, Options{Addr: a.addr, CAFile: ca}))
		if nl, ok := api.IsNotLeader(err); !ok || nl.Leader != a.addr {
			t.Fatalf("err = %v, want b's refusal naming %s", err, a.addr)
		}
		na, _ := a.counts()
		nb, _ := b.counts()
		if na != 1 || nb != 1 {
			t.Errorf("asked a %d and b %d times, want once each", na, nb)
		}
	})

	t.Run("no leader known", func(t *testing.T) {
		a := serveTCP(t, cfg)
		a.follow("")
		_, err := submit(t, dialTest(t, Options{Addr: a.addr, CAFile: ca}))
		if _, ok := api.IsNotLeader(err); !ok || err.Error() != (&api.NotLeaderError{}).Error() {
			t.Fatalf("err = %v, want %q", err, (&api.NotLeaderError{}).Error())
		}
		if n, _ := a.counts(); n != 1 {
			t.Errorf("asked %d times, want 1", n)
		}
	})

	t.Run("leader unreachable", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		gone := l.Addr().String()
		l.Close()
		a := serveTCP(t, cfg)
		a.follow(gone)
		_, err = submit(t, dialTest(t, Options{Addr: a.addr, CAFile: ca}))
		if nl, ok := api.IsNotLeader(err); !ok || nl.Leader != gone {
			t.Fatalf("err = %v, want the refusal naming %s", err, gone)
		}
	})
}

func TestLeaderAddrTakesThePortOfTheAPI(t *testing.T) {
	c := &Client{o: Options{Addr: "ctl-a:6817"}}
	for in, want := range map[string]string{"ctl-b": "ctl-b:6817", "ctl-b:7000": "ctl-b:7000", "10.0.0.2": "10.0.0.2:6817"} {
		if got := c.leaderAddr(in); got != want {
			t.Errorf("leaderAddr(%q) = %q, want %q", in, got, want)
		}
	}
}

// deadAddr is a TCP address nothing listens on.
func deadAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// When the controller cannot be reached the client tries the other
// SlurmctldHost entries in order: the first that answers serves reads
// and changes, and a backup that follows still sends changes to the
// leader it names.
func TestUnreachableControllerTriesTheBackups(t *testing.T) {
	dir := t.TempDir()
	ca, cfg := testCA(t, dir)
	follower, leader, unused := serveTCP(t, cfg), serveTCP(t, cfg), serveTCP(t, cfg)
	follower.follow(leader.addr)
	c := dialTest(t, Options{Addr: deadAddr(t), Backups: []string{deadAddr(t), follower.addr, unused.addr}, CAFile: ca})

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if nodes, err := c.ListNodes(ctx); err != nil || len(nodes) != 1 {
		t.Fatalf("ListNodes = %v, %v; want the first backup that answers to serve it", nodes, err)
	}
	if id, err := submit(t, c); err != nil || id != 42 {
		t.Fatalf("SubmitJob = %d, %v; want 42 from the leader the backup names", id, err)
	}
	if _, err := c.ListJobs(ctx, api.JobQuery{}); err == nil || errors.Is(err, api.ErrNoController) {
		// The fake serves no ListJobs: Unimplemented proves a controller answered.
		t.Fatalf("ListJobs = %v; want the answering backup's refusal", err)
	}
	if n, _ := unused.counts(); n != 0 || unused.readCount() != 0 {
		t.Errorf("the backup after the one that answered was asked")
	}
	if n, _ := leader.counts(); n != 1 {
		t.Errorf("leader asked %d times, want 1", n)
	}

	t.Run("socket down", func(t *testing.T) {
		// A socket file left by a controller that is gone: Addr answers.
		sock := filepath.Join(dir, "stale.sock")
		if err := os.WriteFile(sock, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		c := dialTest(t, Options{Socket: sock, Addr: unused.addr, CAFile: ca})
		if _, err := c.ListNodes(ctx); err != nil {
			t.Fatalf("ListNodes = %v; want Addr to answer after the socket", err)
		}
	})

	t.Run("all down", func(t *testing.T) {
		c := dialTest(t, Options{Addr: deadAddr(t), Backups: []string{deadAddr(t)}, CAFile: ca})
		if _, err := c.ListNodes(ctx); !errors.Is(err, api.ErrNoController) {
			t.Fatalf("ListNodes = %v, want %v", err, api.ErrNoController)
		}
	})

	t.Run("answered refusal does not move on", func(t *testing.T) {
		first, second := serveTCP(t, cfg), serveTCP(t, cfg)
		first.failReads(status.Error(codes.Unavailable, api.ErrTryAgain.Error()))
		c := dialTest(t, Options{Addr: first.addr, Backups: []string{second.addr}, CAFile: ca})
		if _, err := c.ListNodes(ctx); !errors.Is(err, api.ErrTryAgain) {
			t.Fatalf("ListNodes = %v, want %v", err, api.ErrTryAgain)
		}
		if second.readCount() != 0 {
			t.Errorf("a controller that answered was passed over")
		}
	})
}
