// Package grpcauth is the gRPC side of establishing who calls: transport
// credentials that read a Unix socket caller's uid/gid from the kernel
// (SO_PEERCRED), the Verifier that turns a call's peer and metadata into
// an auth.Identity (local user, node certificate, cluster token), and the
// per-call token credentials of clients. Adapters (grpcapi, dbd) use it;
// the service never does: it gets the identity as a plain value.
package grpcauth

import (
	"context"
	"fmt"
	"net"
	"strings"

	"golang.org/x/sys/unix"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"

	"github.com/drover-hpc/drover/internal/auth"
)

// PeerInfo is the AuthInfo a connection carries after the handshake.
type PeerInfo struct {
	credentials.CommonAuthInfo
	Local    bool // came through the Unix socket; UID/GID are the kernel's word
	UID, GID uint32
	PID      int32
	// Conn is the connection as PeerCreds.Wrap returned it (nil: none).
	Conn net.Conn
}

// AuthType names the mechanism.
func (PeerInfo) AuthType() string { return "peercred" }

// PeerCreds is server-side gRPC transport credentials that read the
// caller's uid/gid from a Unix socket; TCP connections go through TLS when
// TLS is set (the controller's port: server certificate from the cluster
// CA, node certificates optional), else pass through unauthenticated.
// Either way a TCP call must carry the cluster token or come from a node
// certificate.
type PeerCreds struct {
	TLS credentials.TransportCredentials
	// Wrap, when set, wraps each Unix-socket connection once its peer is
	// known (the server counts what it writes to a user's connections).
	Wrap func(c net.Conn, uid uint32) net.Conn
}

// ServerHandshake reads SO_PEERCRED from Unix connections.
func (p PeerCreds) ServerHandshake(c net.Conn) (net.Conn, credentials.AuthInfo, error) {
	info := PeerInfo{CommonAuthInfo: credentials.CommonAuthInfo{SecurityLevel: credentials.NoSecurity}}
	uc, ok := c.(*net.UnixConn)
	if w, isWrapped := c.(interface{ Unix() *net.UnixConn }); !ok && isWrapped {
		// A listener's wrapper (a per-user count) around a Unix socket.
		uc, ok = w.Unix(), true
	}
	if !ok {
		if p.TLS != nil {
			return p.TLS.ServerHandshake(c)
		}
		return c, info, nil
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return nil, nil, err
	}
	var cred *unix.Ucred
	var serr error
	if err := raw.Control(func(fd uintptr) {
		cred, serr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return nil, nil, err
	}
	if serr != nil {
		return nil, nil, fmt.Errorf("SO_PEERCRED: %w", serr)
	}
	info.Local, info.UID, info.GID, info.PID = true, cred.Uid, cred.Gid, cred.Pid
	info.SecurityLevel = credentials.PrivacyAndIntegrity // the kernel vouches for a local socket
	if p.Wrap != nil {
		c = p.Wrap(c, cred.Uid)
		info.Conn = c
	}
	return c, info, nil
}

// ClientHandshake is unused: clients dial with insecure credentials.
func (PeerCreds) ClientHandshake(_ context.Context, _ string, c net.Conn) (net.Conn, credentials.AuthInfo, error) {
	return c, PeerInfo{}, nil
}

func (PeerCreds) Info() credentials.ProtocolInfo {
	return credentials.ProtocolInfo{SecurityProtocol: "peercred"}
}
func (p PeerCreds) Clone() credentials.TransportCredentials { return p }
func (PeerCreds) OverrideServerName(string) error           { return nil }

// Verifier turns a call's context into an Identity.
type Verifier struct {
	token string
	users auth.Users
}

// NewVerifier accepts the given cluster token on TCP calls.
func NewVerifier(token string) *Verifier { return &Verifier{token: token} }

// Identify returns the caller's identity or auth.ErrDenied.
func (v *Verifier) Identify(ctx context.Context) (*auth.Identity, error) {
	p, ok := peer.FromContext(ctx)
	if !ok {
		return nil, auth.ErrDenied
	}
	if info, ok := p.AuthInfo.(PeerInfo); ok && info.Local {
		return v.users.Local(info.UID, info.GID), nil
	}
	if tlsInfo, ok := p.AuthInfo.(credentials.TLSInfo); ok {
		if node, ok := auth.NodeOf(&tlsInfo.State); ok {
			return auth.NodeIdentity(node), nil
		}
	}
	if v.CheckToken(ctx) {
		return auth.Cluster(), nil
	}
	return nil, auth.ErrDenied
}

// CheckToken reports whether the call carries the cluster token.
func (v *Verifier) CheckToken(ctx context.Context) bool {
	md, _ := metadata.FromIncomingContext(ctx)
	for _, h := range md.Get("authorization") {
		if tok, ok := strings.CutPrefix(h, "Bearer "); ok && auth.TokenMatches(v.token, tok) {
			return true
		}
	}
	return false
}

// TokenCreds attaches the cluster token to every call of a client.
type TokenCreds string

func (t TokenCreds) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + string(t)}, nil
}
func (TokenCreds) RequireTransportSecurity() bool { return false }
