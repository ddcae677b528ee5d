package dbd

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/status"

	pb "github.com/drover-hpc/drover/api/drover/v1"
	"github.com/drover-hpc/drover/internal/acct"
	"github.com/drover-hpc/drover/internal/acct/remote"
	"github.com/drover-hpc/drover/internal/auth"
	"github.com/drover-hpc/drover/internal/auth/grpcauth"
	"github.com/drover-hpc/drover/internal/slurmconf"
	"github.com/drover-hpc/drover/internal/version"
	"github.com/drover-hpc/drover/internal/wire"
)

// Options configures a dbd process.
type Options struct {
	Conf  *slurmconf.DbdConf
	Store acct.Store
	Log   *slog.Logger
	// Listen overrides the listen address (default DbdAddr:DbdPort).
	Listen string
	// Ready, when set, is called with the bound address once serving.
	Ready func(addr string)
}

// KeyPath is where a dbd writes the key controllers need.
func KeyPath(c *slurmconf.DbdConf) string { return filepath.Join(c.StateDir, "dbd.key") }

// Run serves until ctx ends.
func Run(ctx context.Context, o Options) error {
	c := o.Conf
	if err := os.MkdirAll(c.StateDir, 0o700); err != nil {
		return err
	}
	secret, err := auth.LoadOrCreateToken(filepath.Join(c.StateDir, "dbd.token"))
	if err != nil {
		return err
	}
	ca, err := auth.LoadOrCreateCA(filepath.Join(c.StateDir, "ca"), "drover-dbd")
	if err != nil {
		return fmt.Errorf("dbd CA: %w", err)
	}
	host, _ := os.Hostname()
	hosts := []string{host, "localhost", "127.0.0.1", "::1", c.DbdHost, c.DbdAddr}
	if addrs, err := net.InterfaceAddrs(); err == nil {
		for _, a := range addrs {
			if ipn, ok := a.(*net.IPNet); ok {
				hosts = append(hosts, ipn.IP.String())
			}
		}
	}
	cert, err := ca.IssueServer(hosts)
	if err != nil {
		return fmt.Errorf("dbd certificate: %w", err)
	}
	key := remote.Key{Secret: secret, CAHash: ca.Fingerprint()}
	if err := os.WriteFile(KeyPath(c), []byte(key.String()+"\n"), 0o600); err != nil {
		return err
	}
	addr := o.Listen
	if addr == "" {
		addr = net.JoinHostPort(c.DbdAddr, strconv.Itoa(c.DbdPort))
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	// A connection must finish its handshake within MessageTimeout and
	// prove the key within twice that (grpcauth.Probation), and a proven
	// one idle for 5 minutes is closed: anyone reaching the port held
	// connections, each some 50 KiB of the dbd, for ever.
	timeout := time.Duration(max(c.MessageTimeout, 1)) * time.Second
	unproven := grpcauth.NewProbation(2 * timeout)
	g := grpc.NewServer(grpc.Creds(credentials.NewTLS(&tls.Config{
		Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS13})),
		grpc.ConnectionTimeout(timeout),
		grpc.KeepaliveParams(keepalive.ServerParameters{MaxConnectionIdle: 5 * time.Minute, Time: time.Minute, Timeout: 20 * time.Second}),
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: 10 * time.Second, PermitWithoutStream: true}))
	pb.RegisterAcctStoreServer(g, &server{store: o.Store, verifier: grpcauth.NewVerifier(secret), unproven: unproven})
	go func() { _ = g.Serve(unproven.Listener(l)) }()
	o.Log.Info("dbd ready", "addr", l.Addr().String(), "storage", c.Storage.Type,
		"key_file", KeyPath(c))
	if err := o.Store.Ping(ctx); err != nil {
		o.Log.Warn("database not reachable yet; the controllers keep their records until it is", "err", err)
	}
	if o.Ready != nil {
		o.Ready(l.Addr().String())
	}
	<-ctx.Done()
	stopped := make(chan struct{})
	go func() { g.GracefulStop(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(2 * time.Second):
		g.Stop()
	}
	return o.Store.Close()
}

type server struct {
	pb.UnimplementedAcctStoreServer
	store    acct.Store
	verifier *grpcauth.Verifier
	unproven *grpcauth.Probation
}

func (s *server) check(ctx context.Context) error {
	if !s.verifier.CheckToken(ctx) {
		return status.Error(codes.PermissionDenied, "Access/permission denied")
	}
	s.unproven.Proven(ctx)
	return nil
}

func storeErr(err error) error {
	if errors.Is(err, acct.ErrUnavailable) {
		return status.Error(codes.Unavailable, err.Error())
	}
	return status.Error(codes.Internal, err.Error())
}

func (s *server) PutJobs(ctx context.Context, r *pb.PutAcctJobsRequest) (*pb.PutAcctJobsResponse, error) {
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	jobs := make([]*acct.Job, len(r.Jobs))
	for i, j := range r.Jobs {
		jobs[i] = wire.AcctJobFromPB(j)
	}
	if err := s.store.PutJobs(ctx, jobs); err != nil {
		return nil, storeErr(err)
	}
	return &pb.PutAcctJobsResponse{}, nil
}

func (s *server) Jobs(r *pb.AcctJobsRequest, stream pb.AcctStore_JobsServer) error {
	if err := s.check(stream.Context()); err != nil {
		return err
	}
	jobs, err := s.store.Jobs(stream.Context(), wire.AcctQueryFromPB(r))
	if err != nil {
		return storeErr(err)
	}
	for len(jobs) > 0 {
		n := min(len(jobs), 2000)
		out := &pb.AcctJobsResponse{Jobs: make([]*pb.AcctJob, n)}
		for i, j := range jobs[:n] {
			out.Jobs[i] = wire.AcctJobToPB(j)
		}
		if err := stream.Send(out); err != nil {
			return err
		}
		jobs = jobs[n:]
	}
	return nil
}

func (s *server) Ping(ctx context.Context, _ *pb.AcctPingRequest) (*pb.AcctPingResponse, error) {
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	if err := s.store.Ping(ctx); err != nil {
		return nil, storeErr(err)
	}
	return &pb.AcctPingResponse{Version: version.Version}, nil
}
