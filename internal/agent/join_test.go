package agent

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	pb "github.com/drover-hpc/drover/api/drover/v1"
	"github.com/drover-hpc/drover/internal/auth"
)

// joinServer is a controller that answers joins for one token.
type joinServer struct {
	pb.UnimplementedAgentServiceServer
	ca     *auth.CA
	secret auth.JoinSecret
}

func (s *joinServer) Join(_ context.Context, r *pb.JoinRequest) (*pb.JoinResponse, error) {
	if r.TokenId != s.secret.ID || r.Secret != s.secret.Secret {
		return nil, errors.New("invalid or expired join token")
	}
	cert, err := s.ca.SignNode(r.Csr, r.Node)
	if err != nil {
		return nil, err
	}
	return &pb.JoinResponse{CertPem: cert, CaPem: s.ca.CertPEM, SlurmConf: "ClusterName=j\n"}, nil
}

func startJoinServer(t *testing.T) (*joinServer, string) {
	t.Helper()
	ca, err := auth.LoadOrCreateCA(t.TempDir(), "j")
	if err != nil {
		t.Fatal(err)
	}
	cert, err := ca.IssueServer([]string{"127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	js := &joinServer{ca: ca, secret: auth.NewJoinSecret(ca.Fingerprint())}
	g := grpc.NewServer(grpc.Creds(credentials.NewTLS(&tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS13})))
	pb.RegisterAgentServiceServer(g, js)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go g.Serve(l)
	t.Cleanup(g.Stop)
	return js, l.Addr().String()
}

// A join leaves the node's key for root alone, its certificate signed for
// its name, the CA and the cluster's configuration; it talks only to a
// controller whose CA the token names, and a refused join writes nothing.
func TestJoinWritesCredentials(t *testing.T) {
	js, addr := startJoinServer(t)
	dir := filepath.Join(t.TempDir(), "agent")
	ctx := context.Background()

	// A token for another cluster's CA: the controller is not trusted.
	other, err := auth.LoadOrCreateCA(t.TempDir(), "other")
	if err != nil {
		t.Fatal(err)
	}
	forged := auth.JoinSecret{ID: js.secret.ID, Secret: js.secret.Secret, CAHash: other.Fingerprint()}
	if err := joinCluster(ctx, forged.String(), addr, "n1", dir); err == nil || !strings.Contains(err.Error(), "fingerprint") {
		t.Errorf("join with a token for another CA: %v", err)
	}
	wrong := auth.JoinSecret{ID: js.secret.ID, Secret: strings.Repeat("0", 24), CAHash: js.secret.CAHash}
	if err := joinCluster(ctx, wrong.String(), addr, "n1", dir); err == nil {
		t.Error("join with a wrong secret")
	}
	if _, err := os.Stat(filepath.Join(dir, tlsDirName)); !os.IsNotExist(err) {
		t.Fatalf("a refused join left credentials: %v", err)
	}

	if err := joinCluster(ctx, js.secret.String(), addr, "n1", dir); err != nil {
		t.Fatal(err)
	}
	// The key and its directory are root's alone, whatever the umask.
	for _, path := range []string{filepath.Join(dir, tlsDirName), filepath.Join(dir, tlsDirName, "node.key")} {
		if st, err := os.Stat(path); err != nil || st.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s: %v %v, want no access for group or others", path, st.Mode(), err)
		}
	}
	pair, err := tls.LoadX509KeyPair(filepath.Join(dir, tlsDirName, "node.crt"), filepath.Join(dir, tlsDirName, "node.key"))
	if err != nil {
		t.Fatal(err)
	}
	if got := joinedController(dir); got != addr {
		t.Errorf("controller recorded %q, want %q", got, addr)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, joinedConfName)); string(b) != "ClusterName=j\n" {
		t.Errorf("slurm.conf %q", b)
	}
	// The certificate names n1, verified against the cluster CA.
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	chains, err := leaf.Verify(x509.VerifyOptions{Roots: js.ca.Pool(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	if err != nil {
		t.Fatalf("node certificate does not verify: %v", err)
	}
	if node, ok := auth.NodeOf(&tls.ConnectionState{VerifiedChains: chains}); !ok || node != "n1" {
		t.Errorf("certificate names %q %v", node, ok)
	}
}

// TestJoinedConfWinsOverDefault: a machine that joined keeps to the
// slurm.conf its join brought even where the default path (SLURM_CONF,
// /etc/slurm/slurm.conf) holds another cluster's file, as on a node that
// ran Slurm before; only -f names another.
func TestJoinedConfWinsOverDefault(t *testing.T) {
	tmp := t.TempDir()
	def := filepath.Join(tmp, "var-lib-drover-agent")
	other := filepath.Join(tmp, "etc-slurm.conf")
	if err := os.WriteFile(other, []byte("ClusterName=old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	joined := filepath.Join(def, joinedConfName)
	check := func(name string, o Options, wantDir, wantConf string) {
		t.Helper()
		dir := agentStateDir(o, def)
		if conf := agentConfPath(o, dir); dir != wantDir || conf != wantConf {
			t.Errorf("%s: state dir %q, conf %q; want %q, %q", name, dir, conf, wantDir, wantConf)
		}
	}
	// Not joined: the default slurm.conf and the cluster token.
	check("plain", Options{ConfPath: other}, "", other)
	// Joining now: the join's state directory, whatever exists by default.
	check("joining", Options{ConfPath: other, Join: "t"}, def, other) // before the join wrote it
	if err := os.MkdirAll(def, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(joined, []byte("ClusterName=j\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	check("joined now", Options{ConfPath: other, Join: "t"}, def, joined)
	check("restarted", Options{ConfPath: other}, def, joined)
	check("own state dir", Options{ConfPath: other, StateDir: def}, def, joined)
	// -f names the file: it wins.
	check("named", Options{ConfPath: other, ConfNamed: true}, "", other)
	check("named, own state dir", Options{ConfPath: other, ConfNamed: true, StateDir: def}, def, other)
	check("named but absent", Options{ConfPath: filepath.Join(tmp, "absent"), ConfNamed: true}, def, joined)
}
