package agent

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	pb "github.com/drover-hpc/drover/api/drover/v1"
	"github.com/drover-hpc/drover/internal/auth"
	"github.com/drover-hpc/drover/internal/auth/grpcauth"
	"github.com/drover-hpc/drover/internal/slurmconf"
)

// A node's credentials live in its state directory: tls/node.key,
// tls/node.crt and tls/ca.crt after a join, next to the slurm.conf and
// controller address the join brought. A node without them (drover up,
// or a machine that shares the controller's state directory) presents the
// cluster token instead, and verifies the controller with the CA file in
// the controller's state directory.

const (
	tlsDirName         = "tls"
	joinedConfName     = "slurm.conf"
	joinedControllerFn = "controller"
)

// DefaultStateDir is where an agent keeps what a join gave it.
const DefaultStateDir = "/var/lib/drover/agent"

// joinCluster trades the join token for the node's certificate, the CA and
// the cluster's slurm.conf, and writes them to dir.
func joinCluster(ctx context.Context, token, controller, node, dir string) error {
	sec, err := auth.ParseJoinSecret(token)
	if err != nil {
		return err
	}
	if controller == "" {
		return errors.New("--join needs --controller HOST:PORT")
	}
	if _, _, err := net.SplitHostPort(controller); err != nil {
		controller = net.JoinHostPort(controller, "6817")
	}
	keyPEM, csr, err := auth.NewNodeKey(node)
	if err != nil {
		return err
	}
	conn, err := grpc.NewClient("passthrough:///"+controller,
		grpc.WithTransportCredentials(credentials.NewTLS(auth.PinnedConfig(sec.CAHash))))
	if err != nil {
		return err
	}
	defer conn.Close()
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	resp, err := pb.NewAgentServiceClient(conn).Join(cctx, &pb.JoinRequest{TokenId: sec.ID, Secret: sec.Secret, Node: node, Csr: csr})
	if err != nil {
		return fmt.Errorf("join %s: %w", controller, err)
	}
	tdir := filepath.Join(dir, tlsDirName)
	if err := os.MkdirAll(tdir, 0o700); err != nil {
		return err
	}
	files := []struct {
		name string
		data []byte
		mode os.FileMode
	}{
		{filepath.Join(tdir, "node.key"), keyPEM, 0o600},
		{filepath.Join(tdir, "node.crt"), resp.CertPem, 0o644},
		{filepath.Join(tdir, "ca.crt"), resp.CaPem, 0o644},
		{filepath.Join(dir, joinedControllerFn), []byte(controller + "\n"), 0o644},
	}
	if resp.SlurmConf != "" {
		files = append(files, struct {
			name string
			data []byte
			mode os.FileMode
		}{filepath.Join(dir, joinedConfName), []byte(resp.SlurmConf), 0o644})
	}
	for _, f := range files {
		if err := os.WriteFile(f.name+".tmp", f.data, f.mode); err != nil {
			return err
		}
		if err := os.Rename(f.name+".tmp", f.name); err != nil {
			return err
		}
	}
	return nil
}

// agentStateDir is where the agent looks for what a join brought (see
// Options.StateDir); def is DefaultStateDir.
func agentStateDir(o Options, def string) string {
	switch {
	case o.StateDir != "":
		return o.StateDir
	case o.Join != "" || !fileExists(o.ConfPath):
		// A joined machine: `drover agent` alone finds what the join
		// brought. With a slurm.conf of its own and no join, the agent
		// uses the cluster token (drover up, shared state directory).
		return def
	case !o.ConfNamed && fileExists(filepath.Join(def, joinedConfName)):
		return def // joined before; the default slurm.conf is not this cluster's
	}
	return ""
}

// agentConfPath is the slurm.conf the agent runs with: the one its join
// fetched (configless), unless -f names another.
func agentConfPath(o Options, stateDir string) string {
	joined := filepath.Join(stateDir, joinedConfName)
	if stateDir != "" && fileExists(joined) && (!o.ConfNamed || o.ConfPath == "" || !fileExists(o.ConfPath)) {
		return joined
	}
	return o.ConfPath
}

// joinedController is the controller address a join recorded, if any.
func joinedController(dir string) string {
	if dir == "" {
		return ""
	}
	b, err := os.ReadFile(filepath.Join(dir, joinedControllerFn))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// transport picks the agent's credentials: its node certificate when it
// joined, else the cluster token (over TLS verified with the controller's
// CA file).
func transport(cfg *slurmconf.Config, stateDir, token, addr string) ([]grpc.DialOption, error) {
	host, _, _ := net.SplitHostPort(addr)
	tdir := filepath.Join(stateDir, tlsDirName)
	if pair, err := tls.LoadX509KeyPair(filepath.Join(tdir, "node.crt"), filepath.Join(tdir, "node.key")); stateDir != "" && err == nil {
		pool, err := loadPool(filepath.Join(tdir, "ca.crt"))
		if err != nil {
			return nil, err
		}
		return []grpc.DialOption{grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{
			Certificates: []tls.Certificate{pair}, RootCAs: pool, ServerName: host, MinVersion: tls.VersionTLS13,
		}))}, nil
	}
	if token == "" {
		var err error
		if token, err = auth.ReadToken(cfg.TokenPath()); err != nil {
			return nil, fmt.Errorf("no node certificate in %s and no cluster token: join with --join TOKEN (%v)", tdir, err)
		}
	}
	pool, err := loadPool(cfg.CAPath())
	if err != nil {
		return nil, err
	}
	return []grpc.DialOption{
		grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{RootCAs: pool, ServerName: host, MinVersion: tls.VersionTLS13})),
		grpc.WithPerRPCCredentials(grpcauth.TokenCreds(token)),
	}, nil
}

func loadPool(path string) (*x509.CertPool, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cluster CA: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("cluster CA: no certificate in %s", path)
	}
	return pool, nil
}
