// Package remote is the acct.Store of a controller whose accounting lives
// in a `drover dbd` shared by several clusters: the Store calls go over
// gRPC, authenticated by the dbd's key and pinned to the dbd's CA.
package remote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/status"

	pb "github.com/drover-hpc/drover/api/drover/v1"
	"github.com/drover-hpc/drover/internal/acct"
	"github.com/drover-hpc/drover/internal/auth"
	"github.com/drover-hpc/drover/internal/auth/grpcauth"
	"github.com/drover-hpc/drover/internal/wire"
)

// Key is what a controller needs to use a dbd: its secret and the
// fingerprint of its CA, printed as "<secret>.<sha256 hex>".
type Key struct {
	Secret string
	CAHash string // "sha256:<hex>"
}

func (k Key) String() string { return k.Secret + "." + strings.TrimPrefix(k.CAHash, "sha256:") }

// ParseKey reads a key as String writes it.
func ParseKey(s string) (Key, error) {
	secret, hash, ok := strings.Cut(strings.TrimSpace(s), ".")
	if !ok || len(secret) < 16 || len(hash) != 64 || strings.Contains(hash, ".") {
		return Key{}, errors.New("malformed dbd key (want SECRET.CAHASH, as `drover dbd` prints it; set it as AccountingStoragePass)")
	}
	return Key{Secret: secret, CAHash: "sha256:" + hash}, nil
}

// Store is a client of a dbd.
type Store struct {
	conn *grpc.ClientConn
	api  pb.AcctStoreClient
}

// Dial connects (lazily, as gRPC does) to the dbd at addr.
func Dial(addr string, key Key) (*Store, error) {
	conn, err := grpc.NewClient(addr,
		grpc.WithTransportCredentials(credentials.NewTLS(auth.PinnedConfig(key.CAHash))),
		grpc.WithPerRPCCredentials(grpcauth.TokenCreds(key.Secret)))
	if err != nil {
		return nil, err
	}
	return &Store{conn: conn, api: pb.NewAcctStoreClient(conn)}, nil
}

// mapErr marks the errors that mean the dbd (or its database) cannot be
// reached, so the controller's outbox keeps the records.
func mapErr(err error) error {
	if err == nil {
		return nil
	}
	switch status.Code(err) {
	case codes.Unavailable, codes.DeadlineExceeded, codes.Canceled:
		return fmt.Errorf("%w: dbd: %s", acct.ErrUnavailable, status.Convert(err).Message())
	}
	return fmt.Errorf("dbd: %s", status.Convert(err).Message())
}

func (s *Store) PutJobs(ctx context.Context, jobs []*acct.Job) error {
	req := &pb.PutAcctJobsRequest{Jobs: make([]*pb.AcctJob, len(jobs))}
	for i, j := range jobs {
		req.Jobs[i] = wire.AcctJobToPB(j)
	}
	_, err := s.api.PutJobs(ctx, req)
	return mapErr(err)
}

func (s *Store) Jobs(ctx context.Context, q acct.Query) ([]*acct.Job, error) {
	stream, err := s.api.Jobs(ctx, wire.AcctQueryToPB(q))
	if err != nil {
		return nil, mapErr(err)
	}
	var out []*acct.Job
	for {
		r, err := stream.Recv()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, mapErr(err)
		}
		for _, j := range r.Jobs {
			out = append(out, wire.AcctJobFromPB(j))
		}
	}
}

func (s *Store) Ping(ctx context.Context) error {
	_, err := s.api.Ping(ctx, &pb.AcctPingRequest{})
	return mapErr(err)
}

func (s *Store) Close() error { return s.conn.Close() }
